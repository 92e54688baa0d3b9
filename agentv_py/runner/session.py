"""One eval run, start to finish, minus the printing: plan it, then execute it."""

from __future__ import annotations

import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Callable

from agentv_py.chat import ChatClient
from agentv_py.errors import ConfigError, Problem, TargetError
from agentv_py.loading import (
    LoadedDataset,
    LoadedTargets,
    PreparedCase,
    discover_targets_file,
    evaluator_lists,
    judge_target_problems,
    load_dataset,
    load_targets,
    search_dirs,
    select_target_name,
)
from agentv_py.models.evaluators import JUDGE_CONFIG_TYPES
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import OpenAITarget, TargetConfig
from agentv_py.report.jsonl import JsonlWriter, default_results_path
from agentv_py.report.summary import RunSummary
from agentv_py.runner.engine import Interrupted, Judging, RunOptions, run_cases, select_cases
from agentv_py.runner.llm import api_key
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
    judge_target: str | None = None  # --judge-target: the default judge for LLM evaluators


@dataclass
class EvalPlan:
    request: EvalRequest
    dataset: LoadedDataset
    cases: list[PreparedCase]
    target: TargetConfig
    secrets: list[str]
    out: str
    judges: dict[str, TargetConfig] = field(default_factory=dict)  # judge targets by name
    default_judge: str | None = None

    @property
    def warnings(self) -> list[Problem]:
        return self.dataset.warnings


def plan_eval(request: EvalRequest) -> EvalPlan:
    """Load and check everything; raise (exit 2) before anything runs."""
    dataset = load_dataset(request.dataset)
    cases = select_cases(dataset.cases, request.eval_ids)
    needs_judges = _uses_judges(dataset)
    secrets: list[str] = []
    loaded = _load_targets(request, dataset) if needs_judges or not request.dry_run else None
    if request.dry_run or loaded is None:
        target: TargetConfig = DRY_RUN_TARGET
    else:
        name = select_target_name(loaded, request.target, dataset.model)
        target, secrets = loaded.with_env(name)
        _check_model_target(target, cases)
    judges: dict[str, TargetConfig] = {}
    default_judge, origin = _default_judge(request, dataset, target)
    if needs_judges and loaded is not None:
        problems, names = judge_target_problems(dataset, loaded, default_judge, origin)
        if problems:
            raise ConfigError(problems)
        for name in names:
            judges[name], judge_secrets = loaded.with_env(name)
            secrets.extend(judge_secrets)
    for config in (target, *judges.values()):
        if isinstance(config, OpenAITarget):
            api_key(config)  # no key for the OpenAI API: a config error now, not one per case
    if not request.dry_run:
        run_healthcheck(target, dataset.directory, secrets)
    out = request.out or str(default_results_path(dataset.name))
    return EvalPlan(request, dataset, cases, target, secrets, out, judges, default_judge)


def judge_check(dataset: LoadedDataset) -> tuple[list[Problem], str | None]:
    """For `agentv validate`: the judge-target problems `eval` would refuse to start with, using
    the targets file `eval` would find. Returns (problems, None), or ([], why nothing was checked)."""
    if not _uses_judges(dataset):
        return [], None
    path = discover_targets_file(dataset.directory)
    if path is None:
        return [], "judge targets not checked: no targets file found"
    loaded = load_targets(path)
    target = loaded.get(dataset.model.execution.target or "default")
    if target is None:
        target = DRY_RUN_TARGET
    default_judge, origin = _default_judge(EvalRequest(dataset.path), dataset, target)
    problems, _ = judge_target_problems(dataset, loaded, default_judge, origin)
    return problems, None


def _uses_judges(dataset: LoadedDataset) -> bool:
    return any(isinstance(config, JUDGE_CONFIG_TYPES) for _, configs in evaluator_lists(dataset.model) for config in configs)


def _load_targets(request: EvalRequest, dataset: LoadedDataset) -> LoadedTargets:
    path = request.targets or discover_targets_file(dataset.directory)
    if path is None:
        places = ", ".join(str(d) for d in search_dirs(dataset.directory))
        raise TargetError(
            "no targets file found (looked for .agentv/targets.yaml and targets.yaml in: " + places + ")",
            hint="pass --targets PATH, or use --dry-run to check the dataset without a target"
            if not request.dry_run else "LLM judges need their judge targets defined in a targets file",
        )
    return load_targets(path)


def _default_judge(request: EvalRequest, dataset: LoadedDataset, target: TargetConfig) -> tuple[str | None, str]:
    """--judge-target > execution.judge_target > the eval target's judge_target."""
    if request.judge_target:
        return request.judge_target, "--judge-target"
    if dataset.model.execution.judge_target:
        return dataset.model.execution.judge_target, "execution.judge_target"
    return target.judge_target, f"judge_target of target '{target.name}'"


def _check_model_target(target: TargetConfig, cases: list[PreparedCase]) -> None:
    if not isinstance(target, OpenAITarget) or target.vision:
        return
    with_images = [c.case.id for c in cases if c.images]
    if with_images:
        more = f" (and {len(with_images) - 1} more)" if len(with_images) > 1 else ""
        raise TargetError(
            f"target '{target.name}' is not marked vision: true, but case '{with_images[0]}'{more} has images",
            hint=f"set vision: true on '{target.name}' if its model accepts images",
        )


def execute(plan: EvalPlan, on_row: Callable[[ResultRow], None] | None = None) -> RunSummary:
    """Run the plan: rows are written (and flushed) as cases finish; returns the summary.

    Ctrl-C or SIGTERM stops the run: finished rows stay on disk, the summary says `interrupted`.
    """
    summary = RunSummary(total_selected=len(plan.cases), keep_all_lines=plan.request.verbose)
    work_dir = Path(tempfile.mkdtemp(prefix="agentv-"))
    runner = make_runner(plan.target, dataset_dir=plan.dataset.directory, work_dir=work_dir, secrets=plan.secrets)
    clients: dict[str, ChatClient] = {}
    for name, config in plan.judges.items():
        clients[name] = runner if config is plan.target else make_runner(
            config, dataset_dir=plan.dataset.directory, work_dir=work_dir, secrets=plan.secrets
        )
    judging = Judging(clients, plan.default_judge)
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
                run_cases(plan.dataset, plan.cases, runner, options, accept, judging=judging)
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
