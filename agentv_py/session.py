"""One eval, start to finish, minus the printing: plan it (load, select, check), then execute
it (a `Run` writing rows and a summary). The layer between the CLI and loader/runner/report."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from agentv_py.errors import AgentvError, ConfigError, OutputError, Problem, ResultsFileError, TargetError
from agentv_py.extras import target_extra_problem
from agentv_py.loading import (
    LoadedTargets,
    discover_targets_file,
    display_path,
    evaluator_lists,
    judge_target_problems,
    load_dataset,
    load_targets,
    select_target_name,
)
from agentv_py.loading.dotenv import apply_dotenv
from agentv_py.loading.evaluator_lists import added_evaluators, walk_evaluators
from agentv_py.loading.fingerprint import build_manifest, dataset_sha256
from agentv_py.loading.inputs import judge_files
from agentv_py.loading.needs import evaluator_extra_problems
from agentv_py.loading.targets import ENV_RE
from agentv_py.locate import Role, inputs_among, output_clash, repo_root, targets_search_dirs, working_dir
from agentv_py.models.dataset import Gates
from agentv_py.models.evaluators import CodeJudgeConfig, calls_judge
from agentv_py.models.manifest import RunManifest, ShardInfo
from agentv_py.models.model_targets import GeminiTarget
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import (
    RUNNABLE_SUMMARY,
    CliTarget,
    OpaqueTarget,
    TargetConfig,
    is_model_target,
    not_runnable_message,
)
from agentv_py.prepared import IMAGE_URLS, IMAGES, LoadedDataset, PreparedCase, case_ids, cases_where, select
from agentv_py.report.gates import Baseline, BaselineError, load_baseline
from agentv_py.report.jsonl import JsonlWriter, ResultsUnavailable, default_results_path, open_new_results
from agentv_py.report.manifest import (
    ManifestError,
    finish_manifest,
    manifest_path,
    new_run_id,
    read_manifest,
    utc_now,
    write_manifest,
)
from agentv_py.report.render import visible
from agentv_py.report.reuse import StoredError, manifest_differences, passed, read_stored
from agentv_py.report.summary import RunSummary, gate, plural
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.cache_keys import named_files
from agentv_py.runner.cache_store import default_cache_dir
from agentv_py.runner.chat_messages import NO_KEY, api_key
from agentv_py.runner.engine import RunOptions, Shard, pass_mark, select_cases, shard_cases
from agentv_py.runner.run import Interrupted, Run, TargetCatalog
from agentv_py.runner.target_checks import check_targets, run_healthcheck
from agentv_py.runner.targets import DRY_RUN_TARGET

ReuseMode = Literal["resume", "rerun_failed", "retry_errors"]


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
    threshold: float | None = None  # --threshold: the gate the manifest records (the CLI applies it)
    baseline: Path | None = None  # --baseline BASE.jsonl: gate against a previous run (with max_drop)
    max_drop: float | None = None  # --max-drop (default 0.0 with --baseline)
    allow_flips: int = 0  # --allow-flips: cases the baseline passed that may not pass now
    cache: bool | None = None  # --cache / --no-cache; None: the dataset's and targets' `cache:` decide
    cache_dir: Path | None = None  # --cache-dir (default: .agentv/cache/ of the current directory)
    reuse: Path | None = None  # --resume / --rerun-failed / --retry-errors RESULTS (`reuse_mode` says which)
    reuse_mode: ReuseMode | None = None
    force: bool = False  # --force: reuse the rows although the inputs changed or the manifest is gone
    shard: Shard | None = None  # --shard K/N: only the cases of that shard (`runner.engine.shard_of`)
    executor: Literal["local", "ray"] = "local"  # --executor: threads here, or Ray tasks (runner/ray_executor.py)
    ray_address: str | None = None  # --ray-address (else $RAY_ADDRESS, else a local Ray instance)
    # the files the run writes, with their options (--out and its manifest, the reports): planning
    # refuses one that is an input (`EvalPlan.inputs`), before the healthcheck
    outputs: list[Role] = field(default_factory=list)


@dataclass
class EvalPlan:
    request: EvalRequest
    dataset: LoadedDataset
    cases: Sequence[PreparedCase]
    target: TargetConfig
    secrets: list[str]
    out: str
    judges: dict[str, TargetConfig] = field(default_factory=dict)  # judge targets by name
    default_judge: str | None = None
    targets_file: Path | None = None  # the targets file read (None: none, in a dry run)
    catalog: TargetCatalog | None = None  # every target, for code judges' proxies (`_proxy_catalog`)
    run_id: str = field(default_factory=new_run_id)  # written into every row and the manifest
    reuse: Reuse | None = None  # --resume / --rerun-failed / --retry-errors: `cases` are those to run
    baseline: Baseline | None = None  # --baseline, read when planning (a bad one: exit 2 before anything runs)

    @property
    def gates(self) -> Gates | None:
        """The dataset's `gates:`."""
        return self.dataset.model.gates

    def inputs(self, outputs: list[Role] | None = None) -> list[Role]:
        """Every file the run reads, with its role (what no output may replace, `locate.output_clash`):
        the dataset, the targets file, --baseline and a reused results file with their manifests,
        the judges' scripts and prompt files, the files the target's command names (its program),
        and of the cases' input files, those one of `outputs` already is (`locate.inputs_among`).
        --resume's file is the output itself, not an input."""
        roles: list[Role] = [("the dataset", self.dataset.path), ("the targets file", self.targets_file)]
        for role, path in (("--baseline", self.request.baseline), (self._reused_role(), self._reused())):
            if path is not None:
                roles += [(f"the {role} results", path), (f"the {role} manifest", manifest_path(path))]
        target = self.target
        if isinstance(target, CliTarget):
            cwd = working_dir(self.dataset.directory, target.cwd)
            roles += [
                (f"the program of target '{target.name}'", path)
                for path in named_files(target.command_template, cwd).values()
            ]
        case_files = (
            (f"an input file of case '{case.case.id}'", Path(path))
            for case in self.cases
            for path in [*case.file_paths, *(image.value for image in case.images if image.source == "file")]
        )
        return roles + judge_files(self.dataset) + inputs_among(outputs or [], case_files)

    def _reused(self) -> Path | None:
        reuse = self.reuse
        return reuse.source if reuse is not None and reuse.mode != "resume" else None

    def _reused_role(self) -> str:
        return f"--{self.reuse.mode.replace('_', '-')}" if self.reuse is not None else ""

    @property
    def warnings(self) -> list[Problem]:
        return self.dataset.warnings

    @property
    def target_origin(self) -> str:
        """Where the target came from, for the run's header: `from .agentv/targets.yaml`."""
        shown = display_path(self.targets_file) if self.targets_file is not None else None
        if not self.request.dry_run:
            return f"from {shown}" if shown else "(no targets file)"
        return f"(dry run, judge targets from {shown})" if shown else "(dry run, no targets file read)"


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
        catalog=_proxy_catalog(dataset, loaded),
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


@dataclass
class Reuse:
    """A results file reused by `--resume`, `--rerun-failed` or `--retry-errors` (docs/incremental.md)."""

    mode: ReuseMode
    source: Path
    shown: str  # the file as the user gave it
    selected: Sequence[PreparedCase]  # every selected case (the manifest's); `to_run` are those that run
    to_run: Sequence[PreparedCase]
    kept: list[ResultRow]  # resume: the file's rows; a re-run: the rows copied into the new file
    stored: RunManifest | None  # None: missing or unreadable, reused with --force
    run_id: str | None  # resume: the run's own id (rows and manifest keep it); None: a new one
    derived_from: str | None = None  # a re-run: the run whose rows it copies
    notes: list[str] = field(default_factory=list)  # warnings for the user: a cut line, rows of unknown cases


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


def _proxy_catalog(dataset: LoadedDataset, loaded: LoadedTargets | None) -> TargetCatalog | None:
    """When a code judge has `target:`, every target of the targets file, for its proxy to name
    (AgentV's `availableTargets`): resolved when a request first names it, its `${{ VAR }}` values
    read then (an unset one is that request's error, not the run's). None otherwise."""
    if loaded is None or not any(
        isinstance(config, CodeJudgeConfig) and config.target is not None
        for _, config in walk_evaluators(dataset.model)
    ):
        return None

    def resolve(name: str) -> tuple[TargetConfig, list[str]]:
        config = loaded.get(name)
        if isinstance(config, OpaqueTarget):  # before reading values it will never use
            raise TargetError(not_runnable_message(config))
        return loaded.with_env(name)

    return TargetCatalog(loaded.names, resolve)


@dataclass
class Preflight:
    """What the checks made before a run found (`preflight`), and the pieces of the plan."""

    failures: list[AgentvError] = field(default_factory=list)  # in the order eval meets them
    warnings: list[Problem] = field(default_factory=list)  # unset `${{ VAR }}` (missing_env="warn")
    note: str | None = None  # why the targets were not checked (no targets file, when validating)
    loaded: LoadedTargets | None = None
    target: TargetConfig = field(default_factory=lambda: DRY_RUN_TARGET)
    judges: dict[str, TargetConfig] = field(default_factory=dict)
    default_judge: str | None = None
    secrets: list[str] = field(default_factory=list)


def preflight(
    request: EvalRequest,
    dataset: LoadedDataset,
    cases: Sequence[PreparedCase],
    *,
    missing_env: Literal["error", "warn"] = "error",
) -> Preflight:
    """The checks `agentv eval` makes before it runs anything (the healthcheck aside: that is an
    action) and `agentv validate` makes too: the targets file found for the dataset (or
    --targets), the selected target (not with --dry-run), its `${{ VAR }}` values, the judge
    targets, API keys, and that each program can start. Every check is made; `failures` lists
    what eval refuses to start with, in the order it meets them (it raises the first).

    missing_env="warn" (validate, run in CI without secrets): an unset `${{ VAR }}` is a warning,
    the value is kept as written, and the other checks go on (a program, cwd or PATH that holds
    one is not checked); no targets file is a `note`, not a failure.
    """
    checked = Preflight()
    missing_extras = evaluator_extra_problems(dataset)
    if missing_extras:
        checked.failures.append(ConfigError(missing_extras))
    validating = missing_env == "warn"
    unset = checked.warnings if validating else None
    needs_judges = _uses_judges(dataset)
    if not needs_judges and request.dry_run:
        return checked
    try:
        loaded = _load_targets(request, dataset, missing_ok=validating)
    except (ConfigError, TargetError) as exc:
        checked.failures.append(exc)
        return checked
    if loaded is None:
        what = "judge targets" if request.dry_run else "target and judge targets" if needs_judges else "target"
        checked.note = f"{what} not checked: no targets file found"
        return checked
    checked.loaded = loaded
    basis: TargetConfig = DRY_RUN_TARGET  # whose judge_target is the default judge
    if not request.dry_run:
        name: str | None = None
        try:
            name = select_target_name(loaded, request.target, dataset.model, dataset.path)
        except TargetError as exc:
            checked.failures.append(exc)
        selected = loaded.get(name) if name is not None else None
        if isinstance(selected, OpaqueTarget):  # before `${{ VAR }}` values it will never use are read
            basis = selected
            runnable = [t.name for t in loaded.model.targets if not isinstance(t, OpaqueTarget)]
            shown = display_path(loaded.path)
            checked.failures.append(
                TargetError(
                    not_runnable_message(selected),
                    hint=f"targets agentv can run in {shown}: {', '.join(runnable)}; select one with --target NAME"
                    if runnable
                    else f"{shown} has no target of a provider agentv runs ({RUNNABLE_SUMMARY}); add one",
                )
            )
        elif selected is not None:
            basis = selected
            try:
                missing = target_extra_problem(selected)
                if missing is not None:
                    raise TargetError(f"target '{selected.name}': {missing}")
                checked.target, checked.secrets = loaded.with_env(selected.name, unset=unset)
                basis = checked.target
                _check_model_target(checked.target, cases)
            except (ConfigError, TargetError) as exc:
                checked.failures.append(exc)
    checked.default_judge, origin = _default_judge(request, dataset, basis)
    if needs_judges:
        problems, names = judge_target_problems(dataset, loaded, checked.default_judge, origin)
        if problems:
            checked.failures.append(ConfigError(problems))
        for name in names:
            if checked.target is not DRY_RUN_TARGET and name == checked.target.name:
                checked.judges[name] = checked.target  # the eval target judges too: one runner
                continue
            try:
                checked.judges[name], judge_secrets = loaded.with_env(name, unset=unset)
            except ConfigError as exc:
                checked.failures.append(exc)
                continue
            checked.secrets.extend(judge_secrets)
    for config in (checked.target, *checked.judges.values()):
        if is_model_target(config):
            try:
                key = api_key(config)  # no key for the provider's API: a config error now, not one per case
            except TargetError as exc:
                checked.failures.append(exc)
                continue
            if key != NO_KEY and not ENV_RE.search(key):
                checked.secrets.append(key)  # masked in the healthcheck's messages too
    if not request.dry_run:
        startable = [c for c in (checked.target, *checked.judges.values()) if not _unresolved_program(c)]
        try:
            check_targets(startable, dataset.directory, checked.secrets)  # each program can start
        except TargetError as exc:
            checked.failures.append(exc)
    return checked


def _unresolved_program(config: TargetConfig) -> bool:
    """Does what `check_targets` reads of a cli target (its first word, cwd, PATH) still hold a
    `${{ VAR }}` (an unset variable, kept as written when validating)? Then it is not checked."""
    if not isinstance(config, CliTarget):
        return False
    words = config.command_template.split(None, 1)
    program = words[0] if words else ""  # `${{ PY }} run.py` is split inside the `${{ … }}`
    return "${{" in program or any(ENV_RE.search(text) for text in (config.cwd or "", config.env.get("PATH", "")))


@dataclass
class FileCheck:
    """What `agentv validate` found in one file."""

    path: Path
    noun: str  # what `count` counts: cases or targets
    count: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    note: str | None = None  # why a check was not made (no targets file for the target and judges)
    hints: dict[int, str] = field(default_factory=dict)  # eval's hint, shown after problems[index]


def check_file(path: Path, request: EvalRequest | None = None) -> FileCheck:
    """Run the loading code `agentv eval` runs on one file (a `targets.yaml` is recognised by its
    name), plus, for a dataset, the checks eval makes before it runs (`preflight`, with
    `request`'s --target and --targets): an unset `${{ VAR }}` is a warning, no targets file a
    note. Never raises ConfigError or TargetError: they are reported."""
    if path.name == "targets.yaml":
        try:
            targets = load_targets(path)
        except ConfigError as exc:
            return FileCheck(path, "targets", problems=exc.problems)
        return FileCheck(path, "targets", count=len(targets.model.targets))
    dataset_of = path.with_suffix(".jsonl")
    if path.suffix == ".yaml" and dataset_of.is_file():  # the sidecar of a JSONL dataset: checked with it
        check = check_file(dataset_of, request)
        sidecar_note = f"the sidecar of {dataset_of.name}: checked as part of that dataset"
        return replace(check, path=path, note=f"{sidecar_note}; {check.note}" if check.note else sidecar_note)
    try:
        dataset = load_dataset(path)
    except ConfigError as exc:
        return FileCheck(path, "cases", problems=exc.problems)
    base = request or EvalRequest(path)
    checked = preflight(EvalRequest(path, base.target, base.targets), dataset, dataset.cases, missing_env="warn")
    unset = list(dict.fromkeys(checked.warnings))  # a target that is also a judge: said once
    check = FileCheck(path, "cases", len(dataset.cases), warnings=[*dataset.warnings, *unset])
    check.note = checked.note
    for failure in checked.failures:
        if isinstance(failure, ConfigError):
            check.problems.extend(failure.problems)
            continue
        shown = display_path(path)  # an error eval prints unlocated: its lines, each for this dataset
        check.problems.extend(Problem(shown, None, "", line) for line in failure.message.split("\n"))
        if failure.hint:
            check.hints[len(check.problems) - 1] = failure.hint
    return check


def _uses_judges(dataset: LoadedDataset) -> bool:
    """Does any evaluator call a judge: one of a list, or one AgentV adds (case rubrics, the default judge)?"""
    listed = (config for _, configs in evaluator_lists(dataset.model) for config in configs)
    added = (config for _, _, config in added_evaluators(dataset.model))
    return any(calls_judge(config) for config in itertools.chain(listed, added))


def _load_targets(request: EvalRequest, dataset: LoadedDataset, *, missing_ok: bool = False) -> LoadedTargets | None:
    """The targets file: --targets, else the one found from the dataset's directory. None when
    none is found and `missing_ok`; else that is a TargetError. The dataset's `.env` files are
    applied to the environment first (`apply_dotenv`), as AgentV did before resolving targets."""
    apply_dotenv(dataset.directory)
    path = request.targets or discover_targets_file(dataset.directory)
    if path is None and missing_ok:
        return None
    if path is None:
        places = ", ".join(str(d) for d in targets_search_dirs(dataset.directory))
        raise TargetError(
            "no targets file found (looked for .agentv/targets.yaml and targets.yaml in: " + places + ")",
            hint="pass --targets PATH, or use --dry-run to check the dataset without a target"
            if not request.dry_run
            else "LLM judges need their judge targets defined in a targets file",
        )
    return load_targets(path)


def _default_judge(request: EvalRequest, dataset: LoadedDataset, target: TargetConfig) -> tuple[str | None, str]:
    """The judge of LLM evaluators without their own `target:`, and where it came from (no judge:
    why): --judge-target > execution.judge_target > the eval target's judge_target > the eval target
    itself when it is a model target (AgentV: "if unset, the eval target itself judges")."""
    if request.judge_target:
        return request.judge_target, "--judge-target"
    if dataset.model.execution.judge_target:
        return dataset.model.execution.judge_target, "execution.judge_target"
    if target.judge_target:
        return target.judge_target, f"judge_target of target '{target.name}'"
    if request.dry_run:
        return None, "with --dry-run no eval target can judge"
    if target is DRY_RUN_TARGET:
        return None, "no eval target was selected"
    if is_model_target(target):
        return target.name, f"target '{target.name}', which judges its own answers"
    return None, f"target '{target.name}' is a {target.provider} target; only a model target judges itself"


def _check_model_target(target: TargetConfig, cases: Sequence[PreparedCase]) -> None:
    """A model target given images must be marked `vision: true`; a gemini one cannot take image
    URLs (agentv sends Gemini images inline and fetches nothing)."""
    if not is_model_target(target):
        return
    with_images = [cases[i].case.id for i in cases_where(cases, IMAGES)]
    if with_images and not target.vision:
        more = f" (and {len(with_images) - 1} more)" if len(with_images) > 1 else ""
        raise TargetError(
            f"target '{target.name}' is not marked vision: true, but case '{with_images[0]}'{more} has images",
            hint=f"set vision: true on '{target.name}' if its model accepts images",
        )
    if isinstance(target, GeminiTarget):
        with_urls = [cases[i] for i in cases_where(cases, IMAGE_URLS)]
        if with_urls:
            url = next(image for image in with_urls[0].images if image.source == "url")
            more = f" (and {len(with_urls) - 1} more)" if len(with_urls) > 1 else ""
            raise TargetError(
                f"target '{target.name}' (provider {target.provider}) cannot take image URLs, but case "
                f"'{with_urls[0].case.id}'{more} gives one ({url.name})",
                hint="give the image as a local file or a data URI; agentv does not fetch URLs",
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
