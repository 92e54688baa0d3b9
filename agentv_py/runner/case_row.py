"""The row of one case: the target asked (with retries), the answer scored by the case's
evaluators, the `ResultRow` built (`RowMaker`). `engine.run_case` runs a case with these; a
conversation case (`runner/conversation.py`) builds its one row from its turns' with them too."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard

from agentv_py.chat import ChatClient
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.base import judge_costs
from agentv_py.models.results import CaseStatus, EvaluatorResult, ResultRow, Trace, Verdict
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.process.spawn import ProcessRegistry
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.case import PASS_THRESHOLD, CaseVerdict, case_verdict


@dataclass(frozen=True)
class RunOptions:
    workers: int = 4
    max_retries: int = 1
    ray_address: str | None = None  # --ray-address (`--executor ray` only; else RAY_ADDRESS or a local Ray)
    run_id: str | None = None  # written into every row of the run (its manifest's id)
    verbose: bool = False  # --verbose: Ray's own messages (a dead worker's) become notices, else are dropped
    rejudges: int = 1  # --rejudge J: each answer scored J times, one row each (`engine.run_unit`)


@dataclass(frozen=True)
class Judging:
    """The judge targets of a run, by name, and the default for evaluators without `target:`."""

    clients: Mapping[str, ChatClient] = field(default_factory=dict)
    default: str | None = None

    def salted(self, repeat: int | None, rejudge: int | None) -> Judging:
        """The judges of a row after the first of a repeated or rejudged case: cached replies kept
        apart by (repeat, rejudge), so each run and each scoring asks its judges afresh. A code
        judge's proxied targets (`ProxyTargets`) are not salted."""
        salt = (repeat or 1, rejudge or 1)
        if salt == (1, 1) or type(self.clients) is not dict:
            return self
        salting = {name: getattr(client, "salted", None) for name, client in self.clients.items()}
        clients = {name: salt_it(salt) if salt_it else self.clients[name] for name, salt_it in salting.items()}
        return Judging(clients, self.default)


NO_JUDGES = Judging()


def _utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _join(results: Sequence[EvaluatorResult], attr: str) -> list[str]:
    if len(results) == 1:
        return list(getattr(results[0], attr))
    return [f"{r.name}: {item}" for r in results for item in getattr(r, attr)]


def score_case(
    prepared: PreparedCase,
    evaluators: Sequence[Any],
    outcome: TargetOutcome,
    *,
    dataset: LoadedDataset,
    target: str,
    attempts: int,
    duration_ms: float,
    judging: Judging = NO_JUDGES,
    processes: ProcessRegistry | None = None,
    run_id: str | None = None,
    batch: str | None = None,
    answer_dir: str | None = None,
    rejudge: int | None = None,
) -> ResultRow:
    """Build the row for one case from the target's outcome (pure apart from the evaluators; an
    answer's relative file paths start at `answer_dir`, where the target ran): the
    row is complete when it is returned (its run, how its answer came: `batch`, the outcome's
    cache note or the earlier row it replays); only redaction follows."""
    case = prepared.case
    origin = outcome.origin
    if origin is not None and origin.status == "error":  # a replayed row whose target failed: as it was
        return origin.model_copy(update={"run_id": run_id})
    if origin is not None:  # a replayed answer: what the earlier run measured of its target stands
        target, attempts, duration_ms = origin.target, origin.attempts, origin.duration_ms
        batch, cache = origin.trace.batch, origin.trace.cache
    else:
        cache = outcome.cache
    trace = outcome_trace(outcome, batch, cache)
    made = RowMaker(prepared, dataset.name, target, trace, attempts, duration_ms, run_id, rejudge)
    judging = judging.salted(prepared.repeat, rejudge)
    if outcome.answer is None:
        error = outcome.error or "target failed"
        return made.row("error", 0.0, "fail", misses=[error], reasoning=error, error=error)
    context = EvalContext(
        eval_id=case.id,
        dataset=dataset.name,
        dataset_dir=dataset.directory,
        answer=outcome.answer,
        expected=prepared.expected,
        question=prepared.question,
        files=tuple(prepared.files),
        guideline_files=tuple(prepared.guideline_files),
        images=tuple(prepared.images),
        case=case,
        output_messages=outcome.output_messages,
        trace=trace,
        judges=judging.clients,
        default_judge=judging.default,
        processes=processes,
        pass_threshold=pass_mark(dataset),
        preprocessors=tuple(dataset.model.preprocessors or ()),
        answer_dir=Path(answer_dir) if answer_dir is not None else None,
    )
    if outcome.parsed is not NOT_JSON:
        context.__dict__["candidate"] = outcome.parsed  # already parsed while unwrapping
    results = [run_evaluator(config, context) for config in evaluators]
    add_judge_costs(trace, results)
    return made.scored(results, case_verdict(results, context.pass_threshold), outcome)


@dataclass(frozen=True)
class RowMaker:
    """Builds the row of one case: what every row of it says (its id, run, target, trace)."""

    prepared: PreparedCase
    dataset: str
    target: str
    trace: Trace
    attempts: int
    duration_ms: float
    run_id: str | None
    rejudge: int | None = None  # `--rejudge J`: which scoring of the answer this row is (from 1)

    def row(
        self,
        status: CaseStatus,
        score: float,
        verdict: Verdict,
        *,
        hits: list[str] | None = None,
        misses: list[str] | None = None,
        reasoning: str = "",
        candidate_answer: str | None = None,
        output_messages: list[Any] | None = None,
        evaluator_results: list[EvaluatorResult] | None = None,
        error: str | None = None,
    ) -> ResultRow:
        case = self.prepared.case
        return ResultRow(
            timestamp=_utc_now(),
            eval_id=case.id,
            dataset=self.dataset,
            conversation_id=case.conversation_id,
            target=self.target,
            status=status,
            score=score,
            verdict=verdict,
            hits=hits or [],
            misses=misses or [],
            reasoning=reasoning,
            candidate_answer=candidate_answer,
            output_messages=output_messages,
            evaluator_results=evaluator_results or [],
            error=error,
            attempts=self.attempts,
            duration_ms=round(self.duration_ms, 3),
            trace=self.trace,
            run_id=self.run_id,
            xfail=case.xfail_reason,
            repeat=self.prepared.repeat,
            rejudge=self.rejudge,
            metadata=case.metadata or None,
        )

    def scored(self, results: list[EvaluatorResult], verdict: CaseVerdict, outcome: TargetOutcome) -> ResultRow:
        """The row of an answer scored by `results`, with the case's `verdict` of them."""
        reasoning = (
            "; ".join(f"{r.name}: {r.reasoning}" if len(results) > 1 else r.reasoning for r in results)
            if verdict.scored
            else "no evaluator produced a score: " + "; ".join(r.reasoning for r in results)
        )
        return self.row(
            "ok",
            verdict.score,
            verdict.verdict,
            hits=_join(results, "hits"),
            misses=_join(results, "misses"),
            reasoning=reasoning,
            candidate_answer=outcome.answer,
            output_messages=outcome.output_messages,
            evaluator_results=results,
        )


def pass_mark(dataset: LoadedDataset) -> float:
    """The dataset's `pass_threshold`, else SPEC §4.1's 0.8."""
    mark = dataset.model.pass_threshold
    return PASS_THRESHOLD if mark is None else mark


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite JSON number (booleans are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def outcome_trace(
    outcome: TargetOutcome, batch: str | None = None, cache: Literal["hit", "miss"] | None = None
) -> Trace:
    """Target-reported metrics when they have the right types (a negative duration or cost is
    dropped, as AgentV dropped it); else our own measurement. With how the answer came."""
    reported = outcome.trace
    duration = reported.get("duration_ms")
    cost = reported.get("cost_usd")
    usage = reported.get("token_usage")
    model, http_attempts = reported.get("model"), reported.get("http_attempts")
    return Trace(
        duration_ms=float(duration) if is_number(duration) and duration >= 0 else round(outcome.duration_ms, 3),
        cost_usd=float(cost) if is_number(cost) and cost >= 0 else None,
        token_usage=usage if isinstance(usage, dict) else None,
        model=model if isinstance(model, str) else None,
        http_attempts=http_attempts if isinstance(http_attempts, int) else None,
        batch=batch,
        cache=cache,
        stderr=outcome.stderr,
    )


def add_judge_costs(trace: Trace, results: Sequence[EvaluatorResult]) -> None:
    """Token usage and latency of the case's LLM judges (`judge_costs`), summed."""
    costs = judge_costs(results)
    if costs is None:
        return
    trace.judge_token_usage = costs.get("token_usage")
    trace.judge_duration_ms = costs["duration_ms"]


def answer_dir(runner: TargetRunner) -> str | None:
    """Where a target's commands run (a cli or worker target's `cwd`; through the cache too): an
    answer naming files names them from there. None: the dataset's directory."""
    inner = getattr(runner, "runner", runner)  # a CachedTarget's
    cwd = getattr(inner, "cwd", None)
    return cwd if isinstance(cwd, str) else None


def answer(
    prepared: PreparedCase, runner: TargetRunner, options: RunOptions, stopped: Callable[[], bool]
) -> tuple[TargetOutcome, int]:
    """The target's outcome for `prepared` and the calls made: retried up to `options.max_retries`
    times, not once the run is stopping, and not when it cannot start at all."""
    outcome, attempts = TargetOutcome(None, "not run"), 0
    for attempts in range(1, options.max_retries + 2):
        outcome = runner.invoke(prepared, attempts)
        if outcome.answer is not None or not outcome.retryable or stopped():
            break
    return outcome, attempts
