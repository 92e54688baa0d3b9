"""`negate: true` on every evaluator type (AgentV v4.42.4's orchestrator applies `negateScore`
after any grader): score 1 - score, hits and misses swapped, the verdict from the new score,
applied before the evaluator's own `pass_threshold`. An error or a skipped result is never
negated into a pass. And `id`, AgentV's label for a grader: kept, changing nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentv_py.evaluators import run_evaluator
from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.models.evaluators import EVALUATOR_CONFIG_TYPES
from agentv_py.models.results import Trace
from agentv_py.scoring.negation import negate_result

MODELS = {cls.model_fields["type"].annotation.__args__[0]: cls for cls in EVALUATOR_CONFIG_TYPES}


def config(raw: dict[str, Any]) -> Any:
    return MODELS[raw["type"]].model_validate(raw)


def context(answer: Any = "", expected: Any = None, **extra: Any) -> EvalContext:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return EvalContext("c1", "d", Path("."), text, expected, **extra)


CALLS = [{"role": "assistant", "tool_calls": [{"tool": "search", "input": {"q": "x"}}]}]
# id, config, context, (score, verdict, hits, misses) of the negated result
TYPES = [
    (
        "field-accuracy-half-right",
        {"type": "field_accuracy", "fields": [{"path": "a"}, {"path": "b"}]},
        context({"a": 1, "b": 3}, {"a": 1, "b": 2}),
        0.5,
        "fail",
    ),
    ("latency-met", {"type": "latency", "threshold": 100}, context("x", trace=Trace(duration_ms=50)), 0.0, "fail"),
    ("latency-over", {"type": "latency", "threshold": 10}, context("x", trace=Trace(duration_ms=50)), 1.0, "pass"),
    (
        "trajectory-quarter",
        {"type": "tool_trajectory", "mode": "any_order", "minimums": {"search": 1, "a": 1, "b": 1, "c": 1}},
        context("x", output_messages=CALLS),
        0.75,
        "partial",
    ),
    ("check-miss", {"type": "contains", "value": "zzz"}, context("abc"), 1.0, "pass"),
]


@pytest.mark.parametrize(("raw", "ctx", "score", "verdict"), [t[1:] for t in TYPES], ids=[t[0] for t in TYPES])
def test_negate_inverts_any_evaluator(raw, ctx, score, verdict):
    plain = run_evaluator(config(raw), ctx)
    negated = run_evaluator(config({**raw, "negate": True}), ctx)
    assert (negated.score, negated.verdict, negated.passed) == (score, verdict, verdict == "pass")
    assert plain.score == pytest.approx(1 - score)
    assert (negated.hits, negated.misses) == (plain.misses, plain.hits)
    assert negated.details == {**plain.details, "negated": True}
    assert negated.reasoning == (f"{plain.reasoning} (negated)" if plain.reasoning else "(negated)")


RESULTS = [
    (
        "processed",
        processed_result(name="e", type="t", score=0.25, hits=["h"], misses=["m"], reasoning="r"),
        (0.75, "partial", False, ["m"], ["h"], "r (negated)"),
    ),
    (
        "no-reasoning",
        processed_result(name="e", type="t", score=1.0, hits=["h"]),
        (0.0, "fail", False, [], ["h"], "(negated)"),
    ),
    (
        "zero",
        processed_result(name="e", type="t", score=0.0, misses=["m"]),
        (1.0, "pass", True, ["m"], [], "(negated)"),
    ),
]


@pytest.mark.parametrize(("result", "expected"), [r[1:] for r in RESULTS], ids=[r[0] for r in RESULTS])
def test_negate_result(result, expected):
    negated = negate_result(result)
    assert (negated.score, negated.verdict, negated.passed, negated.hits, negated.misses, negated.reasoning) == expected
    assert negated.details["negated"] is True


NEVER = [
    ("error", error_result(name="e", type="t", message="boom")),
    ("skipped", skipped_result(name="e", type="t", reasoning="nothing to check")),
]


@pytest.mark.parametrize("result", [r[1] for r in NEVER], ids=[r[0] for r in NEVER])
def test_an_error_or_a_skip_is_never_negated(result):
    assert negate_result(result) == result


def test_a_hard_failure_is_negated_like_any_other_fail():
    failed = processed_result(name="e", type="rubric", score=0.9, verdict="fail")
    assert failed.failed_hard
    negated = negate_result(failed)
    assert (negated.score, negated.verdict, negated.failed_hard) == (pytest.approx(0.1), "fail", False)


def test_an_evaluator_error_stays_an_error_when_negated():
    # an unusable schema cannot be applied: the error is not turned into a 1
    raw = {"type": "is_json", "schema": {"$ref": "other.json"}, "negate": True}
    result = run_evaluator(config(raw), context("{}"))
    assert (result.status, result.score, result.passed) == ("error", 0.0, False)
    assert "negated" not in result.details


def test_the_pass_threshold_reads_the_negated_score():
    raw = {"type": "field_accuracy", "fields": [{"path": "a"}, {"path": "b"}], "negate": True, "pass_threshold": 0.9}
    result = run_evaluator(config(raw), context({"a": 1, "b": 2}, {"a": 1, "b": 3}))
    assert (result.score, result.verdict, result.details["pass_threshold"]) == (0.5, "fail", 0.9)
    assert result.misses[0] == "score 0.500 < its pass_threshold 0.9"


def test_a_negated_composite_member_is_negated_inside_the_composite():
    raw = {
        "type": "composite",
        "evaluators": [
            {"name": "has-x", "type": "contains", "value": "x"},
            {"name": "no-error", "type": "contains", "value": "error", "negate": True},
        ],
        "aggregator": {"type": "weighted_average"},
    }
    result = run_evaluator(config(raw), context("x marks the spot"))
    assert result.score == 1.0
    assert [r.details.get("negated", False) for r in result.evaluator_results] == [False, True]


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_every_evaluator_type_takes_negate_and_id(kind):
    fields = MODELS[kind].model_fields
    assert fields["negate"].default is False and fields["id"].default is None


def test_id_is_kept_and_changes_nothing():
    plain = run_evaluator(config({"type": "contains", "value": "a"}), context("a"))
    labelled = config({"type": "contains", "value": "a", "id": "HAS_A"})
    assert labelled.id == "HAS_A"
    assert run_evaluator(labelled, context("a")) == plain
