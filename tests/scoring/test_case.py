"""The case verdict: thresholds, hard failures, skipped and errored evaluators (scoring/case.py)."""

from __future__ import annotations

import pytest

from agentv_py.evaluators.base import error_result, processed_result, skipped_result
from agentv_py.scoring.case import PARTIAL_THRESHOLD, PASS_THRESHOLD, case_verdict, is_hard_failure, verdict_for


def ok(score: float, weight: float = 1.0, **kwargs):
    return processed_result(name="e", type="t", score=score, weight=weight, **kwargs)


ERR = error_result(name="e", type="t", message="broke")
SKIP = skipped_result(name="e", type="t", reasoning="nothing to check")
REQUIRED_FAILED = ok(0.9, verdict="fail", passed=False)  # a required rubric item not met

VERDICTS = [
    ("pass-at-threshold", PASS_THRESHOLD, "pass"),
    ("partial-just-below-pass", 0.7999, "partial"),
    ("pass-at-threshold-with-float-noise", 0.1 + 0.7, "pass"),
    ("partial-at-threshold", PARTIAL_THRESHOLD, "partial"),
    ("fail-below-partial", 0.5999, "fail"),
    ("perfect", 1.0, "pass"),
    ("zero", 0.0, "fail"),
]


@pytest.mark.parametrize("score, verdict", [c[1:] for c in VERDICTS], ids=[c[0] for c in VERDICTS])
def test_verdict_for(score, verdict):
    assert verdict_for(score) == verdict


CASES = [
    ("one-passing", [ok(1.0)], 1.0, "pass", True),
    ("weighted-mean", [ok(1.0, weight=3), ok(0.0, weight=1)], 0.75, "partial", True),
    ("error-counts-as-zero", [ok(1.0), ERR], 0.5, "fail", True),
    ("skipped-is-excluded", [ok(0.9), SKIP], 0.9, "pass", True),
    ("all-skipped-fails", [SKIP, SKIP], 0.0, "fail", False),
    ("no-evaluators-fails", [], 0.0, "fail", False),
    ("all-weights-zero", [ok(1.0, weight=0)], 0.0, "fail", True),
    ("hard-failure-fails-the-case", [ok(1.0), REQUIRED_FAILED], 0.95, "fail", True),
]


@pytest.mark.parametrize("results, score, verdict, scored", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_case_verdict(results, score, verdict, scored):
    got = case_verdict(results)
    assert (round(got.score, 6), got.verdict, got.scored) == (score, verdict, scored)


def test_hard_failure_is_only_a_fail_that_the_score_would_not_give():
    assert is_hard_failure(REQUIRED_FAILED)
    assert not is_hard_failure(ok(0.2))  # an ordinary fail
    assert not is_hard_failure(ERR)


def test_the_judge_sdk_uses_the_same_threshold():
    import agentv_py.judge as sdk

    assert sdk.JudgeResult(score=PASS_THRESHOLD).is_pass()
    assert sdk.JudgeResult(score=0.1 + 0.7).is_pass()  # 0.7999999999999999: float noise, forgiven
    assert not sdk.JudgeResult(score=PASS_THRESHOLD - 1e-6).is_pass()


def test_weights_that_add_up_to_the_threshold_pass():
    """Weights .1/.7/.2 with the first two fields right: 0.1 + 0.7 = 0.7999999999999999 in binary."""
    found = case_verdict([ok(1.0, weight=0.1), ok(1.0, weight=0.7), ok(0.0, weight=0.2)])
    assert (found.score, found.verdict) == (pytest.approx(0.8), "pass")
