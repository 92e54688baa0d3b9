"""`skill_trigger` as a dataset configures it: load errors (exact, located), AgentV's default name,
and results from the target's output messages, hostile ones included (never raise, never pass)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentv_py.errors import ConfigError
from agentv_py.evaluators import run_evaluator
from agentv_py.evaluators.base import EvalContext
from agentv_py.loading import load_dataset
from agentv_py.models.results import Trace
from agentv_py.models.trace_evaluators import SkillTriggerConfig


def load_evaluator(ws, evaluator: str):
    ws.dataset(f"execution:\n  evaluators:\n    - {evaluator}\nevalcases:\n  - id: c1\n    input: hi\n")
    return load_dataset("dataset.yaml").cases[0].evaluators[0]


AT = "dataset.yaml:3: execution.evaluators[0]"
INVALID = [
    ("skill-missing", "{type: skill_trigger}", f"{AT}.skill: missing required key 'skill'"),
    ("skill-empty", "{type: skill_trigger, skill: ''}", f"{AT}.skill: skill must name a skill (a non-empty string)"),
    ("skill-blank", "{type: skill_trigger, skill: '  '}", f"{AT}.skill: skill must name a skill (a non-empty string)"),
    ("skill-a-number", "{type: skill_trigger, skill: 3}", f"{AT}.skill: input should be a valid string, got number 3"),
    (
        "should-trigger-a-string",
        "{type: skill_trigger, skill: a, should_trigger: 'no'}",
        f'{AT}.should_trigger: input should be a valid boolean, got string "no"',
    ),
    (
        "camel-case-key",
        "{type: skill_trigger, skill: a, shouldTrigger: false}",
        f"{AT}.shouldTrigger: unknown key 'shouldTrigger' (did you mean 'should_trigger'?). Valid keys: name, "
        "weight, pass_threshold, negate, id, type, skill, should_trigger",
    ),
]


@pytest.mark.parametrize(("evaluator", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_configs_are_located_load_errors(ws, evaluator: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_evaluator(ws, evaluator)
    assert [str(p) for p in caught.value.problems] == [message]


NAMES = [
    ("agentv-default", "{type: skill_trigger, skill: csv-analyzer}", "skill-trigger-csv-analyzer", True),
    ("given", "{name: uses-csv, type: skill_trigger, skill: csv-analyzer, should_trigger: false}", "uses-csv", False),
]


@pytest.mark.parametrize(("evaluator", "name", "should"), [c[1:] for c in NAMES], ids=[c[0] for c in NAMES])
def test_names_and_defaults(ws, evaluator: str, name: str, should: bool) -> None:
    config = load_evaluator(ws, evaluator)
    assert isinstance(config, SkillTriggerConfig)
    assert (config.display_name, config.should_trigger) == (name, should)


def context(messages: Any, trace: Trace | None = None, answer: str = "done") -> EvalContext:
    return EvalContext(
        eval_id="c1", dataset="d", dataset_dir=Path("."), answer=answer, expected=None,
        output_messages=messages, trace=trace,
    )  # fmt: skip


def assistant(*calls: Any) -> list[Any]:
    return [{"role": "user", "content": "go"}, {"role": "assistant", "content": "ok", "tool_calls": list(calls)}]


SKILL_CALL = {"tool": "Skill", "input": {"skill": "csv-analyzer"}, "output": None}
RESULTS = [
    ("triggered", {}, assistant(SKILL_CALL), None, 1.0, ['Skill tool invoked with skill="csv-analyzer"'], []),
    (
        "calls-over-several-messages",
        {},
        [{"role": "assistant", "tool_calls": [{"tool": "Bash"}]}, *assistant({"tool": "Glob"})],
        None,
        0.0,
        [],
        ['Skill "csv-analyzer" not found in 2 tool call(s)'],
    ),
    ("nothing-reported", {}, None, None, 0.0, [], ["No tool calls recorded"]),
    ("plain-answer", {}, None, Trace(duration_ms=5), 0.0, [], ["No tool calls recorded"]),
    (
        "plain-answer-should-not",
        {"should_trigger": False},
        None,
        Trace(duration_ms=5),
        1.0,
        ['Skill "csv-analyzer" correctly did not trigger'],
        [],
    ),
    (
        "negated",
        {"negate": True},
        assistant(SKILL_CALL),
        None,
        0.0,
        [],
        ['Skill tool invoked with skill="csv-analyzer"'],
    ),
    (
        "unreadable-name",
        {"should_trigger": False},
        assistant(SKILL_CALL, {"tool": 42}),
        None,
        0.0,
        [],
        ["Tool calls not readable: output_messages[1].tool_calls[1].tool is not a string (got number 42)"],
    ),
    (
        "calls-not-a-list",
        {},
        [{"role": "assistant", "tool_calls": "Skill"}],
        None,
        0.0,
        [],
        ["Tool calls not readable: output_messages[0].tool_calls is not a list (got string)"],
    ),
    ("messages-not-objects", {}, ["Skill", 3, None], None, 0.0, [], ["No tool calls recorded"]),
]


@pytest.mark.parametrize(
    ("extra", "messages", "trace", "score", "hits", "misses"), [c[1:] for c in RESULTS], ids=[c[0] for c in RESULTS]
)
def test_results(extra: dict[str, Any], messages: Any, trace: Trace | None, score: float, hits, misses) -> None:
    config = SkillTriggerConfig(type="skill_trigger", skill="csv-analyzer", **extra)
    result = run_evaluator(config, context(messages, trace))
    assert (result.status, result.name, result.type) == ("processed", "skill-trigger-csv-analyzer", "skill_trigger")
    assert (result.score, result.hits, result.misses) == (score, hits, misses)
    assert result.verdict == ("pass" if score == 1.0 else "fail")


def test_its_own_pass_mark_fails_the_case_and_details_say_what_was_seen() -> None:
    config = SkillTriggerConfig(type="skill_trigger", skill="pdf", weight=2.0, pass_threshold=1.0)
    result = run_evaluator(config, context(assistant(SKILL_CALL)))
    assert (result.score, result.weight, result.verdict) == (0.0, 2.0, "fail")
    assert result.misses == ["score 0.000 < its pass_threshold 1", 'Skill "pdf" not found in 1 tool call(s)']
    seen = {"skill": "pdf", "should_trigger": True, "triggered": False, "tool_calls": 1, "pass_threshold": 1.0}
    assert result.details == seen
