"""What an evaluator sees of a case (`EvalContext`), and the three ways it reports:
`processed_result`, `error_result`, `skipped_result`."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentv_py.chat import ChatClient, sum_usage
from agentv_py.media import ImageRef
from agentv_py.models.dataset import EvalCase
from agentv_py.models.preprocessors import Preprocessor
from agentv_py.models.results import EvaluatorResult, Trace, Verdict
from agentv_py.process.spawn import ProcessRegistry
from agentv_py.scoring.answer import parse_answer_json
from agentv_py.scoring.case import PASS_THRESHOLD, verdict_for


@dataclass
class EvalContext:
    eval_id: str
    dataset: str
    dataset_dir: Path
    answer: str
    expected: Any
    question: str = ""
    files: tuple[str, ...] = ()
    guideline_files: tuple[str, ...] = ()  # input files `.agentv/config.yaml` made guideline files (not in `files`)
    images: tuple[ImageRef, ...] = ()
    case: EvalCase | None = None
    output_messages: list[Any] | None = None  # as the target gave them, when it did
    trace: Trace | None = None  # what the target call cost: duration, token usage, cost (when known)
    judges: Mapping[str, ChatClient] = field(default_factory=dict)  # judge targets by name
    default_judge: str | None = None  # for LLM evaluators without their own `target`
    processes: ProcessRegistry | None = None  # the run's: commands started here die with the run
    pass_threshold: float = PASS_THRESHOLD  # the dataset's pass mark: grades every evaluator's verdict
    preprocessors: tuple[Preprocessor, ...] = ()  # the suite's: files the answer names, as text for judges
    answer_dir: Path | None = None  # where the target ran: the answer's relative file paths start there

    @functools.cached_property
    def candidate(self) -> Any:
        """The answer parsed as JSON (NOT_JSON when it is not), parsed once per case."""
        return parse_answer_json(self.answer)


def reference_answer(case: EvalCase | None, expected: Any) -> str:
    """AgentV's `reference_answer` (a judge's `{{expected_output}}`): the last expected message's
    content (text as is, anything else as 2-space JSON), or, for a message with only tool calls,
    its tool calls as JSON. Without a case (a context built in code): the ground truth as text."""
    if case is None:
        if expected is None:
            return ""
        return expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False, indent=2)
    if not case.expected_messages:
        return ""
    last = case.expected_messages[-1].model_dump(exclude_none=True)
    content, calls = last.get("content"), last.get("tool_calls")
    if isinstance(content, str):
        return content
    value = content if content is not None else calls
    return "" if value is None else json.dumps(value, ensure_ascii=False, indent=2, default=str)


# Result types whose `details.judge` agentv writes itself (the record of their LLM calls). Any other
# evaluator's details (a code judge's) are that judge's own data, never counted as judge cost.
JUDGE_RECORD_TYPES = frozenset({"llm_judge", "rubric", "composite"})


def _non_negative(value: Any) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if ok else 0.0


def judge_costs(results: Sequence[EvaluatorResult], extra: Sequence[Any] = ()) -> dict[str, Any] | None:
    """What the LLM judges among `results` cost (their `details.judge` records, plus `extra`
    records such as a composite aggregator's), summed: replies, duration_ms, token_usage. Only
    whole, finite, non-negative numbers count. None when no judge was called."""
    records = [r.details.get("judge") for r in results if r.type in JUDGE_RECORD_TYPES]
    calls = [call for call in [*records, *extra] if isinstance(call, dict)]
    if not calls:
        return None
    duration = round(math.fsum(_non_negative(call.get("duration_ms")) for call in calls), 3)
    summed: dict[str, Any] = {
        "replies": sum(
            n
            for n in (call.get("replies") for call in calls)
            if isinstance(n, int) and not isinstance(n, bool) and n >= 0
        ),
        "duration_ms": duration if math.isfinite(duration) else 0.0,
    }
    usage = sum_usage(call.get("token_usage") for call in calls)
    if usage:
        summed["token_usage"] = usage
    return summed


class Evaluator(Protocol):
    def __call__(self, config: Any, context: EvalContext) -> EvaluatorResult: ...


def processed_result(
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
    """A score in [0, 1]; its verdict by `verdict_for`. `verdict` overrides that only to fail a
    hard requirement (a required rubric item); such a result fails its case too."""
    hard = verdict == "fail"
    verdict = verdict or verdict_for(score)
    result = EvaluatorResult(
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
    if hard:
        result.mark_failed_hard()
    return result


def error_result(
    *, name: str, type: str, message: str, weight: float = 1.0, details: dict[str, Any] | None = None
) -> EvaluatorResult:
    """Could not evaluate: score 0 (it counts against the case), never a silent pass."""
    return EvaluatorResult(
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


def skipped_result(
    *, name: str, type: str, reasoning: str, weight: float = 1.0, details: dict[str, Any] | None = None
) -> EvaluatorResult:
    """Nothing to evaluate: excluded from the case score."""
    return EvaluatorResult(
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
