"""`--repeat K` and `--rejudge J` when an eval is planned (docs/statistics.md#repeats): the runs each
case gets, what they cannot go with (refused, exit 2), and what a resumed repeated run still lacks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentv_py.errors import AgentvError
from agentv_py.eval_plan import EvalRequest
from agentv_py.models.manifest import RunManifest
from agentv_py.models.targets import CliTarget, TargetConfig
from agentv_py.prepared import CONVERSATION, PreparedCase, Repeated, case_ids, cases_where
from agentv_py.report.row_store import RowStore

MAX_REPEATS = 100  # --repeat and --rejudge at most
HINT = "--repeat K runs each case K times, --rejudge J scores each answer J times (2 or more measures noise)"


def check_count(flag: str, value: int | None) -> None:
    """`--repeat` / `--rejudge`: a whole number from 1 to MAX_REPEATS (AgentvError, exit 2)."""
    if value is None:
        return
    if value < 1:
        raise AgentvError(f"{flag} {value}: every case runs and is scored at least once", hint=HINT)
    if value > MAX_REPEATS:
        raise AgentvError(f"{flag} {value}: at most {MAX_REPEATS}", hint=HINT)


@dataclass(frozen=True)
class Repeats:
    """How many runs each case gets and how many scorings each answer (1, 1: neither option)."""

    repeats: int = 1
    rejudges: int = 1

    @property
    def on(self) -> bool:
        return self.repeats > 1 or self.rejudges > 1

    def flags(self) -> str:
        return " ".join(
            f"{flag} {count}" for flag, count in (("--repeat", self.repeats), ("--rejudge", self.rejudges)) if count > 1
        )


def refuse_with(request: EvalRequest, repeats: Repeats, target: TargetConfig, cases: Sequence[PreparedCase]) -> None:
    """What a repeated (rejudged) run cannot go with: AgentvError (exit 2) naming it."""
    if not repeats.on:
        return
    flags = repeats.flags()
    hint = "see docs/statistics.md#repeats"
    if request.stop_early:
        raise AgentvError(f"--stop-early decides on one run of each case: run {flags} without it", hint=hint)
    if request.baseline is not None:
        raise AgentvError(
            f"{flags} goes without --baseline: compare the repeated runs with agentv compare BASE RESULTS",
            hint=hint,
        )
    if request.reuse_mode in ("rerun_failed", "retry_errors"):
        mode = "--rerun-failed" if request.reuse_mode == "rerun_failed" else "--retry-errors"
        raise AgentvError(f"{flags} goes with a new run or --resume, not with {mode}", hint=hint)
    if isinstance(target, CliTarget) and target.provider_batching:
        raise AgentvError(
            f"{flags}: target '{target.name}' answers every case in one batch (provider_batching), once", hint=hint
        )
    if repeats.rejudges > 1 and cases_where(cases, CONVERSATION):
        first = case_ids(cases)[cases_where(cases, CONVERSATION)[0]]
        raise AgentvError(
            f"--rejudge {repeats.rejudges}: case '{first}' is a conversation, whose turns are scored as they "
            "are answered; --repeat runs it again",
            hint=hint,
        )


def stored_repeats(manifest: RunManifest | None, rows: RowStore) -> Repeats:
    """The runs and scorings of a results file's run: its manifest's, else the most its rows show."""
    if manifest is not None and (manifest.repeats or manifest.rejudges):
        return Repeats(manifest.repeats or 1, manifest.rejudges or 1)
    repeat = max((r for r in rows.repeats if r is not None), default=None)
    rejudge = max((j for j in rows.rejudges if j is not None), default=None)
    return Repeats(repeat or 1, rejudge or 1)


def resumed(request: EvalRequest, stored: Repeats, shown: str) -> Repeats:
    """The runs of a resumed run: those it was started with. A --repeat or --rejudge that says
    otherwise is refused (exit 2): one run's rows have one count of each."""
    for flag, asked, had in (
        ("--repeat", request.repeats, stored.repeats),
        ("--rejudge", request.rejudges, stored.rejudges),
    ):
        if asked is None or asked == had:
            continue
        what = "ran each case" if flag == "--repeat" else "scored each answer"
        was = f"its run {what} once" if had == 1 else f"its run {what} {had} times"
        redo = f"resume it without {flag}" + (f" (or with {flag} {had})" if had > 1 else "")
        hint = f"{redo}, or start a new run with {flag} {asked}"
        raise AgentvError(f"cannot resume from {shown}: {flag} {asked}, but {was}", hint=hint)
    return stored


def missing_runs(cases: Sequence[PreparedCase], repeats: int, rows: RowStore) -> Repeated:
    """The runs of `cases` (each `repeats` times) without a row in `rows`, repeat by repeat. A run
    with any row is done (its --rejudge rows are written together)."""
    done = {(eval_id, repeat or 1) for eval_id, repeat in zip(rows.eval_ids, rows.repeats, strict=True)}
    ids = case_ids(cases)
    units = [
        (position, repeat)
        for repeat in range(1, repeats + 1)
        for position, eval_id in enumerate(ids)
        if (eval_id, repeat) not in done
    ]
    return Repeated(cases, repeats, units)
