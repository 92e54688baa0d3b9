"""The checks an eval makes before it runs anything (`preflight`), which `agentv validate` makes too:
the targets file found (or --targets), the target selected and its `${{ VAR }}` values, the judge
targets and their keys, that each program can start; and the catalog of targets a code judge's
proxy may name. Every problem is collected, in the order eval meets them."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentv_py.errors import AgentvError, ConfigError, Problem, TargetError
from agentv_py.eval_plan import EvalRequest
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
from agentv_py.loading.main_branch_targets import providers_file_hint
from agentv_py.loading.needs import evaluator_extra_problems
from agentv_py.loading.targets import ENV_RE
from agentv_py.locate import targets_search_dirs
from agentv_py.models.evaluators import CodeJudgeConfig, calls_judge
from agentv_py.models.foreign_targets import RUNNABLE_SUMMARY, AliasTarget, OpaqueTarget, not_runnable_message
from agentv_py.models.model_targets import GeminiTarget
from agentv_py.models.targets import DRY_RUN_TARGET, CliTarget, TargetConfig, is_model_target
from agentv_py.prepared import CONVERSATION, IMAGE_URLS, IMAGES, LoadedDataset, PreparedCase, cases_where
from agentv_py.runner.target_checks import check_targets

if TYPE_CHECKING:
    from agentv_py.runner.run import TargetCatalog


def proxy_catalog(dataset: LoadedDataset, loaded: LoadedTargets | None) -> TargetCatalog | None:
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

    from agentv_py.runner.run import TargetCatalog  # here: validate and dry runs need no runner

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
            name = loaded.resolve(name, unset=unset)  # `use_target` followed: the run is the target's
        except (ConfigError, TargetError) as exc:
            checked.failures.append(exc)
            name = None
        selected = loaded.get(name) if name is not None else None
        if isinstance(selected, OpaqueTarget):  # before `${{ VAR }}` values it will never use are read
            basis = selected
            runnable = [t.name for t in loaded.model.targets if not isinstance(t, (OpaqueTarget, AliasTarget))]
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
                _check_batching(checked.target, cases)
            except (ConfigError, TargetError) as exc:
                checked.failures.append(exc)
    checked.default_judge, origin = _default_judge(request, dataset, basis)
    if needs_judges:
        problems, names = judge_target_problems(dataset, loaded, checked.default_judge, origin, unset)
        if problems:  # the request's hint when no judge could be chosen at all
            checked.failures.append(
                ConfigError(problems, request.no_judge_hint if checked.default_judge is None else None)
            )
        for name in names:
            if checked.target is not DRY_RUN_TARGET and loaded.resolve(name) == checked.target.name:
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
            from agentv_py.runner.chat_messages import NO_KEY, api_key  # only for a model target

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
        dataset = load_dataset(path, flagged_only=True)  # validate runs no case: keeps only those checked
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
        searched = targets_search_dirs(dataset.directory)
        places = ", ".join(str(d) for d in searched)
        hint = (
            "pass --targets PATH, or use --dry-run to check the dataset without a target"
            if not request.dry_run
            else "LLM judges need their judge targets defined in a targets file"
        )
        raise TargetError(
            "no targets file found (looked for .agentv/targets.yaml and targets.yaml in: " + places + ")",
            hint=providers_file_hint(searched) or hint,
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
    if request.fallback_judge:
        return request.fallback_judge, request.fallback_origin
    if request.no_judge_reason is not None:
        return None, request.no_judge_reason
    if request.dry_run:
        return None, "with --dry-run no eval target can judge"
    if target is DRY_RUN_TARGET:
        return None, "no eval target was selected"
    if is_model_target(target):
        return target.name, f"target '{target.name}', which judges its own answers"
    return None, f"target '{target.name}' is a {target.provider} target; only a model target judges itself"


def _check_batching(target: TargetConfig, cases: Sequence[PreparedCase]) -> None:
    """A `provider_batching` target answers every case in one call: a conversation case needs a
    call per turn, with the answers before it."""
    if not (isinstance(target, CliTarget) and target.provider_batching):
        return
    talks = [cases[i].case.id for i in cases_where(cases, CONVERSATION)]
    if talks:
        more = f" (and {len(talks) - 1} more)" if len(talks) > 1 else ""
        raise TargetError(
            f"target '{target.name}' answers every case in one call (provider_batching: true), but case "
            f"'{talks[0]}'{more} is a conversation, which needs a call per turn",
            hint="run the conversation cases with a target without provider_batching (--target NAME)",
        )


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
