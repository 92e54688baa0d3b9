"""Reusing a results file (`--resume`, `--rerun-failed`, `--retry-errors`; docs/incremental.md):
which of its rows are kept, which cases run again, and when the file cannot be reused (another
dataset or evaluators, a manifest that does not match: exit 2 unless --force; another version of
the target: exit 2 unless --allow-target-change)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentv_py.errors import AgentvError, ResultsFileError
from agentv_py.eval_plan import (
    EvalRequest,
    Reuse,
)
from agentv_py.loading.fingerprint import build_manifest, dataset_sha256
from agentv_py.models.manifest import RunManifest, TargetFingerprint
from agentv_py.models.results import ResultRow
from agentv_py.preflight import (
    Preflight,
)
from agentv_py.prepared import LoadedDataset, PreparedCase, case_ids, select
from agentv_py.recorder import (
    plan_options,
    tool_version,
)
from agentv_py.repeat_plan import missing_runs, resumed, stored_repeats
from agentv_py.report.manifest import (
    ManifestError,
    read_manifest,
)
from agentv_py.report.reuse import StoredError, manifest_differences, passed, read_stored
from agentv_py.report.row_store import RowSelection
from agentv_py.report.target_diff import ALLOW_HINT, UNRECORDED, indented, target_diff
from agentv_py.report.text import plural
from agentv_py.runner.case_row import pass_mark

FLAG = {"resume": "--resume", "rerun_failed": "--rerun-failed", "retry_errors": "--retry-errors"}
REPEAT_HINT = "--resume finishes it; a new run with --repeat measures the noise again (docs/statistics.md#repeats)"


def _reuse_refusal(verb: str, shown: str, message: str, hint: str | None = None) -> AgentvError:
    return AgentvError(f"{verb} {shown}: {message}", hint)


def _refuse_changes(verb: str, shown: str, inputs: list[str], target: list[str]) -> None:
    """Refuse (exit 2) the changes not accepted: `inputs` (--force), `target` (target_diff's
    lines, --allow-target-change); the hint names the flag, or both, that would accept them."""
    if not inputs and not target:
        return
    if not inputs:
        raise _reuse_refusal(
            verb,
            shown,
            "the target changed since its rows were made:\n" + indented(target),
            hint=f"pass {ALLOW_HINT} to reuse them anyway, or start a new run",
        )
    lines = indented(inputs) + ("\n  the target changed:\n" + indented(target, 4) if target else "")
    flags = "--force" + (f" and {ALLOW_HINT}" if target else "")
    raise _reuse_refusal(
        verb,
        shown,
        "its rows were made from other inputs:\n" + lines,
        hint=f"pass {flags} to reuse them anyway, or start a new run",
    )


def _has_error(row: ResultRow) -> bool:
    return row.status == "error" or any(result.status == "error" for result in row.evaluator_results)


def plan_reuse(
    request: EvalRequest,
    dataset: LoadedDataset,
    cases: Sequence[PreparedCase],
    checked: Preflight,
    out: str,
    fingerprint: TargetFingerprint | None = None,
) -> Reuse:
    """Read the results file to reuse and decide which of the selected `cases` run: with --resume
    those without a row, with --rerun-failed those whose row did not pass, with --retry-errors
    those whose row is a target or evaluator error (both: and those without a row). Refused
    (AgentvError, exit 2) when the file is not a results file, is of another dataset, or its run
    manifest is missing or differs from this run's in what changes rows — the last two unless
    `request.force` — or its target differs from the target now (`fingerprint`; `target_diff`)
    unless `request.allow_target_change`. A manifest that records no fingerprint (an older
    agentv's) is said in a warning, and the target's config compared instead. Rows for cases the
    dataset no longer has are kept, and said."""
    assert request.reuse is not None and request.reuse_mode is not None
    mode, source, shown = request.reuse_mode, request.reuse, str(request.reuse)
    verb = "cannot resume from" if mode == "resume" else "cannot re-run cases of"
    force_hint = "--force " + ("resumes" if mode == "resume" else "re-runs") + " from the rows alone"
    try:
        stored = read_stored(source, lock=mode != "resume")  # --resume holds the file's lock already
    except StoredError as exc:
        if exc.locked:
            raise ResultsFileError(f"{verb} {shown}: {exc.reason}", hint="wait for that run to finish") from None
        hint = "agentv reuses only a results file it wrote (JSONL rows)" if exc.reason.startswith("line ") else None
        raise _reuse_refusal(verb, shown, exc.reason, hint) from None
    notes: list[str] = []
    other = next((name for name in stored.rows.datasets if name != dataset.name), None)
    manifest: RunManifest | None = None
    try:
        manifest = read_manifest(source)
    except ManifestError as exc:
        if not request.force:
            raise _reuse_refusal(verb, shown, str(exc), hint=force_hint) from None
        notes.append(f"{exc}; reusing the rows as they are (--force)")
    if manifest is not None and manifest.dataset.name != dataset.name:
        other = manifest.dataset.name
    if other is not None:
        raise _reuse_refusal(
            verb,
            shown,
            f"it holds results of dataset '{other}', not of '{dataset.name}'",
            hint="pass the dataset it was made from, or start a new run",
        )
    if manifest is not None:
        strangers = sorted({run for run in stored.rows.run_ids if run is not None and run != manifest.run_id})
        differences = (
            [f"its manifest is of run {manifest.run_id}, but rows are of run {', '.join(strangers)}"]
            if strangers
            else []
        )
        current = build_manifest(
            run_id=manifest.run_id,
            results=Path(out),
            dataset=dataset,
            dataset_sha256=dataset_sha256(dataset),
            cases=cases,
            target=checked.target,
            judges=checked.judges,
            secrets=checked.secrets,
            options=plan_options(request),
            version=tool_version(),
            started_at=manifest.started_at,
            target_fingerprint=fingerprint,
        )
        differences += manifest_differences(manifest, current)
        changed = target_diff(manifest.target, current.target)
        del current  # not held beside the manifest the run builds
        if manifest.target.fingerprint is None:
            notes.append(
                f"the manifest of {shown} {UNRECORDED}: the target's scripts and environment are not "
                "compared with the target's now, only its config"
            )
        _refuse_changes(
            verb, shown, differences if not request.force else [], changed if not request.allow_target_change else []
        )
        if differences:
            notes.append(f"reusing rows made from other inputs (--force): {'; '.join(differences)}")
        if changed:
            notes.append(f"reusing rows another version of the target made ({ALLOW_HINT}): {'; '.join(changed)}")
    if stored.cut_line is not None:
        gone = "is removed" if mode == "resume" else "is not copied"
        notes.append(
            f"the last line of {shown} (line {stored.cut_line}) was cut short (the run stopped while writing it): "
            f"it {gone} and its case runs again"
        )
    by_case = stored.case_ids()
    known = set(dataset.cases.ids)
    unknown = [case_id for case_id in by_case if case_id not in known]
    if unknown:
        listed = ", ".join(f"'{case_id}'" for case_id in unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        notes.append(f"{shown} holds rows of {plural(len(unknown), 'case')} not in the dataset ({listed}): kept")
    runs = stored_repeats(manifest, stored.rows)
    if mode != "resume" and runs.on:
        raise _reuse_refusal(
            verb, shown, f"its run was repeated ({runs.flags()}): {FLAG[mode]} re-runs a case's one row", REPEAT_HINT
        )
    if mode == "resume":
        runs = resumed(request, runs, shown)
        to_run: Sequence[PreparedCase] = (
            missing_runs(cases, runs.repeats, stored.rows)
            if runs.repeats > 1
            else select(cases, (i for i in case_ids(cases) if i not in by_case))
        )
        kept: Sequence[ResultRow] = stored.rows
    else:
        mark = pass_mark(dataset)
        again = (lambda row: not passed(row, mark)) if mode == "rerun_failed" else _has_error
        last = set(by_case.values())
        again_ids = {row.eval_id for i, row in enumerate(stored.rows) if i in last and again(row)}
        redo = {i for i in case_ids(cases) if i not in by_case or i in again_ids}
        to_run = select(cases, (i for i in case_ids(cases) if i in redo))
        kept = RowSelection(stored.rows, [i for i, case_id in enumerate(stored.rows.eval_ids) if case_id not in redo])
    if manifest is not None:  # compared: its per-case lists are not held while the run goes
        manifest = manifest.model_copy(
            update={"case_evaluators": {}, "dataset": manifest.dataset.model_copy(update={"case_ids": []})}
        )
    last_run_id = next((run for run in reversed(stored.rows.run_ids) if run), None)
    previous = manifest.run_id if manifest is not None else last_run_id
    return Reuse(
        mode,
        source,
        shown,
        selected=cases,
        to_run=to_run,
        kept=kept,
        stored=manifest,
        run_id=previous if mode == "resume" else None,
        derived_from=None if mode == "resume" else previous,
        notes=notes,
        repeats=runs.repeats,
        rejudges=runs.rejudges,
    )
