"""One eval, start to finish, minus the printing: plan it (load, select, check), then execute
it (a `Run` writing rows and a summary). The layer between the CLI and loader/runner/report."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentv_py.errors import AgentvError, ConfigError, OutputError, ResultsFileError
from agentv_py.eval_plan import (
    EvalPlan,
    EvalRequest,
    Reuse,
)
from agentv_py.loading import (
    load_dataset,
)
from agentv_py.loading.fingerprint import build_manifest, dataset_sha256
from agentv_py.locate import output_clash, repo_root
from agentv_py.models.manifest import RunManifest, ShardInfo
from agentv_py.models.results import ResultRow
from agentv_py.preflight import (
    Preflight,
    preflight,
    proxy_catalog,
)
from agentv_py.prepared import IMAGES, LoadedDataset, PreparedCase, case_ids, cases_where, select
from agentv_py.report.gates import Baseline, BaselineError, load_baseline
from agentv_py.report.jsonl import JsonlWriter, ResultsUnavailable, default_results_path, open_new_results
from agentv_py.report.manifest import (
    ManifestError,
    finish_manifest,
    manifest_path,
    read_manifest,
    utc_now,
    write_manifest,
)
from agentv_py.report.render import visible
from agentv_py.report.reuse import StoredError, manifest_differences, passed, read_stored
from agentv_py.report.summary import RunSummary, gate, plural
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.cache_store import default_cache_dir
from agentv_py.runner.engine import RunOptions, pass_mark, select_cases, shard_cases
from agentv_py.runner.run import Interrupted, Run
from agentv_py.runner.target_checks import run_healthcheck


def plan_eval(request: EvalRequest) -> EvalPlan:
    """Load and check everything; raise (exit 2) before anything runs."""
    dataset = load_dataset(request.dataset)
    cases = shard_cases(select_cases(dataset.cases, request.eval_ids), request.shard)
    checked = preflight(request, dataset, cases)
    if checked.failures:
        raise checked.failures[0]
    if request.executor == "ray" and not request.dry_run:
        from agentv_py.runner.ray_executor import check_ray

        check_ray(checked.target, checked.judges)
    out = request.out or str(default_results_path(dataset.name))
    reuse = plan_reuse(request, dataset, cases, checked, out) if request.reuse is not None else None
    baseline = None
    if request.baseline is not None:
        baseline = _load_baseline(request.baseline, request.max_drop or 0.0, request.allow_flips, dataset, cases)
    to_run = reuse.to_run if reuse is not None else cases
    loaded = checked.loaded
    plan = EvalPlan(
        request,
        dataset,
        to_run,
        checked.target,
        checked.secrets,
        out,
        checked.judges,
        checked.default_judge,
        loaded.path if loaded else None,
        catalog=proxy_catalog(dataset, loaded),
        reuse=reuse,
        baseline=baseline,
    )
    clash = output_clash(request.outputs, plan.inputs(request.outputs))
    if clash is not None:  # before the healthcheck: nothing runs, nothing is written
        raise AgentvError(clash, hint="see agentv eval --help")
    if not request.dry_run and to_run:  # nothing left to run: no target is called, not even to check it
        slots = min(request.workers, len(to_run))  # worker targets start this many workers at once
        run_healthcheck(checked.target, dataset.directory, checked.secrets, slots=slots)
    if reuse is not None and reuse.run_id is not None:
        plan.run_id = reuse.run_id
    return plan


def _load_baseline(
    path: Path, max_drop: float, allow_flips: int, dataset: LoadedDataset, cases: Sequence[PreparedCase]
) -> Baseline:
    """--baseline: the previous run's mean, field counts and passed cases; a usage error (exit 2)
    when it cannot be used."""
    try:
        info = read_manifest(path).dataset if path.is_file() else None
    except ManifestError:
        info = None
    try:
        return load_baseline(
            path,
            max_drop,
            allow_flips=allow_flips,
            dataset_path=dataset.path,
            dataset_name=dataset.name,
            case_ids=case_ids(cases),
            base_dataset=(info.path, info.name) if info is not None else None,
        )
    except BaselineError as exc:
        raise AgentvError(exc.message, exc.hint) from None


def _reuse_refusal(verb: str, shown: str, message: str, hint: str | None = None) -> AgentvError:
    return AgentvError(f"{verb} {shown}: {message}", hint)


def _has_error(row: ResultRow) -> bool:
    return row.status == "error" or any(result.status == "error" for result in row.evaluator_results)


def plan_reuse(
    request: EvalRequest, dataset: LoadedDataset, cases: Sequence[PreparedCase], checked: Preflight, out: str
) -> Reuse:
    """Read the results file to reuse and decide which of the selected `cases` run: with --resume
    those without a row, with --rerun-failed those whose row did not pass, with --retry-errors
    those whose row is a target or evaluator error (both: and those without a row). Refused
    (AgentvError, exit 2) when the file is not a results file, is of another dataset, or its run
    manifest is missing or differs from this run's in what changes rows — the last two unless
    `request.force`. Rows for cases the dataset no longer has are kept, and said."""
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
    other = next((row.dataset for row in stored.rows if row.dataset != dataset.name), None)
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
        strangers = sorted({row.run_id for row in stored.rows if row.run_id not in (None, manifest.run_id)})
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
        )
        differences += manifest_differences(manifest, current)
        if differences and not request.force:
            raise _reuse_refusal(
                verb,
                shown,
                "its rows were made from other inputs:\n" + "\n".join(f"  {d}" for d in differences),
                hint="pass --force to reuse them anyway, or start a new run",
            )
        if differences:
            notes.append(f"reusing rows made from other inputs (--force): {'; '.join(differences)}")
    if stored.cut_line is not None:
        gone = "is removed" if mode == "resume" else "is not copied"
        notes.append(
            f"the last line of {shown} (line {stored.cut_line}) was cut short (the run stopped while writing it): "
            f"it {gone} and its case runs again"
        )
    by_case = stored.last_by_case()
    known = set(dataset.cases.ids)
    unknown = [case_id for case_id in by_case if case_id not in known]
    if unknown:
        listed = ", ".join(f"'{case_id}'" for case_id in unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        notes.append(f"{shown} holds rows of {plural(len(unknown), 'case')} not in the dataset ({listed}): kept")
    if mode == "resume":
        to_run: Sequence[PreparedCase] = select(cases, (i for i in case_ids(cases) if i not in by_case))
        kept = stored.rows
    else:
        mark = pass_mark(dataset)
        again = (lambda row: not passed(row, mark)) if mode == "rerun_failed" else _has_error
        redo = {i for i in case_ids(cases) if i not in by_case or again(by_case[i])}
        to_run = select(cases, (i for i in case_ids(cases) if i in redo))
        kept = [row for row in stored.rows if row.eval_id not in redo]
    last_run_id = next((row.run_id for row in reversed(stored.rows) if row.run_id), None)
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
    )


def log_notice(message: str) -> None:
    """A run's notice (`Run.notice`: a failed batch call) as a terminal-safe `warning: ...` line
    of the `agentv` logger: on stderr when logging is not configured (`agentv eval`), where an
    application that configures logging wants it otherwise."""
    logging.getLogger("agentv").warning("warning: %s", visible(message))


def cache_settings(plan: EvalPlan) -> CacheSettings | None:
    """What the run caches (docs/incremental.md): with --cache everything, with --no-cache nothing,
    else what the dataset's `execution.cache` or each target's own `cache:` turns on. None: nothing."""
    wanted = plan.request.cache
    if wanted is False:
        return None
    everything = wanted is True or plan.dataset.model.execution.cache
    settings = CacheSettings(
        directory=Path(os.path.abspath(plan.request.cache_dir or default_cache_dir(plan.dataset.directory))),
        target=everything or getattr(plan.target, "cache", False) is True,
        judges=frozenset(
            name for name, config in plan.judges.items() if everything or getattr(config, "cache", False) is True
        ),
        # the directories whose files a command's key hashes: the dataset's repository (or the
        # current directory outside one), and the dataset's own directory
        project=(repo_root(plan.dataset.directory.resolve()) or Path.cwd().resolve(), plan.dataset.directory.resolve()),
    )
    return settings if settings.target or settings.judges else None


def execute(
    plan: EvalPlan,
    on_row: Callable[[ResultRow], None] | None = None,
    writer: JsonlWriter | None = None,
    on_notice: Callable[[str], None] = log_notice,
) -> RunSummary:
    """Run the plan: rows are written (and flushed) as cases finish; returns the summary.

    `writer`: the results file, already opened and locked by `open_results` (the CLI does that
    before planning, so a file it cannot write stops it before the healthcheck); else it is opened
    here, before any target runs (ResultsFileError, exit 2). The writer is closed either way.
    Ctrl-C or SIGTERM stops the run: finished rows stay on disk, the summary says `interrupted`.
    Any other exception (a failed write: OutputError; a closed stdout) stops the run — every
    process it started is killed — and propagates. What the run says while it runs (a failed
    batch call) goes to `on_notice`.
    """
    reuse = plan.reuse
    kept = reuse.kept if reuse is not None else []
    summary = RunSummary(total_selected=len(plan.cases) + len(kept), keep_all_lines=plan.request.verbose)
    summary.baseline_passed = plan.baseline.passed if plan.baseline is not None else None
    ordered = plan.dataset.cases if reuse is not None else plan.cases  # reused rows: in dataset order too
    positions = {case_id: i for i, case_id in enumerate(case_ids(ordered))}  # ids are unique
    options = RunOptions(workers=plan.request.workers, max_retries=plan.request.max_retries)
    if writer is not None:
        results = writer
    elif reuse is not None and reuse.mode == "resume":
        results = open_resumed(reuse.source)
    else:
        results = _open_results(plan.out, None if plan.request.out is not None else plan.dataset.name)
    with results:
        run = _executor(plan.request)(
            plan.dataset,
            plan.cases,
            plan.target,
            options=options,
            judges=plan.judges,
            default_judge=plan.default_judge,
            secrets=plan.secrets,
            catalog=plan.catalog,
            on_notice=on_notice,
            cache=cache_settings(plan),
            **({"address": plan.request.ray_address} if plan.request.executor == "ray" else {}),
        )
        with run:
            summary.results_path = results.display

            def accept(row: ResultRow) -> None:
                row.run_id = plan.run_id
                try:
                    results.write(row)
                except OSError as exc:
                    raise _write_failed(results.display, exc, summary.completed) from None
                summary.add(row, positions.get(row.eval_id))
                if on_row is not None:
                    on_row(row)

            try:
                results.start()  # an existing file is emptied only now
            except OSError as exc:
                raise _write_failed(results.display, exc, 0) from None
            manifest = _start_manifest(plan, results)
            for row in kept:  # the rows reused: in the summary (resume) and copied into the new file (re-run)
                if reuse is not None and reuse.mode != "resume":
                    row.run_id = plan.run_id
                    try:
                        results.write(row)
                    except OSError as exc:
                        raise _write_failed(results.display, exc, summary.completed) from None
                summary.add(row, positions.get(row.eval_id))
            try:
                if plan.cases:
                    run.execute(accept)
            except Interrupted:
                summary.interrupted = True
            except BaseException:
                if manifest is not None:  # best effort: the run's own failure is what is reported
                    failed = finish_manifest(manifest, summary, None).model_copy(update={"status": "failed"})
                    with contextlib.suppress(OutputError):
                        _write_manifest(results, failed)
                raise
            if manifest is not None:
                _write_manifest(
                    results,
                    finish_manifest(
                        manifest, summary, gate(summary, plan.request.threshold, plan.gates, plan.baseline)
                    ),
                )
    return summary


def merge_dataset(runs: Sequence[Path], dataset: Path | None) -> LoadedDataset | None:
    """The dataset the shards of `agentv merge` ran: `dataset` (its problems are exit 2), else the
    file the first run's manifest names when it is there unchanged (same hash); None otherwise."""
    if dataset is not None:
        return load_dataset(dataset)
    try:
        manifest = read_manifest(runs[0]) if runs else None
    except ManifestError:
        return None  # merge itself says what is wrong with it
    if manifest is None or not Path(manifest.dataset.path).is_file():
        return None
    try:
        loaded = load_dataset(manifest.dataset.path)
    except ConfigError:
        return None
    return loaded if dataset_sha256(loaded) == manifest.dataset.sha256 else None


def _executor(request: EvalRequest) -> Callable[..., Any]:
    """The run class of `--executor`: the local thread pool (`Run`), or Ray tasks (imported only then)."""
    if request.executor == "ray":
        from agentv_py.runner.ray_executor import RayRun

        return RayRun
    return Run


def tool_version() -> str:
    """agentv's version as installed (the package metadata `agentv --version` prints too)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentv-py")
    except PackageNotFoundError:
        return "unknown"


def plan_options(request: EvalRequest) -> dict[str, object]:
    """The options a manifest records (those that change what a run does or how it is judged)."""
    return {
        "target": request.target,
        "targets": str(request.targets) if request.targets is not None else None,
        "workers": request.workers,
        "max_retries": request.max_retries,
        "eval_ids": list(request.eval_ids),
        "dry_run": request.dry_run,
        "judge_target": request.judge_target,
        "threshold": request.threshold,
        **(
            {"baseline": str(request.baseline), "max_drop": request.max_drop or 0.0, "allow_flips": request.allow_flips}
            if request.baseline
            else {}
        ),
        **({"shard": str(request.shard)} if request.shard is not None else {}),
        **({"executor": "ray", "ray_address": request.ray_address} if request.executor == "ray" else {}),
    }


def _start_manifest(plan: EvalPlan, results: JsonlWriter) -> RunManifest | None:
    """Write the manifest of a run that starts (none for JSONL on stdout); a manifest that cannot be
    written stops the run like a results file that cannot be (OutputError, exit 5). A run reusing
    a results file records every selected case, run now or reused; a resumed run keeps its start."""
    if results.path is None:
        return None
    reuse = plan.reuse
    resumed = reuse.stored if reuse is not None and reuse.mode == "resume" else None
    manifest = build_manifest(
        run_id=plan.run_id,
        results=results.path,
        dataset=plan.dataset,
        dataset_sha256=dataset_sha256(plan.dataset),
        cases=reuse.selected if reuse is not None else plan.cases,
        target=plan.target,
        judges=plan.judges,
        secrets=plan.secrets,
        options=plan_options(plan.request),
        version=tool_version(),
        started_at=resumed.started_at if resumed is not None else utc_now(),
    )
    if reuse is not None and reuse.derived_from is not None:
        manifest.derived_from = reuse.derived_from
    if plan.request.shard is not None:
        manifest.shard = ShardInfo(index=plan.request.shard.index, count=plan.request.shard.count)
    _write_manifest(results, manifest)
    return manifest


def _write_manifest(results: JsonlWriter, manifest: RunManifest) -> None:
    assert results.path is not None
    path = manifest_path(results.path)
    try:
        write_manifest(path, manifest)
    except OSError as exc:
        raise OutputError(f"cannot write the run manifest {path}: {exc.strerror or exc}") from None


def open_results(out: str | None) -> JsonlWriter | None:
    """Open and lock the `--out` file before anything runs (None: the default file, made later
    by `execute`, has a name no other run uses). Raises ResultsFileError (exit 2)."""
    return None if out is None else _open_results(out)


def open_resumed(path: Path) -> JsonlWriter:
    """Open and lock the file `--resume` appends to (nothing is changed until the run starts).
    Raises ResultsFileError (exit 2): no such file, not a file, or another agentv run writing it."""
    if not path.is_file():
        reason = "no such file" if not path.exists() else "not a regular file"
        raise ResultsFileError(f"cannot resume from {path}: {reason}")
    try:
        return JsonlWriter(path, append=True)
    except ResultsUnavailable as exc:
        hint = "wait for that run to finish" if exc.locked else None
        raise ResultsFileError(f"cannot resume from {path}: {exc.reason}", hint=hint) from None


def _open_results(out: str, dataset_name: str | None = None) -> JsonlWriter:
    """A writer on `out`, or (`dataset_name` given) on a new default results file."""
    try:
        return JsonlWriter(out) if dataset_name is None else open_new_results(dataset_name)
    except ResultsUnavailable as exc:
        where = out if dataset_name is None else str(default_results_path(dataset_name).parent)
        if exc.locked:
            raise ResultsFileError(
                f"cannot write results to {where}: another agentv run is writing it",
                hint="wait for that run to finish, or pass another --out",
            ) from None
        raise ResultsFileError(f"cannot write results to {where}: {exc.reason}") from None


def _write_failed(where: str, exc: OSError, written: int) -> OutputError:
    what = "stdout was closed" if isinstance(exc, BrokenPipeError) else f"cannot write results to {where}"
    rows = f"{written} row{'s' if written != 1 else ''}"
    return OutputError(
        f"{what} ({exc.strerror or exc}); the run was stopped after {rows} and its processes were killed"
    )


@dataclass
class EvalResult:
    """What `run_eval` returns: every row (in dataset order) and the run's summary."""

    rows: list[ResultRow]
    summary: RunSummary


def run_eval(
    dataset: str | Path,
    *,
    target: str | None = None,
    targets: str | Path | None = None,
    out: str | None = None,
    workers: int = 4,
    max_retries: int = 1,
    eval_ids: Sequence[str] = (),
    judge_target: str | None = None,
    dry_run: bool = False,
) -> EvalResult:
    """Run an eval from Python, exactly as `agentv eval` does, and get the rows.

    Options mirror the command's: `target` (a name in the targets file), `targets` (the file;
    default: discovered from the dataset's directory), `out` (the JSONL path; default
    `.agentv/results/<dataset>_<UTC>.jsonl`), `workers`, `max_retries`, `eval_ids` (globs),
    `judge_target`, `dry_run` (a mock echoes the expected answers). Bad input raises
    `ConfigError` / `TargetError` before anything runs; Ctrl-C sets `summary.interrupted`.
    """
    request = EvalRequest(
        dataset=Path(dataset),
        target=target,
        targets=Path(targets) if targets is not None else None,
        out=out,
        workers=workers,
        max_retries=max_retries,
        eval_ids=list(eval_ids),
        dry_run=dry_run,
        judge_target=judge_target,
    )
    plan = plan_eval(request)
    rows: list[ResultRow] = []
    summary = execute(plan, rows.append)
    order = {case_id: i for i, case_id in enumerate(case_ids(plan.cases))}
    rows.sort(key=lambda row: order.get(row.eval_id, len(order)))
    return EvalResult(rows, summary)


# ----------------------------------------------------------------------------- the HTML report


def case_images(dataset: LoadedDataset) -> dict[str, list[str]]:
    """Each case's images as the HTML report embeds them: local files (absolute paths) and data
    URIs; an image given by URL is never fetched for a report."""
    return {
        prepared.case.id: [ref.value for ref in prepared.images if ref.source in ("file", "data")]
        for prepared in (dataset.cases[i] for i in cases_where(dataset.cases, IMAGES))
    }


def run_dataset(results: Path, dataset: Path | None) -> tuple[LoadedDataset | None, str | None]:
    """The dataset a results file was made from (`dataset`, else the one its manifest names),
    loaded; (None, why not) when it is unknown or does not load."""
    if dataset is None:
        try:
            dataset = Path(read_manifest(results).dataset.path)
        except ManifestError:
            return None, "no manifest names the dataset (pass --dataset)"
    try:
        return load_dataset(dataset), None
    except ConfigError as exc:
        return None, f"dataset {dataset} did not load: {exc.problems[0] if exc.problems else exc}"
    except AgentvError as exc:
        return None, f"dataset {dataset} did not load: {exc}"


def report_images(results: Path, dataset: Path | None) -> tuple[dict[str, list[str]], str | None]:
    """The images of the cases of a results file (`run_dataset`); ({}, why not) when its
    dataset is not available (the report is made without images)."""
    loaded, why = run_dataset(results, dataset)
    if loaded is None:
        return {}, f"{why}: shapes are drawn without the case images"
    return case_images(loaded), None
