"""Property: field_accuracy never raises, whatever JSON the target and the dataset hold."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.field_accuracy import truth_problems
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from("abcx"), children, max_size=4),
    max_leaves=20,
)

CONFIG = FieldAccuracyConfig.model_validate(
    {
        "type": "field_accuracy",
        "fields": [
            {"path": "a", "match": "exact"},
            {"path": "b", "match": "numeric_tolerance", "tolerance": 0.5, "relative": True},
            {"path": "c", "match": "fuzzy", "algorithm": "jaro_winkler"},
            {"path": "x", "match": "date"},
            {"path": "a.b[0].c", "match": "numeric_tolerance", "tolerance": 1},
            {"path": "b[1]", "match": "fuzzy"},
            {"path": "x..y", "match": "exact"},
        ],
    }
)


@settings(max_examples=300, deadline=None)
@given(candidate=json_values, expected=json_values)
def test_field_accuracy_never_raises(candidate, expected):
    answer = json.dumps(candidate)  # NaN/Infinity give non-standard JSON: the parser must cope
    result = run_evaluator(CONFIG, EvalContext("c", "d", Path("."), answer, expected))
    _check(result, expected)
    if result.status == "processed":
        assert 0.0 <= result.score <= 1.0
    json.dumps(result.model_dump())  # the result is always serialisable


def _check(result, expected):
    """Processed or skipped; an error only for ground truth its matcher cannot use (and then
    it says which case and field), never an internal error."""
    problems = truth_problems(CONFIG, expected)
    if problems:
        assert result.status == "error"
        assert result.reasoning == "; ".join(f"case 'c', field '{path}': cannot score: {why}" for path, why in problems)
    else:
        assert result.status in {"processed", "skipped"}


@settings(max_examples=200, deadline=None)
@given(answer=st.text(max_size=200), expected=json_values)
def test_field_accuracy_never_raises_on_arbitrary_text(answer, expected):
    result = run_evaluator(CONFIG, EvalContext("c", "d", Path("."), answer, expected))
    _check(result, expected)


class _ScriptedJudge:
    """A ChatClient replying with whatever hypothesis generated."""

    name = "stub"
    vision = True

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def complete(self, messages):
        from agentv_py.chat import ChatReply

        return ChatReply(self.reply)


def _judge_replies():
    dims = st.fixed_dictionaries(
        {"dimensions": st.dictionaries(st.sampled_from(["accuracy", "clarity", "x"]), json_values, max_size=3)}
    )
    checks = st.fixed_dictionaries(
        {
            "checks": st.lists(
                st.fixed_dictionaries({"id": st.sampled_from(["r1", "r2", "zz"]), "satisfied": json_values}), max_size=3
            )
        }
    )
    scored = st.fixed_dictionaries({"score": json_values}, optional={"hits": json_values, "details": json_values})
    structured = (json_values | dims | checks | scored).map(json.dumps)
    return structured | structured.map(lambda s: f"```json\n{s}\n```") | st.text(max_size=80)


JUDGE_CONFIGS = [
    LlmJudgeConfig.model_validate({"type": "llm_judge"}),
    LlmJudgeConfig.model_validate({"type": "llm_judge", "dimensions": {"accuracy": 3, "clarity": 1}}),
    RubricConfig.model_validate(
        {"type": "rubric", "rubrics": ["a", {"id": "r2", "description": "b", "required": False}]}
    ),
]


@settings(max_examples=300, deadline=None)
@given(reply=_judge_replies(), answer=st.text(max_size=40), which=st.sampled_from(range(len(JUDGE_CONFIGS))))
def test_llm_judges_never_raise_and_never_guess(reply, answer, which):
    context = EvalContext(
        "c", "d", Path("."), answer, None, judges={"stub": _ScriptedJudge(reply)}, default_judge="stub"
    )
    result = run_evaluator(JUDGE_CONFIGS[which], context)
    assert result.status in {"processed", "error"}
    assert not any("internal error" in miss for miss in result.misses), result.misses
    if result.status == "processed":
        assert 0.0 <= result.score <= 1.0
    json.dumps(result.model_dump())
