"""The case verdict, in one place: pass thresholds, an evaluator's verdict, hard failures, and a
case's score and verdict from its evaluator results (SPEC §4.1).

Pure, and only the standard library at run time: the judge SDK (`agentv_py.judge`), which runs
in judges' own interpreters, reads `PASS_THRESHOLD` from here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from agentv_py.scoring.thresholds import at_least

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentv_py.models.results import EvaluatorResult, Verdict

PASS_THRESHOLD = 0.8
"""A score at or above this passes (a case, an evaluator, a judge result without `passed`)."""
PARTIAL_THRESHOLD = 0.6
"""A score at or above this, and below PASS_THRESHOLD, is partial; below it fails."""


def verdict_for(score: float) -> Verdict:
    """pass (score >= 0.8), partial (0.6 <= score < 0.8), fail (< 0.6); float noise forgiven
    (`scoring.thresholds`: weights .1 + .7 right is 0.8, a pass)."""
    if at_least(score, PASS_THRESHOLD):
        return "pass"
    if at_least(score, PARTIAL_THRESHOLD):
        return "partial"
    return "fail"


def is_hard_failure(result: EvaluatorResult) -> bool:
    """A processed result that fails although its score alone would pass or be partial (a
    required rubric item not met): it fails its case too."""
    return result.status == "processed" and result.verdict == "fail" and verdict_for(result.score or 0.0) != "fail"


def case_score(results: Sequence[EvaluatorResult]) -> float:
    """Weighted mean over processed and errored results (skipped excluded; all weights 0 -> 0).
    An errored evaluator counts with score 0: an error never inflates a case."""
    counted = [r for r in results if r.status != "skipped"]
    total_weight = math.fsum(r.weight for r in counted)
    if total_weight <= 0:
        return 0.0
    return math.fsum((r.score or 0.0) * r.weight for r in counted) / total_weight


class CaseVerdict:
    """A case's score and verdict, and whether any evaluator produced a score at all."""

    __slots__ = ("score", "verdict", "scored")

    def __init__(self, score: float, verdict: Verdict, scored: bool) -> None:
        self.score = score
        self.verdict: Verdict = verdict
        self.scored = scored

    def __repr__(self) -> str:
        return f"CaseVerdict(score={self.score!r}, verdict={self.verdict!r}, scored={self.scored!r})"


def case_verdict(results: Sequence[EvaluatorResult]) -> CaseVerdict:
    """The case's score (`case_score`) and verdict: the score's verdict, except that a case fails
    when no evaluator produced a score (all skipped, or none) or one failed hard."""
    score = case_score(results)
    scored = any(r.status != "skipped" for r in results)
    failed_hard = any(is_hard_failure(r) for r in results)
    return CaseVerdict(score, verdict_for(score) if scored and not failed_hard else "fail", scored)
