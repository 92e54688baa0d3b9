"""`composite` with AgentV v4.42's `threshold` aggregator: score = members that pass / members
that produced a score, passing when it reaches `threshold`; AgentV's summary line first."""

from __future__ import annotations

import pytest

from agentv_py.evaluators import run_evaluator
from agentv_py.models.evaluators import CompositeConfig
from agentv_py.scoring.case import case_verdict
from tests.evaluators.test_composite import BROKEN, HALF, RIGHT, SKIPS, WRONG, composite, context

# id, members, threshold, score, passed, first hit or miss
RUNS = [
    ("all-pass", [RIGHT, {**RIGHT, "name": "right2"}], 1.0, 1.0, True, "2/2 evaluators passed (threshold: 1)"),
    ("half-meets-half", [RIGHT, WRONG], 0.5, 0.5, True, "1/2 evaluators passed (threshold: 0.5)"),
    ("half-under-0.6", [RIGHT, WRONG], 0.6, 0.5, False, "1/2 evaluators passed (threshold: 0.6)"),
    ("a-half-score-is-no-pass", [RIGHT, HALF], 0.75, 0.5, False, "1/2 evaluators passed (threshold: 0.75)"),
    ("skipped-left-out", [RIGHT, SKIPS], 1.0, 1.0, True, "1/1 evaluators passed (threshold: 1)"),
    ("threshold-0-always-met", [WRONG], 0, 0.0, True, "0/1 evaluators passed (threshold: 0)"),
]


@pytest.mark.parametrize(
    ("members", "threshold", "score", "passed", "summary"), [r[1:] for r in RUNS], ids=[r[0] for r in RUNS]
)
def test_threshold_aggregator(tmp_path, members, threshold, score, passed, summary):
    config = composite(members, {"type": "threshold", "threshold": threshold})
    result = run_evaluator(config, context(tmp_path))
    assert (result.status, result.score, result.passed) == ("processed", score, passed)
    assert (result.hits if passed else result.misses)[0] == summary
    assert result.reasoning.startswith(summary)
    assert result.details["aggregator"] == {"type": "threshold", "threshold": threshold}
    assert len(result.evaluator_results) == len(members)


def test_member_texts_are_prefixed_and_the_case_counts_the_score(tmp_path):
    result = run_evaluator(composite([RIGHT, WRONG], {"type": "threshold", "threshold": 0.5}), context(tmp_path))
    assert result.hits[0] == "1/2 evaluators passed (threshold: 0.5)"
    assert all(text.startswith("[right] ") for text in result.hits[1:])
    assert result.misses and all(text.startswith("[wrong] ") for text in result.misses)
    # as AgentV: the case score is the composite's score (0.5), whatever its own pass
    assert (result.verdict, case_verdict([result]).verdict) == ("fail", "fail")


def test_a_pass_threshold_on_the_composite_makes_it_a_gate(tmp_path):
    config = composite([RIGHT, WRONG], {"type": "threshold", "threshold": 0.5}, pass_threshold=0.5)
    result = run_evaluator(config, context(tmp_path))
    assert (result.score, result.verdict) == (0.5, "pass")


def test_a_member_error_is_the_composites_error(tmp_path):
    result = run_evaluator(composite([RIGHT, BROKEN], {"type": "threshold", "threshold": 0.5}), context(tmp_path))
    assert (result.status, result.score) == ("error", 0.0)


CONFIG_ERRORS = [
    ("no-threshold", {"type": "threshold"}, "a threshold aggregator needs 'threshold': the share of members (0-1)"),
    ("over-1", {"type": "threshold", "threshold": 1.5}, "threshold must be between 0 and 1, got 1.5"),
    ("not-a-number", {"type": "threshold", "threshold": "half"}, "Input should be a valid number"),
    (
        "foreign-option",
        {"type": "threshold", "threshold": 0.5, "weights": {"right": 1}},
        "option 'weights' does not apply to aggregator type 'threshold' (options for 'threshold': threshold)",
    ),
    (
        "threshold-on-weighted-average",
        {"type": "weighted_average", "threshold": 0.5},
        "option 'threshold' does not apply to aggregator type 'weighted_average' (options for 'weighted_average': "
        "weights)",
    ),
]


@pytest.mark.parametrize(("aggregator", "message"), [c[1:] for c in CONFIG_ERRORS], ids=[c[0] for c in CONFIG_ERRORS])
def test_config_errors(aggregator, message):
    with pytest.raises(ValueError) as info:
        CompositeConfig.model_validate(
            {"type": "composite", "name": "gate", "evaluators": [RIGHT, WRONG], "aggregator": aggregator}
        )
    assert message in str(info.value)
