"""One eval run, start to finish, minus the printing: plan it, then execute it."""

from __future__ import annotations

import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Callable

from agentv_py.errors import Problem, TargetError
from agentv_py.loading import (
    LoadedDataset,
    PreparedCase,
    discover_targets_file,
    load_dataset,
    load_targets,
    search_dirs,
    select_target_name,
)
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import TargetConfig
from agentv_py.report.jsonl import JsonlWriter, default_results_path
from agentv_py.report.summary import RunSummary
from agentv_py.runner.engine import Interrupted, RunOptions, run_cases, select_cases
from agentv_py.runner.targets import DRY_RUN_TARGET, make_runner, run_healthcheck


@dataclass
class EvalRequest:
    dataset: Path
    target: str | None = None
    targets: Path | None = None
    out: str | None = None
    workers: int = 4
    max_retries: int = 1
    eval_ids: list[str] = field(default_factory=list)
    verbose: bool = False
    dry_run: bool = False


@dataclass
class EvalPlan:
    request: EvalRequest
    dataset: LoadedDataset
    cases: list[PreparedCase]
    target: TargetConfig
    secrets: list[str]
    out: str

    @property
    def warnings(self) -> list[Problem]:
        return self.dataset.warnings


def plan_eval(request: EvalRequest) -> EvalPlan:
    """Load and check everything; raise (exit 2) before anything runs."""
    dataset = load_dataset(request.dataset)
    cases = select_cases(dataset.cases, request.eval_ids)
    secrets: list[str] = []
    if request.dry_run:
        target: TargetConfig = DRY_RUN_TARGET
    else:
        path = request.targets or discover_targets_file(dataset.directory)
        if path is None:
            places = ", ".join(str(d) for d in search_dirs(dataset.directory))
            raise TargetError(
                "no targets file found (looked for .agentv/targets.yaml and targets.yaml in: " + places + ")",
                hint="pass --targets PATH, or use --dry-run to check the dataset without a target",
            )
        loaded = load_targets(path)
        name = select_target_name(loaded, request.target, dataset.model)
        target, secrets = loaded.with_env(name)
        run_healthcheck(target, dataset.directory, secrets)
    out = request.out or str(default_results_path(dataset.name))
    return EvalPlan(request, dataset, cases, target, secrets, out)


def execute(plan: EvalPlan, on_row: Callable[[ResultRow], None] | None = None) -> RunSummary:
    """Run the plan: rows are written (and flushed) as cases finish; returns the summary.

    Ctrl-C or SIGTERM stops the run: finished rows stay on disk, the summary says `interrupted`.
    """
    summary = RunSummary(total_selected=len(plan.cases), keep_all_lines=plan.request.verbose)
    work_dir = Path(tempfile.mkdtemp(prefix="agentv-"))
    runner = make_runner(plan.target, dataset_dir=plan.dataset.directory, work_dir=work_dir, secrets=plan.secrets)
    positions = {prepared.case.id: i for i, prepared in enumerate(plan.cases)}  # ids are unique
    previous = _raise_on_sigterm()
    try:
        with JsonlWriter(plan.out) as writer:
            summary.results_path = writer.display

            def accept(row: ResultRow) -> None:
                writer.write(row)
                summary.add(row, positions.get(row.eval_id))
                if on_row is not None:
                    on_row(row)

            options = RunOptions(workers=plan.request.workers, max_retries=plan.request.max_retries)
            try:
                run_cases(plan.dataset, plan.cases, runner, options, accept)
            except Interrupted:
                summary.interrupted = True
    finally:
        _restore_sigterm(previous)
        shutil.rmtree(work_dir, ignore_errors=True)
    return summary


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _raise_on_sigterm() -> object:
    try:
        return signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread (e.g. embedded use): leave signals alone
        return None


def _restore_sigterm(previous: object) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]
