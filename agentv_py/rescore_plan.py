"""Planning `agentv rescore RUN`: what it is asked (`RescoreRequest`), the results file scanned and
its manifest trusted only for its own rows, the dataset loaded and checked as `agentv eval
--dry-run` plans it (its judges refused when a results file, not you, chose them), and which row
stands for each case, all resolved into the `RunSpec` of the re-score (`RescorePlan.spec`, run by
`pipeline.execute` like any other run)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.errors import AgentvError
from agentv_py.eval_plan import EvalPlan, EvalRequest
from agentv_py.loading.fingerprint import dataset_sha256
from agentv_py.loading.inputs import judge_commands
from agentv_py.locate import same_file
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig, calls_judge
from agentv_py.models.indexed import IdPositions
from agentv_py.models.manifest import RunManifest, TargetInfo
from agentv_py.models.targets import DRY_RUN_TARGET
from agentv_py.prepared import OWN_EVALUATORS, RUBRICS, CaseSelection, PreparedCase, Repeated, case_ids, cases_where
from agentv_py.repeat_plan import Repeats, refuse_with
from agentv_py.report.jsonl import (
    not_results,
)
from agentv_py.report.manifest import (
    ManifestError,
    manifest_path,
    new_run_id,
    read_manifest,
)
from agentv_py.report.repeats import MIXED_HINT, mixed_message
from agentv_py.report.text import plural
from agentv_py.run_spec import ManifestSeed, ResultsFile, RunSpec, StoredSource
from agentv_py.runner.engine import RunOptions
from agentv_py.session import plan_eval
from agentv_py.stored_rows import (
    LineIndex,
    listed_ids,
    manifest_of,
    run_judge,
    scan_rows,
)

LINES_SHOWN = 10  # unreadable lines listed one by one before a count
# What preflight says when no eval target can judge in a dry run; rescore has no eval target either.
_NO_TARGET_REASON = "agentv rescore runs no eval target, so none judges"


@dataclass
class RescoreRequest:
    results: Path
    dataset: Path | None = None  # default: the dataset the manifest names
    out: str | None = None  # default: a new file in .agentv/results/
    targets: Path | None = None  # default: the run's --targets, else found from the dataset
    workers: int = 4
    threshold: float | None = None
    baseline: Path | None = None  # --baseline BASE.jsonl: gate against a previous run (with max_drop)
    max_drop: float | None = None
    allow_flips: int = 0  # --allow-flips (with --baseline)
    judge_target: str | None = None
    verbose: bool = False
    cache: bool | None = None  # --cache / --no-cache: LLM-judge replies from the cache (targets never run)
    cache_dir: Path | None = None
    rejudges: int | None = None  # --rejudge J: each stored answer scored J times


JUDGES_SHOWN = 5  # judge commands a refusal names


@dataclass(frozen=True)
class RescorePlan:
    spec: RunSpec  # what `pipeline.execute` runs
    eval_plan: EvalPlan  # the dataset, its judges and their secrets, as `agentv eval --dry-run` plans them
    cases: Sequence[PreparedCase]  # the cases re-scored, in the order of their rows
    target: TargetInfo  # the target that gave the answers (the new manifest records it)
    workers: int  # worker threads: the requested number when judges run, else 1 (`_judged`)
    warnings: list[str] = field(default_factory=list)


def _judged(cases: Sequence[PreparedCase]) -> bool:
    """Does a code or LLM judge run for some case? Then worker threads score the rows (judges
    wait on processes and HTTP); else the calling thread scores them inline (pure scoring is
    bound by the interpreter). Only the cases whose evaluator lists may differ are read: those
    with their own list or rubrics, and one of the others (they share the suite's list)."""
    special = cases_where(cases, OWN_EVALUATORS | RUBRICS)
    taken = set(special)
    other = next((i for i in range(len(cases)) if i not in taken), None)
    read = special if other is None else [*special, other]
    return any(_waits(config) for i in read for config in cases[i].evaluators)


def _waits(config: Any) -> bool:
    """Does this evaluator wait on a process or a model (a code or LLM judge, at any depth)?"""
    if isinstance(config, CompositeConfig):
        return config.aggregator.type != "weighted_average" or any(_waits(m) for m in config.evaluators)
    return isinstance(config, CodeJudgeConfig) or calls_judge(config)


def _read_old_manifest(request: RescoreRequest, warnings: list[str]) -> RunManifest | None:
    """The manifest of the results file. Missing or unreadable: an error (exit 2) without
    --dataset (the dataset is unknown), a warning with it (the rows alone are re-scored)."""
    path = manifest_path(request.results)
    try:
        return read_manifest(request.results)
    except ManifestError as exc:
        missing = not os.path.lexists(path)
        if request.dataset is None:
            raise AgentvError(
                f"{exc}: the dataset it was run with is unknown"
                if missing
                else f"{exc}; the dataset it was run with is unknown",
                hint="pass --dataset DATASET to re-score the rows alone",
            ) from None
        warnings.append(
            f"{exc}: re-scoring from the rows alone" if missing else f"{exc}; re-scoring from the rows alone"
        )
        return None


def _plan_dataset(request: RescoreRequest, manifest: RunManifest | None, dataset: Path) -> EvalPlan:
    """The dataset loaded and checked, its judge targets resolved, as `agentv eval --dry-run`
    plans (no eval target is selected or started). The default judge: --judge-target, else
    execution.judge_target, else the one the old run used by default (`run_judge`)."""
    targets = request.targets  # never the one the manifest records: a results file chooses no configuration
    eval_request = EvalRequest(
        dataset=dataset,
        targets=targets,
        workers=request.workers,
        max_retries=0,
        verbose=request.verbose,
        dry_run=True,
        judge_target=request.judge_target,
        # the judge the old run used by default, when nothing names one now
        fallback_judge=run_judge(manifest) if request.judge_target is None else None,
        fallback_origin="the judge the re-scored run used by default",
        no_judge_reason=_NO_TARGET_REASON,
        no_judge_hint="pass --judge-target NAME",
        threshold=request.threshold,
        baseline=request.baseline,
        max_drop=request.max_drop,
        allow_flips=request.allow_flips,
        cache=request.cache,
        cache_dir=request.cache_dir,
    )
    return plan_eval(eval_request)


def plan_rescore(request: RescoreRequest) -> RescorePlan:
    """Read the results file and its manifest, load the dataset, decide which rows to re-score.
    Raises AgentvError (exit 2) before anything runs: no results file, no dataset known, an
    invalid dataset or judge target, a file with no row or whose rows are mostly not the
    dataset's cases."""
    results = request.results
    if (why := not_results(results)) is not None:
        raise AgentvError(f"results file {why}: {results}", hint="pass the JSONL file `agentv eval` wrote (its --out)")
    warnings: list[str] = []
    manifest = _read_old_manifest(request, warnings)
    scan = scan_rows(results)
    if manifest is not None and not manifest_of(manifest, scan.run_ids, scan.unmarked):
        beside = f"{manifest_path(results)} is the manifest of run {manifest.run_id}, not of the rows of {results}"
        if request.dataset is None:
            raise AgentvError(f"{beside}: the dataset they were run with is unknown", hint="pass --dataset DATASET")
        warnings.append(f"{beside}: re-scoring from the rows alone")
        manifest = None
    if request.dataset is not None:
        dataset_path = request.dataset
    else:
        assert manifest is not None
        dataset_path = Path(manifest.dataset.path)
        if not dataset_path.exists():
            raise AgentvError(
                f"the dataset {results} was run with, {dataset_path}, no longer exists",
                hint="pass --dataset DATASET",
            )
    eval_plan = _plan_dataset(request, manifest, dataset_path)
    dataset = eval_plan.dataset
    recorded = manifest.options.get("targets") if manifest is not None else None
    found = eval_plan.targets_file
    if (
        request.targets is None
        and isinstance(recorded, str)
        and (found is None or not same_file(found, Path(recorded)))
    ):
        warnings.append(
            f"the run used --targets {recorded}; rescore reads only a targets file you name or the project's "
            f"({found if found is not None else 'none found'}): pass --targets to use it"
        )
    judges = judge_commands(dataset)
    if request.dataset is None and judges:  # a results file is data: it never chooses code to run
        more = len(judges) - JUDGES_SHOWN
        listed = "; ".join(judges[:JUDGES_SHOWN]) + (f"; and {more} more" if more > 0 else "")
        raise AgentvError(
            f"{results}'s manifest names the dataset {dataset.path}, whose judges would run: {listed}. "
            "rescore runs judges only from a dataset you name",
            hint=f"check it, then pass --dataset {dataset.path}",
        )
    all_ids = case_ids(dataset.cases)
    # case id -> its place in the dataset: the dry run's map when it has every case (no `skip:`)
    positions = eval_plan.spec.positions
    if positions is None or len(positions) != len(all_ids):
        positions = IdPositions(all_ids)
    by_id = positions
    shown = str(results)

    if not scan.last:
        why = "it is empty" if not scan.skipped and scan.truncated is None else "no line of it is a result row"
        raise AgentvError(f"{shown} has no result rows ({why}): nothing to re-score")
    known = sum(1 for case_id in scan.last if case_id in by_id)
    gone = sorted(case_id for case_id in scan.last if case_id not in by_id)
    if known * 2 < len(scan.last):
        ran = f" (the run used {manifest.dataset.path})" if manifest is not None else ""
        raise AgentvError(
            f"{shown} does not hold results of {dataset.path}: only {known} of the "
            f"{plural(len(scan.last), 'case')} it has rows for {'is' if known == 1 else 'are'} in that dataset "
            f"(not in it: {listed_ids(gone)})",
            hint=f"pass the dataset the run used with --dataset{ran}; rescore refuses a file whose rows are "
            "mostly for cases the dataset does not have",
        )

    if manifest is not None:
        if Path(manifest.dataset.path).resolve() != dataset.path.resolve():
            warnings.append(f"{shown} was written for {manifest.dataset.path}; re-scoring with {dataset.path}")
        elif manifest.dataset.sha256 != dataset_sha256(dataset):
            warnings.append(
                f"{dataset.path} changed since {shown} was written: its rows are scored with the evaluators "
                "and expected answers the dataset has now"
            )
        if manifest.status == "running":
            warnings.append(f"the run that wrote {shown} has not finished (or was killed): its rows so far are used")
    elif scan.datasets and dataset.name not in scan.datasets:
        names = ", ".join(sorted(scan.datasets))
        warnings.append(f"the rows of {shown} are of dataset {names}; re-scoring with '{dataset.name}'")
    for number, reason in scan.skipped[:LINES_SHOWN]:
        warnings.append(f"{shown}:{number}: skipped: {reason}")
    if len(scan.skipped) > LINES_SHOWN:
        warnings.append(f"{shown}: {len(scan.skipped) - LINES_SHOWN} more lines skipped (not listed)")
    if scan.truncated is not None:
        warnings.append(
            f"{shown}:{scan.truncated}: the last line is cut short (its run was stopped while writing it): "
            "skipped; its case counts as having no row"
        )
    repeated = [f"{case_id} ({count} rows)" for case_id, count in sorted(scan.repeated.items())]
    if repeated:
        have = "has" if len(repeated) == 1 else "have"
        warnings.append(
            f"{plural(len(repeated), 'case')} {have} more than one row in {shown} (the last one is used): "
            + listed_ids(repeated)
        )
    if gone:
        are = "is" if len(gone) == 1 else "are"
        warnings.append(
            f"{plural(len(gone), 'row')} of {shown} {are} for cases no longer in the dataset (dropped): "
            + listed_ids(gone)
        )
    missing = [case_id for case_id in all_ids if case_id not in scan.last]
    if missing:
        have = "has" if len(missing) == 1 else "have"
        warnings.append(
            f"{plural(len(missing), 'case')} in the dataset {have} no row in {shown}: {listed_ids(missing)} "
            "(run them with agentv eval)"
        )

    if scan.first_repeated is not None and scan.first_single is not None:
        raise AgentvError(f"{shown}: {mixed_message(scan.first_repeated, scan.first_single)}", hint=MIXED_HINT)
    repeats = max((repeat for _, repeat in scan.runs), default=1)
    runs = scan.runs if repeats > 1 else {(case_id, 0): line for (case_id, _), line in scan.runs.items()}
    lines = LineIndex(scan.last, positions, all_ids, runs)  # the row that stands for each case (run), in file order
    scanned_target, run_ids = scan.target, sorted(scan.run_ids)
    del scan  # its {case id: line} map: not held while the run goes
    if manifest is not None:
        target = manifest.target
        derived_from: str | None = manifest.run_id
    else:
        target = TargetInfo(name=scanned_target or "unknown", provider="unknown", sha256="")
        derived_from = run_ids[0] if len(run_ids) == 1 else None
    cases: Sequence[PreparedCase] = (
        Repeated(dataset.cases, repeats, lines.units) if repeats > 1 else CaseSelection(dataset.cases, lines.positions)
    )
    runs_of = Repeats(repeats, request.rejudges or 1)
    refuse_with(EvalRequest(dataset=dataset.path, baseline=request.baseline), runs_of, DRY_RUN_TARGET, cases)
    judged = _judged(cases)
    workers = request.workers if judged else 1
    spec = _spec(
        request,
        eval_plan,
        CaseSelection(dataset.cases, sorted(set(lines.positions))),  # dataset order: the manifest's
        cases,
        StoredSource(target.name, results, lines),
        target,
        derived_from,
        workers if judged else None,
        positions,
        runs_of,
    )
    return RescorePlan(spec, eval_plan, cases, target, workers, warnings)


def _spec(
    request: RescoreRequest,
    eval_plan: EvalPlan,
    recorded: Sequence[PreparedCase],
    cases: Sequence[PreparedCase],
    answers: StoredSource,
    target: TargetInfo,
    derived_from: str | None,
    workers: int | None,
    positions: Mapping[str, int],
    runs: Repeats,
) -> RunSpec:
    """The re-score as a run: the stored answers stand for the target (no program runs), its
    judges run on `workers` threads (None: no judge runs, the rows are scored inline), judge replies may come
    from the cache (never a target's answer), and the manifest records the old run's target."""
    run_id = new_run_id()
    dry = eval_plan.spec.execution
    cache = dry.cache
    if cache is not None:
        cache = dataclasses.replace(cache, target=False) if cache.judges else None
    execution = dataclasses.replace(
        dry,
        kind="local" if workers is not None else "inline",
        cases=cases,
        options=RunOptions(workers=workers or 1, max_retries=0, run_id=run_id, rejudges=runs.rejudges),
        cache=cache,
        answers=answers,
    )
    options: dict[str, object] = {
        "command": "rescore",
        "rescored": str(request.results.resolve()),
        "targets": str(eval_plan.targets_file) if eval_plan.targets_file is not None else None,
        "workers": workers or 1,
        "judge_target": eval_plan.default_judge,
        "threshold": request.threshold,
    }
    if request.baseline:
        options |= {"baseline": str(request.baseline), "max_drop": request.max_drop or 0.0}
        options |= {"allow_flips": request.allow_flips}
    seed = ManifestSeed(
        dataset=eval_plan.dataset,
        cases=recorded,
        target=DRY_RUN_TARGET,
        judges=eval_plan.judges,
        secrets=dry.secrets,
        options=options,
        derived_from=derived_from,
        recorded_target=target,
        repeats=runs.repeats,
        rejudges=runs.rejudges,
    )
    return RunSpec(
        run_id=run_id,
        execution=execution,
        results=ResultsFile(out=None, dataset_name=eval_plan.dataset.name),
        manifest=seed,
        positions=positions,
        threshold=request.threshold,
        gates=eval_plan.spec.gates,
        baseline=eval_plan.baseline,
        verbose=request.verbose,
    )
