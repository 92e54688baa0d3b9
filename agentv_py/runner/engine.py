"""One case, one row: run the target (with retries), score the answer, build the ResultRow.

`agentv_py.runner.run.Run` drives these concurrently for a whole run."""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

from agentv_py.chat import ChatClient
from agentv_py.errors import AgentvError
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.base import judge_costs
from agentv_py.models.results import CaseStatus, EvaluatorResult, ResultRow, Trace, Verdict
from agentv_py.prepared import SKIPPED, CaseSelection, LoadedDataset, PreparedCase, case_ids, cases_where
from agentv_py.process.spawn import ProcessRegistry
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.case import PASS_THRESHOLD, case_verdict

MAX_WORKERS = 64


@dataclass(frozen=True)
class RunOptions:
    workers: int = 4
    max_retries: int = 1
    ray_address: str | None = None  # --ray-address (`--executor ray` only; else RAY_ADDRESS or a local Ray)
    run_id: str | None = None  # written into every row of the run (its manifest's id)
    verbose: bool = False  # --verbose: Ray's own messages (a dead worker's) become notices, else are dropped


@dataclass(frozen=True)
class Judging:
    """The judge targets of a run, by name, and the default for evaluators without `target:`."""

    clients: Mapping[str, ChatClient] = field(default_factory=dict)
    default: str | None = None


NO_JUDGES = Judging()


def select_cases(cases: Sequence[PreparedCase], patterns: Iterable[str]) -> Sequence[PreparedCase]:
    """Cases whose id matches any glob in `patterns` (all cases when there are none)."""
    patterns = list(patterns)
    if not patterns:
        return cases  # a big dataset's cases stay where they are (`PreparedCases`)
    all_ids = case_ids(cases)
    chosen = CaseSelection(
        cases, [i for i, case_id in enumerate(all_ids) if any(fnmatch.fnmatchcase(case_id, p) for p in patterns)]
    )
    if not chosen:
        ids = ", ".join(all_ids[:10]) + (", ..." if len(cases) > 10 else "")
        raise AgentvError(
            f"no case id matches --eval-id {' '.join(patterns)}",
            hint=f"ids in this dataset: {ids} (globs such as 'invoice-00*' work)",
        )
    return chosen


def exclude_cases(cases: Sequence[PreparedCase], patterns: Iterable[str]) -> tuple[Sequence[PreparedCase], int]:
    """`--exclude GLOB`: the cases whose id matches none of `patterns`, and how many were left
    out. A glob that matches no case is a usage error (a typo would exclude nothing, silently)."""
    patterns = list(patterns)
    if not patterns:
        return cases, 0
    all_ids = case_ids(cases)
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(case_id, pattern) for case_id in all_ids):
            ids = ", ".join(all_ids[:10]) + (", ..." if len(all_ids) > 10 else "")
            raise AgentvError(
                f"--exclude {pattern!r} matches no case", hint=f"ids here: {ids} (globs such as 'invoice-00*' work)"
            )
    kept = [i for i, case_id in enumerate(all_ids) if not any(fnmatch.fnmatchcase(case_id, p) for p in patterns)]
    return CaseSelection(cases, kept), len(all_ids) - len(kept)


def skip_cases(cases: Sequence[PreparedCase]) -> tuple[Sequence[PreparedCase], list[tuple[str, str]]]:
    """The cases that run, and (id, reason) of those whose `skip:` says they do not."""
    marked = set(cases_where(cases, SKIPPED))
    if not marked:
        return cases, []
    skipped = [(cases[i].case.id, cases[i].case.skip_reason or "skip: true") for i in sorted(marked)]
    return CaseSelection(cases, [i for i in range(len(cases)) if i not in marked]), skipped


@dataclass(frozen=True)
class Shard:
    """`--shard K/N`: the cases of shard `index` (from 1) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


SHARD_FORMAT = "K/N with 1 <= K <= N, e.g. --shard 2/4 for the second of four shards"


def parse_shard(text: str) -> Shard:
    """`K/N` -> Shard; AgentvError (a usage error, exit 2) for anything else."""
    if not re.fullmatch(r"[0-9]{1,9}/[0-9]{1,9}", text):
        raise AgentvError(f"--shard {text!r} is not K/N", hint=SHARD_FORMAT)
    index, _, count = text.partition("/")
    shard = Shard(int(index), int(count))
    if shard.count < 1 or not 1 <= shard.index <= shard.count:
        raise AgentvError(f"--shard {text}: there is no shard {shard.index} of {shard.count}", hint=SHARD_FORMAT)
    return shard


def shard_of(case_id: str, count: int) -> int:
    """The shard (from 1) of `count` a case belongs to: SHA-256 of its id's UTF-8 bytes, the first 8
    bytes as an unsigned big-endian integer, modulo `count`. The same on every machine and Python."""
    digest = hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_cases(cases: Sequence[PreparedCase], shard: Shard | None) -> Sequence[PreparedCase]:
    """The cases of `shard` (all of them without one), in dataset order."""
    if shard is None or shard.count == 1:
        return cases
    ids = case_ids(cases)
    return CaseSelection(cases, [i for i, case_id in enumerate(ids) if shard_of(case_id, shard.count) == shard.index])


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
) -> ResultRow:
    """Build the row for one case from the target's outcome (pure apart from the evaluators): the
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
    trace = _trace(outcome, batch, cache)

    def row(
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
        return ResultRow(
            timestamp=_utc_now(),
            eval_id=case.id,
            dataset=dataset.name,
            conversation_id=case.conversation_id,
            target=target,
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
            attempts=attempts,
            duration_ms=round(duration_ms, 3),
            trace=trace,
            run_id=run_id,
            xfail=case.xfail_reason,
        )

    if outcome.answer is None:
        error = outcome.error or "target failed"
        return row("error", 0.0, "fail", misses=[error], reasoning=error, error=error)
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
    )
    if outcome.parsed is not NOT_JSON:
        context.__dict__["candidate"] = outcome.parsed  # already parsed while unwrapping
    results = [run_evaluator(config, context) for config in evaluators]
    _add_judge_costs(trace, results)
    verdict = case_verdict(results, context.pass_threshold)
    reasoning = (
        "; ".join(f"{r.name}: {r.reasoning}" if len(results) > 1 else r.reasoning for r in results)
        if verdict.scored
        else "no evaluator produced a score: " + "; ".join(r.reasoning for r in results)
    )
    return row(
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


def _is_number(value: Any) -> TypeGuard[int | float]:
    """A finite JSON number (booleans are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _trace(outcome: TargetOutcome, batch: str | None = None, cache: Literal["hit", "miss"] | None = None) -> Trace:
    """Target-reported metrics when they have the right types (a negative duration or cost is
    dropped, as AgentV dropped it); else our own measurement. With how the answer came."""
    reported = outcome.trace
    duration = reported.get("duration_ms")
    cost = reported.get("cost_usd")
    usage = reported.get("token_usage")
    model, http_attempts = reported.get("model"), reported.get("http_attempts")
    return Trace(
        duration_ms=float(duration) if _is_number(duration) and duration >= 0 else round(outcome.duration_ms, 3),
        cost_usd=float(cost) if _is_number(cost) and cost >= 0 else None,
        token_usage=usage if isinstance(usage, dict) else None,
        model=model if isinstance(model, str) else None,
        http_attempts=http_attempts if isinstance(http_attempts, int) else None,
        batch=batch,
        cache=cache,
        stderr=outcome.stderr,
    )


def _add_judge_costs(trace: Trace, results: Sequence[EvaluatorResult]) -> None:
    """Token usage and latency of the case's LLM judges (`judge_costs`), summed."""
    costs = judge_costs(results)
    if costs is None:
        return
    trace.judge_token_usage = costs.get("token_usage")
    trace.judge_duration_ms = costs["duration_ms"]


def run_case(
    prepared: PreparedCase,
    dataset: LoadedDataset,
    runner: TargetRunner,
    options: RunOptions,
    *,
    judging: Judging = NO_JUDGES,
    processes: ProcessRegistry | None = None,
    stopped: Callable[[], bool] = lambda: False,
    answered: TargetOutcome | None = None,
    batch: str | None = None,
) -> ResultRow:
    """The row of one case: the target (retried up to `options.max_retries` times, not once
    the run is stopping, and not when it cannot start at all), then its evaluators. The row's
    `attempts` counts the calls made. `answered`: the case's outcome from a batch call
    (`runner/batch.py`), used as its one attempt (its duration is the case's share of the batch);
    the target is not called; `batch`: what the row says of the batch (`batch.batch_note`). Never
    raises: an internal error is an error row."""
    started = time.monotonic()
    try:
        attempts = 0
        outcome = TargetOutcome(None, "not run")
        if answered is not None:
            attempts, outcome = 1, answered
            started -= answered.duration_ms / 1000
        else:
            for attempts in range(1, options.max_retries + 2):
                outcome = runner.invoke(prepared, attempts)
                if outcome.answer is not None or not outcome.retryable or stopped():
                    break
        return score_case(
            prepared,
            prepared.evaluators,
            outcome,
            dataset=dataset,
            target=runner.name,
            attempts=attempts,
            duration_ms=(time.monotonic() - started) * 1000,
            judging=judging,
            processes=processes,
            run_id=options.run_id,
            batch=batch,
        )
    except Exception as exc:  # noqa: BLE001 - every case must produce a row
        message = f"internal error while running the case: {type(exc).__name__}: {exc}"
        return score_case(
            prepared,
            [],
            TargetOutcome(None, message),
            dataset=dataset,
            target=runner.name,
            attempts=1,
            duration_ms=0.0,
            run_id=options.run_id,
        )
