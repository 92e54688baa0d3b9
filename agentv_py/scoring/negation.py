"""`negate: true` on any evaluator, in one place: AgentV v4.42.4's `negateScore`, which its
orchestrator applies after every grader. The score becomes 1 - score, each assertion's passed
flag flips (a hit becomes a miss with the same text, and a miss a hit), and the verdict follows.

Two differences from AgentV, both so that "could not score" never turns into a pass: an error
result stays an error (AgentV negated its failed grader's 0 into a 1), and a skipped result stays
skipped (as AgentV's `skip` verdict did). The verdict is the negated score's (`verdict_for`), where
AgentV swapped pass and fail: for a 0/1 check the two agree."""

from __future__ import annotations

from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.case import verdict_for

NEGATED = " (negated)"
"""What a negated result's reasoning ends with."""


def negate_result(result: EvaluatorResult) -> EvaluatorResult:
    """`result` negated: score 1 - score, hits and misses swapped, verdict and `passed` from the
    new score, reasoning ending in ` (negated)`, `details.negated` true. A failure for more than
    the score (a required rubric item) is a failed assertion like any other, so it flips too. An
    error or skipped result is returned as it is."""
    if result.status != "processed" or result.score is None:
        return result
    score = min(1.0, max(0.0, 1.0 - result.score))
    verdict = verdict_for(score)
    reasoning = f"{result.reasoning}{NEGATED}" if result.reasoning else NEGATED.strip()
    negated = result.model_copy(
        update={
            "score": score,
            "verdict": verdict,
            "passed": verdict == "pass",
            "hits": list(result.misses),
            "misses": list(result.hits),
            "reasoning": reasoning,
            "details": {**result.details, "negated": True},
        }
    )
    negated._failed_hard = False  # the copy fails as its new score says, not as the original did
    return negated
