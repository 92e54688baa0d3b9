"""One eval, start to finish, minus the printing: plan it (load, select, check), then execute
it (a `Run` writing rows and a summary). The layer between the CLI and loader/runner/report."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_py.errors import AgentvError, ConfigError, OutputError
from agentv_py.eval_plan import (
    EvalPlan,
    EvalRequest,
)
from agentv_py.loading import (
    load_dataset,
)
from agentv_py.loading.fingerprint import dataset_sha256
from agentv_py.locate import output_clash, repo_root
from agentv_py.models.results import ResultRow
from agentv_py.preflight import (
    preflight,
    proxy_catalog,
)
from agentv_py.prepared import LoadedDataset, PreparedCase, case_ids
from agentv_py.recorder import (
    open_results_file,
    open_resumed,
    record_manifest,
    start_manifest,
    write_failed,
)
from agentv_py.report.gates import Baseline, BaselineError, load_baseline
from agentv_py.report.jsonl import JsonlWriter, default_results_path
from agentv_py.report.manifest import (
    ManifestError,
    finish_manifest,
    read_manifest,
)
from agentv_py.report.render import visible
from agentv_py.report.summary import RunSummary, gate
from agentv_py.reuse_plan import (
    plan_reuse,
)
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.cache_store import default_cache_dir
from agentv_py.runner.engine import RunOptions, select_cases, shard_cases
from agentv_py.runner.run import Interrupted, Run
from agentv_py.runner.target_checks import run_healthcheck

if TYPE_CHECKING:
    from agentv_py.runner.ray_executor import RayRun


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
    request = plan.request
    options = RunOptions(
        workers=request.workers, max_retries=request.max_retries, ray_address=request.ray_address, run_id=plan.run_id
    )
    if writer is not None:
        results = writer
    elif reuse is not None and reuse.mode == "resume":
        results = open_resumed(reuse.source)
    else:
        results = open_results_file(plan.out, None if plan.request.out is not None else plan.dataset.name)
    with results:
        run = _executor(plan, options, on_notice)
        with run:
            summary.results_path = results.display

            def accept(row: ResultRow) -> None:
                try:
                    results.write(row)
                except OSError as exc:
                    raise write_failed(results.display, exc, summary.completed) from None
                summary.add(row, positions.get(row.eval_id))
                if on_row is not None:
                    on_row(row)

            try:
                results.start()  # an existing file is emptied only now
            except OSError as exc:
                raise write_failed(results.display, exc, 0) from None
            manifest = start_manifest(plan, results)
            for row in kept:  # the rows reused: in the summary (resume) and copied into the new file (re-run)
                if reuse is not None and reuse.mode != "resume":
                    try:
                        results.write(row.model_copy(update={"run_id": plan.run_id}))
                    except OSError as exc:
                        raise write_failed(results.display, exc, summary.completed) from None
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
                        record_manifest(results, failed)
                raise
            if manifest is not None:
                record_manifest(
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


def _executor(plan: EvalPlan, options: RunOptions, on_notice: Callable[[str], None] | None) -> Run | RayRun:
    """The run of `--executor`: the local thread pool (`Run`), or Ray tasks (`RayRun`, imported
    only then); both take the plan's pieces by name."""
    executor: type[Run] | type[RayRun] = Run
    if plan.request.executor == "ray":
        from agentv_py.runner.ray_executor import RayRun

        executor = RayRun
    return executor(
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
