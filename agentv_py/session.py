"""One eval, start to finish, minus the printing: plan it (load, select, check, resolve into a
frozen `RunSpec`), then execute it (`pipeline.execute`: the one run loop). The layer between the
CLI and loader/runner/report."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentv_py import pipeline
from agentv_py.errors import AgentvError, ConfigError
from agentv_py.eval_plan import EvalPlan, EvalRequest
from agentv_py.loading import load_dataset
from agentv_py.loading.fingerprint import dataset_sha256
from agentv_py.locate import output_clash, repo_root
from agentv_py.models.indexed import IdPositions
from agentv_py.models.manifest import ShardInfo
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import TargetConfig
from agentv_py.pipeline import log_notice
from agentv_py.preflight import preflight, proxy_catalog
from agentv_py.prepared import LoadedDataset, PreparedCase, Repeated, case_ids
from agentv_py.recorder import plan_options
from agentv_py.repeat_plan import Repeats, refuse_with
from agentv_py.report.gates import Baseline, BaselineError, load_baseline
from agentv_py.report.jsonl import JsonlWriter, default_results_path
from agentv_py.report.manifest import ManifestError, new_run_id, read_manifest
from agentv_py.report.summary import RunSummary
from agentv_py.run_spec import Execution, ManifestSeed, ResultsFile, RunSpec
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.cache_store import default_cache_dir
from agentv_py.runner.engine import RunOptions, exclude_cases, select_cases, shard_cases, skip_cases
from agentv_py.runner.stop_early import StoppingCases, stopping
from agentv_py.runner.target_checks import run_healthcheck
from agentv_py.runner.target_fingerprint import target_fingerprint

__all__ = ["EvalResult", "cache_settings", "execute", "log_notice", "merge_dataset", "plan_eval", "run_eval"]


def plan_eval(request: EvalRequest) -> EvalPlan:
    """Load and check everything; raise (exit 2) before anything runs. The plan's `spec` is all
    the run reads."""
    dataset = load_dataset(request.dataset)
    selected, excluded = exclude_cases(select_cases(dataset.cases, request.eval_ids), request.exclude)
    cases, skipped = skip_cases(shard_cases(selected, request.shard))
    checked = preflight(request, dataset, cases)
    if checked.failures:
        raise checked.failures[0]
    if request.executor == "ray" and not request.dry_run:
        from agentv_py.runner.ray_executor import check_ray

        check_ray(checked.target, checked.judges)
    refuse_with(request, Repeats(request.repeats or 1, request.rejudges or 1), checked.target, cases)
    out = request.out or str(default_results_path(dataset.name))
    fingerprint = target_fingerprint(checked.target, dataset.directory, project_dirs(dataset), checked.secrets)
    reuse = None
    if request.reuse is not None:  # --resume, --rerun-failed, --retry-errors: a fresh run reads no stored rows
        from agentv_py.reuse_plan import plan_reuse

        reuse = plan_reuse(request, dataset, cases, checked, out, fingerprint)
    baseline = None
    if request.baseline is not None:
        baseline = _load_baseline(request.baseline, request.max_drop or 0.0, request.allow_flips, dataset, cases)
    runs = Repeats(request.repeats or 1, request.rejudges or 1)
    if reuse is not None and reuse.mode == "resume":
        runs = Repeats(reuse.repeats, reuse.rejudges)
    refuse_with(request, runs, checked.target, cases)
    to_run = reuse.to_run if reuse is not None else cases
    original = to_run
    if reuse is None and runs.repeats > 1:
        to_run = Repeated(cases, runs.repeats)
    stop = None
    if request.stop_early:
        to_run = _stopping(request, dataset, baseline, to_run)
        stop = to_run.stop
    loaded = checked.loaded
    run_id = reuse.run_id if reuse is not None and reuse.run_id is not None else new_run_id()
    resumed = reuse is not None and reuse.mode == "resume"
    ordered = dataset.cases if reuse is not None else original  # reused rows: in dataset order too
    execution = Execution(
        kind=request.executor,
        dataset=dataset,
        cases=to_run,
        target=checked.target,
        options=RunOptions(
            workers=request.workers,
            max_retries=request.max_retries,
            ray_address=request.ray_address,
            run_id=run_id,
            verbose=request.verbose,
            rejudges=runs.rejudges,
        ),
        judges=checked.judges,
        default_judge=checked.default_judge,
        secrets=checked.secrets,
        catalog=proxy_catalog(dataset, loaded),
        cache=cache_settings(request, dataset, checked.target, checked.judges),
    )
    seed = ManifestSeed(
        dataset=dataset,
        cases=reuse.selected if reuse is not None else original,
        target=checked.target,
        judges=checked.judges,
        secrets=checked.secrets,
        options=plan_options(request),
        started_at=reuse.stored.started_at if resumed and reuse is not None and reuse.stored is not None else None,
        derived_from=reuse.derived_from if reuse is not None else None,
        shard=ShardInfo(index=request.shard.index, count=request.shard.count) if request.shard is not None else None,
        fingerprint=fingerprint,
        skipped=tuple(skipped),
        repeats=runs.repeats,
        rejudges=runs.rejudges,
    )
    spec = RunSpec(
        run_id=run_id,
        execution=execution,
        results=ResultsFile(
            out=request.out, dataset_name=dataset.name, resume=reuse.source if resumed and reuse is not None else None
        ),
        manifest=seed,
        kept=reuse.kept if reuse is not None else (),
        copy_kept=reuse is not None and not resumed,
        positions=IdPositions(case_ids(ordered)),  # ids are unique
        threshold=request.threshold,
        gates=dataset.model.gates,
        baseline=baseline,
        verbose=request.verbose,
        excluded=excluded,
        strict_xfail=request.strict_xfail,
        confidence=request.confidence,
        stop_early=stop,
    )
    plan = EvalPlan(
        spec,
        dataset,
        original,  # in the dataset's order: what checks read (the run's own order is the spec's)
        checked.target,
        checked.judges,
        checked.default_judge,
        loaded.path if loaded else None,
        out,
        request.dry_run,
        shard=request.shard,
        baseline_path=request.baseline,
        reuse=reuse,
        baseline=baseline,
    )
    clash = output_clash(request.outputs, plan.inputs(request.outputs))
    if clash is not None:  # before the healthcheck: nothing runs, nothing is written
        raise AgentvError(clash, hint="see agentv eval --help")
    if not request.dry_run and to_run:  # nothing left to run: no target is called, not even to check it
        slots = min(request.workers, len(to_run))  # worker targets start this many workers at once
        warm = run_healthcheck(checked.target, dataset.directory, checked.secrets, slots=slots)
        if warm is not None:  # the workers it started: the run adopts them
            spec = dataclasses.replace(spec, execution=dataclasses.replace(execution, warm=warm))
            plan = dataclasses.replace(plan, spec=spec)
    return plan


def _stopping(
    request: EvalRequest, dataset: LoadedDataset, baseline: Baseline | None, cases: Sequence[PreparedCase]
) -> StoppingCases:
    """--stop-early's cases: refused where it cannot decide the gate (docs/statistics.md)."""
    if request.reuse is not None:
        raise AgentvError(
            "--stop-early starts a fresh run: --resume (without --stop-early) runs the rest of a stopped one",
            hint="see agentv eval --help",
        )
    if dataset.model.gates is not None or baseline is not None:
        raise AgentvError(
            "--stop-early decides the --threshold gate (the mean score) or the default one (every case passed); "
            "this run has " + ("the dataset's gates" if dataset.model.gates is not None else "--baseline"),
            hint="run it without --stop-early",
        )
    return stopping(cases, request.threshold, request.confidence)


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


def cache_settings(
    request: EvalRequest, dataset: LoadedDataset, target: TargetConfig, judges: Mapping[str, TargetConfig]
) -> CacheSettings | None:
    """What the run caches (docs/incremental.md): with --cache everything, with --no-cache nothing,
    else what the dataset's `execution.cache` or each target's own `cache:` turns on. None: nothing."""
    wanted = request.cache
    if wanted is False:
        return None
    everything = wanted is True or dataset.model.execution.cache
    settings = CacheSettings(
        directory=Path(os.path.abspath(request.cache_dir or default_cache_dir(dataset.directory))),
        target=everything or getattr(target, "cache", False) is True,
        judges=frozenset(
            name for name, config in judges.items() if everything or getattr(config, "cache", False) is True
        ),
        project=project_dirs(dataset),
    )
    return settings if settings.target or settings.judges else None


def project_dirs(dataset: LoadedDataset) -> tuple[Path, Path]:
    """The directories whose files are a target's program (hashed in its cache keys and its
    fingerprint): the dataset's repository (or the current directory outside one), and the
    dataset's own directory."""
    return (repo_root(dataset.directory.resolve()) or Path.cwd().resolve(), dataset.directory.resolve())


def execute(
    plan: EvalPlan,
    on_row: Callable[[ResultRow], None] | None = None,
    writer: JsonlWriter | None = None,
    on_notice: Callable[[str], None] = log_notice,
) -> RunSummary:
    """Run the plan's spec (`pipeline.execute`): rows are written (and flushed) as cases finish;
    returns the summary. `writer`: the results file, already opened and locked by `open_results`
    (the CLI does that before planning, so a file it cannot write stops it before the
    healthcheck); else it is opened here, before any target runs (ResultsFileError, exit 2).
    Ctrl-C or SIGTERM stops the run: finished rows stay on disk, the summary says `interrupted`.
    Any other exception (a failed write: OutputError; a closed stdout) stops the run — every
    process it started is killed — and propagates."""
    return pipeline.execute(plan.spec, on_row, writer, on_notice)


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
