"""Result models (SPEC §3 intro, §4.1): one evaluator result shape, one row shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["pass", "partial", "fail"]
EvaluatorStatus = Literal["processed", "error", "skipped"]
CaseStatus = Literal["ok", "error"]

PASS_THRESHOLD = 0.8
PARTIAL_THRESHOLD = 0.6


def verdict_for(score: float) -> Verdict:
    """pass (score >= 0.8), partial (0.6 <= score < 0.8), fail (< 0.6)."""
    if score >= PASS_THRESHOLD:
        return "pass"
    if score >= PARTIAL_THRESHOLD:
        return "partial"
    return "fail"


class _Result(BaseModel):
    # Results are produced by us and read back from files written by other versions:
    # unknown keys are ignored on read, never silently invented on write.
    model_config = ConfigDict(extra="ignore")


class EvaluatorResult(_Result):
    """The one result every evaluator returns, whatever its type."""

    name: str
    type: str
    status: EvaluatorStatus
    score: float | None
    passed: bool
    verdict: Verdict | None
    weight: float = 1.0
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def processed(
        cls,
        *,
        name: str,
        type: str,
        score: float,
        weight: float = 1.0,
        hits: list[str] | None = None,
        misses: list[str] | None = None,
        reasoning: str = "",
        details: dict[str, Any] | None = None,
        passed: bool | None = None,
        verdict: Verdict | None = None,
    ) -> EvaluatorResult:
        """A score in [0, 1]. `verdict` overrides the score's verdict only to fail a hard
        requirement (a required rubric item); such a result fails its case too."""
        verdict = verdict or verdict_for(score)
        return cls(
            name=name,
            type=type,
            status="processed",
            score=score,
            passed=(verdict == "pass") if passed is None else passed,
            verdict=verdict,
            weight=weight,
            hits=hits or [],
            misses=misses or [],
            reasoning=reasoning,
            details=details or {},
        )

    @classmethod
    def error(
        cls,
        *,
        name: str,
        type: str,
        message: str,
        weight: float = 1.0,
        details: dict[str, Any] | None = None,
    ) -> EvaluatorResult:
        """Could not evaluate: score 0 (it counts against the case), never a silent pass."""
        return cls(
            name=name,
            type=type,
            status="error",
            score=0.0,
            passed=False,
            verdict="fail",
            weight=weight,
            misses=[message],
            reasoning=message,
            details=details or {},
        )

    @classmethod
    def skipped(
        cls, *, name: str, type: str, reasoning: str, weight: float = 1.0, details: dict[str, Any] | None = None
    ) -> EvaluatorResult:
        """Nothing to evaluate: excluded from the case score."""
        return cls(
            name=name,
            type=type,
            status="skipped",
            score=None,
            passed=False,
            verdict=None,
            weight=weight,
            reasoning=reasoning,
            details=details or {},
        )


def hard_failure(result: EvaluatorResult) -> bool:
    """A processed result that fails although its score alone would pass or be partial."""
    return result.status == "processed" and result.verdict == "fail" and verdict_for(result.score or 0.0) != "fail"


class Trace(_Result):
    duration_ms: float | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    model: str | None = None  # model targets: the model that answered
    http_attempts: int | None = None  # model targets: HTTP attempts, SDK retries included
    judge_token_usage: dict[str, int] | None = None  # LLM judges of the case, summed
    judge_duration_ms: float | None = None


class ResultRow(_Result):
    """One JSONL row: everything known about one eval case."""

    timestamp: str
    eval_id: str
    dataset: str
    conversation_id: str | None = None
    target: str
    status: CaseStatus
    score: float
    verdict: Verdict
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str = ""
    candidate_answer: str | None = None
    evaluator_results: list[EvaluatorResult] = Field(default_factory=list)
    error: str | None = None
    attempts: int = 1
    duration_ms: float = 0.0
    trace: Trace = Field(default_factory=Trace)

    def to_json_dict(self) -> dict[str, Any]:
        """The row as written to JSONL (`error` only present on error rows)."""
        data = self.model_dump()
        if data["error"] is None:
            del data["error"]
        data["trace"] = {k: v for k, v in data["trace"].items() if v is not None}
        return data
