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


def verdict_for(score: float, mark: float = PASS_THRESHOLD) -> Verdict:
    """pass (score >= mark, 0.8 unless a dataset's `pass_threshold` says otherwise), partial
    (0.6 <= score < mark), fail (< 0.6); float noise forgiven (`scoring.thresholds`: weights
    .1 + .7 right is 0.8, a pass)."""
    if at_least(score, mark):
        return "pass"
    if at_least(score, PARTIAL_THRESHOLD):
        return "partial"
    return "fail"


def is_hard_failure(result: EvaluatorResult, mark: float = PASS_THRESHOLD) -> bool:
    """A processed result that fails for more than its score, and so fails its case too: a
    required rubric item not met, a critical field missed (`details.failed_critical`), an
    aggregator's fail (`failed_hard`, set by `evaluators.base.processed_result`), or an evaluator
    under its own explicit `pass_threshold` (`details.pass_threshold`). A result built elsewhere
    fails hard when it fails although its score would pass or be partial."""
    if result.status != "processed" or result.verdict != "fail":
        return False
    if result.failed_hard or "failed_critical" in result.details or "pass_threshold" in result.details:
        return True
    return verdict_for(result.score or 0.0, mark) != "fail"  # a result built elsewhere: its score would not fail


def with_pass_mark(result: EvaluatorResult, mark: float, explicit: bool) -> EvaluatorResult:
    """`result` graded against `mark`. An evaluator's own (`explicit`) mark: pass at or over it,
    else fail, and the case with it (`details.pass_threshold` records the mark). The dataset's
    mark only grades it (pass, partial, fail). A result failed for more than its score stays
    failed; a `passed` its judge set against the score's verdict is kept."""
    score = result.score
    if result.status != "processed" or score is None or (not explicit and mark == PASS_THRESHOLD):
        return result
    hard = is_hard_failure(result)
    update: dict[str, object] = {}
    if explicit:
        below = not at_least(score, mark)
        verdict: Verdict = "fail" if hard or below else "pass"
        update["details"] = {**result.details, "pass_threshold": mark}
        if below:  # said first, where a case's misses are read: why a good score failed
            said = f"score {score:.3f} < its pass_threshold {mark:g}"
            update["misses"] = [said, *result.misses]
            update["reasoning"] = f"{result.reasoning}; {said}" if result.reasoning else said
    else:
        verdict = "fail" if hard else verdict_for(score, mark)
    overridden = result.passed != (result.verdict == "pass")
    update.update(verdict=verdict, passed=result.passed if overridden else verdict == "pass")
    graded = result.model_copy(update=update)
    if verdict == "fail" and (hard or explicit):
        graded.mark_failed_hard()
    return graded


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


def case_verdict(results: Sequence[EvaluatorResult], mark: float = PASS_THRESHOLD) -> CaseVerdict:
    """The case's score (`case_score`) and verdict against the dataset's pass mark: the score's
    verdict, except that a case fails when no evaluator produced a score (all skipped, or none)
    or one failed hard (`is_hard_failure`)."""
    score = case_score(results)
    scored = any(r.status != "skipped" for r in results)
    failed_hard = any(is_hard_failure(r, mark) for r in results)
    return CaseVerdict(score, verdict_for(score, mark) if scored and not failed_hard else "fail", scored)
