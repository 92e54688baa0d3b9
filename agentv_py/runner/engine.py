"""One case, one row (`run_case`): the target asked and the answer scored (`runner/case_row.py`),
or a conversation case's turns (`runner/conversation.py`); and which cases a run takes
(`--eval-id`, `--exclude`, `skip:`, `--shard`).

`agentv_py.runner.run.Run` drives these concurrently for a whole run."""

from __future__ import annotations

import fnmatch
import hashlib
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from agentv_py.errors import AgentvError
from agentv_py.models.results import ResultRow
from agentv_py.prepared import SKIPPED, CaseSelection, LoadedDataset, PreparedCase, case_ids, cases_where
from agentv_py.process.spawn import ProcessRegistry
from agentv_py.runner.case_row import NO_JUDGES, Judging, RunOptions, answer, answer_dir, score_case
from agentv_py.runner.conversation import run_conversation
from agentv_py.runner.outcome import TargetOutcome, TargetRunner

# a run's vocabulary, in one place
__all__ = ["MAX_WORKERS", "Judging", "RunOptions", "rejudges", "run_case", "run_unit", "score_case"]

MAX_WORKERS = 64


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
        if prepared.case.conversation is not None:
            if answered is not None:
                raise AgentvError("a conversation case cannot be answered by a batch (provider_batching)")
            return run_conversation(
                prepared, dataset, runner, options, judging=judging, processes=processes, stopped=stopped
            )
        if answered is not None:
            attempts, outcome = 1, answered
            started -= answered.duration_ms / 1000
        else:
            outcome, attempts = answer(prepared, runner, options, stopped)
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
            answer_dir=answer_dir(runner),
        )
    except Exception as exc:  # noqa: BLE001 - every case must produce a row
        return _internal_error(prepared, dataset, runner, options, exc)


def run_unit(
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
) -> list[ResultRow]:
    """The rows of one run of a case: `run_case`'s one row, or with `--rejudge J` (`options.rejudges`)
    J rows of one answer, each scored afresh (`rejudge` 1..J; judges asked anew, `Judging.salted`).
    Never raises."""
    if options.rejudges <= 1 or prepared.case.conversation is not None:
        return [
            run_case(
                prepared,
                dataset,
                runner,
                options,
                judging=judging,
                processes=processes,
                stopped=stopped,
                answered=answered,
                batch=batch,
            )
        ]
    started = time.monotonic()
    try:
        outcome, attempts = (answered, 1) if answered is not None else answer(prepared, runner, options, stopped)
        duration_ms = (time.monotonic() - started) * 1000
        return [
            score_case(
                prepared,
                prepared.evaluators,
                outcome,
                dataset=dataset,
                target=runner.name,
                attempts=attempts,
                duration_ms=duration_ms,
                judging=judging,
                processes=processes,
                run_id=options.run_id,
                batch=batch,
                answer_dir=answer_dir(runner),
                rejudge=rejudge,
            )
            for rejudge in range(1, options.rejudges + 1)
        ]
    except Exception as exc:  # noqa: BLE001 - every case must produce its rows
        return [
            _internal_error(prepared, dataset, runner, options, exc, rejudge)
            for rejudge in range(1, options.rejudges + 1)
        ]


def rejudges(options: RunOptions) -> list[int | None]:
    """The `rejudge` of each row a run of a case makes: [None] without `--rejudge`, else 1..J."""
    return [None] if options.rejudges <= 1 else list(range(1, options.rejudges + 1))


def _internal_error(
    prepared: PreparedCase,
    dataset: LoadedDataset,
    runner: TargetRunner,
    options: RunOptions,
    exc: Exception,
    rejudge: int | None = None,
) -> ResultRow:
    """The error row of a case whose run raised (a bug: said as an internal error)."""
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
        rejudge=rejudge,
    )
