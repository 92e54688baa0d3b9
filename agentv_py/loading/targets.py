"""Targets files (SPEC §2): discovery, loading, `${{ VAR }}` substitution, target selection, and
the judge targets a dataset's LLM evaluators need.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentv_py.errors import ConfigError, Problem, TargetError
from agentv_py.extras import target_extra_problem
from agentv_py.loading.evaluator_lists import added_evaluators, walk_evaluators
from agentv_py.loading.main_branch_targets import main_branch_problems
from agentv_py.loading.source import Source, display_path, read_yaml
from agentv_py.loading.validation import validate
from agentv_py.locate import targets_search_dirs
from agentv_py.models.base import suggest
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import (
    CodeJudgeConfig,
    CompositeConfig,
    EvaluatorConfig,
    calls_judge,
    judge_target_name,
)
from agentv_py.models.foreign_targets import AliasTarget, OpaqueTarget, not_runnable_message
from agentv_py.models.targets import TargetConfig, TargetEntry, TargetsFile
from agentv_py.prepared import IMAGES, LoadedDataset, cases_where

ENV_RE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

TARGETS_FILENAMES = (Path(".agentv") / "targets.yaml", Path("targets.yaml"))


def discover_targets_file(dataset_dir: Path) -> Path | None:
    """First `.agentv/targets.yaml` or `targets.yaml` in `targets_search_dirs(dataset_dir)`: walking
    up from the dataset dir to the repository root (then the current directory, when inside that
    repository); outside a repository, the dataset dir and the current directory only."""
    for directory in targets_search_dirs(dataset_dir):
        for name in TARGETS_FILENAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


@dataclass
class LoadedTargets:
    """A validated targets file."""

    path: Path
    model: TargetsFile
    raw: dict[str, Any]
    source: Source

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.model.targets]

    def get(self, name: str) -> TargetConfig | None:
        """The target `name` names, `use_target` followed (`resolve`); None when there is none."""
        if name not in self.names:
            return None
        concrete = self.resolve(name)
        assert concrete is not None  # without `unset` (or STATIC) resolve raises rather than stop
        return self._concrete(self._entry(concrete))

    def resolve(
        self, name: str, environ: Mapping[str, str] | None = None, *, unset: list[Problem] | None = None
    ) -> str | None:
        """The name of the target `name` ends at, following `use_target` (AgentV's aliases; a
        `${{ VAR }}` one read from the environment). A name no target has, or a cycle, is a
        ConfigError located at the `use_target` that makes it; so is a variable that is not set,
        unless `unset` is given (`agentv validate`): its problem is appended there and None returned.
        Given `environ=STATIC`, a `${{ VAR }}` alias ends the walk (None): the checks made on load."""
        environ = os.environ if environ is None else environ
        chain = [name]
        while isinstance(entry := self._entry(chain[-1]), AliasTarget):
            where: list[str | int] = ["targets", self.names.index(entry.name), "use_target"]
            match = ENV_RE.fullmatch(entry.use_target)
            if match is not None and environ is STATIC:
                return None
            if match is not None and not environ.get(match.group(1), "").strip():
                var = match.group(1)
                unset_text = f"environment variable {var} is not set (used as ${{{{ {var} }}}})"
                problem = self.source.problem(where, unset_text)
                if unset is None:
                    raise ConfigError([problem])
                unset.append(problem)
                return None
            wanted = environ[match.group(1)].strip() if match is not None else entry.use_target
            written = f"{entry.use_target} ('{wanted}')" if match is not None else f"'{wanted}'"
            if wanted not in self.names:
                close = suggest(wanted, self.names)
                guess = f" (did you mean '{close}'?)" if close else ""
                raise ConfigError(
                    [
                        self.source.problem(
                            where,
                            f"use_target {written} names no target of this file{guess}. "
                            f"Available targets: {', '.join(self.names)}",
                        )
                    ]
                )
            if wanted in chain:
                cycle = " -> ".join([*chain, wanted])
                problem = self.source.problem(where, f"use_target {written} makes a cycle: {cycle}")
                raise UseTargetCycle([problem], names=set(chain))
            chain.append(wanted)
        return chain[-1]

    def _entry(self, name: str) -> TargetEntry:
        return next(t for t in self.model.targets if t.name == name)

    def with_env(
        self, name: str, environ: dict[str, str] | None = None, *, unset: list[Problem] | None = None
    ) -> tuple[TargetConfig, list[str]]:
        """The named target with `${{ VAR }}` values read from the environment.

        Returns the target and the substituted values (secrets, to be redacted from messages).
        A variable that is not set is a ConfigError; given `unset` (`agentv validate`, run where
        secrets are not), its problem is appended there instead and the `${{ VAR }}` is kept as written.
        """
        environ = dict(os.environ) if environ is None else environ
        concrete = self.resolve(name, environ)
        assert concrete is not None  # resolve raises when it cannot follow a use_target
        index = self.names.index(concrete)
        secrets: list[str] = []
        used: list[str] = []  # the variables substituted, for messages
        problems: list[Problem] = []

        def substitute(value: Any, parts: list[str | int]) -> Any:
            if isinstance(value, str):

                def one(match: re.Match[str]) -> str:
                    var = match.group(1)
                    if var not in environ:
                        problem = self.source.problem(
                            parts, f"environment variable {var} is not set (used as ${{{{ {var} }}}})"
                        )
                        if unset is not None:
                            unset.append(problem)
                            return match.group(0)
                        problems.append(problem)
                        return ""
                    if environ[var]:
                        secrets.append(environ[var])
                    used.append(var)
                    return environ[var]

                return ENV_RE.sub(one, value)
            if isinstance(value, dict):
                return {k: substitute(v, [*parts, k]) for k, v in value.items()}
            if isinstance(value, list):
                return [substitute(v, [*parts, i]) for i, v in enumerate(value)]
            return value

        raw_target = self.raw["targets"][index]
        substituted = substitute(raw_target, ["targets", index])
        if problems:
            raise ConfigError(problems)
        if substituted == raw_target:
            return self._concrete(self.model.targets[index]), secrets
        # Validated again in place (so problems keep their lines). A reason never shows a value:
        # secrets are masked, and a reason quoting part of one (truncated) is withheld.
        raw_targets = list(self.raw["targets"])
        raw_targets[index] = substituted
        model, invalid = validate(self.source, {**self.raw, "targets": raw_targets}, TargetsFile)
        if invalid:
            from dataclasses import replace

            from agentv_py.process.redact import Redactor

            redact = Redactor(secrets)
            names = ", ".join(f"${{{{ {var} }}}}" for var in dict.fromkeys(used))
            raise ConfigError(
                [
                    replace(
                        problem,
                        message=f"not valid after substituting {names} (the reason is not shown: it quotes the value)"
                        if redact.reveals(redact(problem.message))
                        else f"{redact(problem.message)} (after substituting {names})",
                    )
                    for problem in invalid
                ]
            )
        assert model is not None
        return self._concrete(model.targets[index]), secrets

    @staticmethod
    def _concrete(entry: TargetEntry) -> TargetConfig:
        assert not isinstance(entry, AliasTarget)  # `resolve` ends at a target that is not an alias
        return entry


STATIC: Mapping[str, str] = MappingProxyType({})  # `LoadedTargets.resolve`: no variable is read


def load_targets(path: str | Path) -> LoadedTargets:
    """Load and validate a targets file; raise ConfigError listing every problem found (a
    `use_target` naming no target, or making a cycle, included; one naming `${{ VAR }}` is
    followed when the target is used)."""
    source, raw = read_yaml(Path(path))
    syntax = main_branch_problems(source, raw)
    if syntax:
        raise ConfigError(syntax)
    model, problems = validate(source, raw, TargetsFile)
    if problems:
        raise ConfigError(problems)
    assert model is not None
    loaded = LoadedTargets(Path(path).resolve(), model, raw, source)
    found: list[Problem] = []
    in_cycles: set[str] = set()  # a cycle is said once, where the first of its targets closes it
    for target in model.targets:
        if isinstance(target, AliasTarget) and target.name not in in_cycles:
            try:
                loaded.resolve(target.name, STATIC)
            except UseTargetCycle as exc:
                in_cycles |= exc.names
                found.extend(p for p in exc.problems if p not in found)
            except ConfigError as exc:
                found.extend(p for p in exc.problems if p not in found)
    if found:
        raise ConfigError(sorted(found, key=lambda p: p.line or 0))
    return loaded


class UseTargetCycle(ConfigError):
    """`use_target`s that lead back to a target of theirs: `names` are those of the chain."""

    def __init__(self, problems: list[Problem], *, names: set[str]) -> None:
        super().__init__(problems)
        self.names = names


def select_target_name(
    targets: LoadedTargets, cli_name: str | None, dataset: Dataset, dataset_path: Path | None = None
) -> str:
    """`--target` > dataset `execution.target` > a target named `default`. The error names the
    targets file read and (given `dataset_path`) the dataset it was read for."""
    wanted = cli_name or dataset.target_name or "default"
    if wanted not in targets.names:
        origin = (
            "--target"
            if cli_name
            else "execution.target in the dataset"
            if dataset.execution.target
            else "target in the dataset"
            if dataset.target
            else "default"
        )
        available = ", ".join(targets.names) or "(none)"
        read_for = f", the targets file read for {display_path(dataset_path)}" if dataset_path is not None else ""
        raise TargetError(
            f"target '{wanted}' (from {origin}) is not defined in {display_path(targets.path)}{read_for}. "
            f"Available targets: {available}",
            hint="pass --target NAME, set execution.target in the dataset, or pass --targets PATH",
        )
    return wanted


def judge_target_problems(
    dataset: LoadedDataset,
    targets: LoadedTargets,
    default_judge: str | None,
    default_origin: str,
    unset: list[Problem] | None = None,
) -> tuple[list[Problem], list[str]]:
    """Judge targets of LLM evaluators — those of the evaluator lists and those AgentV added to a
    case (its `rubrics:`, the default `llm_judge`): each resolvable, defined, able to judge, and (for
    cases with images) marked `vision: true`. `default_origin` says where `default_judge` came from,
    or, when there is none, why. A judge's `use_target` is followed (an unset `${{ VAR }}` in it
    goes to `unset` when given: `LoadedTargets.resolve`). Returns the problems and the judge
    target names the run needs (as the evaluators name them)."""
    source = dataset.source
    assert source is not None
    problems: list[Problem] = []
    needed: list[str] = []

    def check(where: list[str | int], config: EvaluatorConfig, judged_images: list[str], no_judge: str) -> None:
        """`judged_images`: the ids of the cases with images that `config` judges."""
        label = f"{config.type} '{config.display_name}'"
        explicit = judge_target_name(config)
        name = explicit or default_judge
        if name is None:
            problems.append(source.problem(where, no_judge))
            return
        origin = "target" if explicit else default_origin
        at = [*where, "target"] if origin == "target" else where
        if name not in targets.names:
            available = ", ".join(targets.names) or "(none)"
            problems.append(
                source.problem(
                    at,
                    f"{label}: judge target '{name}' (from {origin}) is not defined in "
                    f"{display_path(targets.path)}. Available targets: {available}",
                )
            )
            return
        try:
            concrete = targets.resolve(name, unset=unset)  # `use_target` followed
        except ConfigError as exc:
            problems.extend(p for p in exc.problems if p not in problems)
            return
        if concrete is None:  # its `${{ VAR }}` is not set (a warning: `unset`)
            return
        judge = targets.get(concrete)
        assert judge is not None
        if isinstance(judge, OpaqueTarget):
            problems.append(
                source.problem(
                    at, f"{label}: judge target '{name}' (from {origin}) cannot judge: {not_runnable_message(judge)}"
                )
            )
            return
        missing = target_extra_problem(judge)
        if missing is not None:
            problems.append(source.problem(at, f"{label}: judge target '{name}' (from {origin}): {missing}"))
            return
        if name not in needed:
            needed.append(name)
        with_images = judged_images if not isinstance(config, CodeJudgeConfig) else []
        if with_images and not judge.vision:
            more = f" (and {len(with_images) - 1} more)" if len(with_images) > 1 else ""
            problems.append(
                source.problem(
                    where,
                    f"{label}: judge target '{name}' is not marked vision: true, "
                    f"but case '{with_images[0]}'{more} has images; "
                    f"set vision: true on '{name}' if its model accepts images, "
                    "or choose a vision judge with target: NAME",
                )
            )

    why = f" ({default_origin})" if default_judge is None else ""
    with_images = (dataset.cases[i] for i in cases_where(dataset.cases, IMAGES))
    suite_images = [c.case.id for c in with_images if c.case.case_evaluators is None]
    for where, config in walk_evaluators(dataset.model):  # composite members included
        # The cases these evaluators judge: the suite's go to every case without its own list.
        if where[0] == "execution":
            judged = suite_images
        else:
            case = dataset.cases[int(where[1])]
            judged = [case.case.id] if case.images else []
        if isinstance(config, CompositeConfig):
            if config.aggregator.type == "llm_judge":  # it reads the members' results, never images
                judge = config.aggregator_judge()
                check(
                    [*where, "aggregator"],
                    judge,
                    [],
                    f"{judge.type} '{judge.display_name}' needs a judge target: set target: NAME on the "
                    f"aggregator, execution.judge_target in the dataset, or judge_target on the eval target{why}",
                )
            continue  # its members are walked next
        if calls_judge(config):
            check(
                where,
                config,
                judged,
                f"{config.type} '{config.display_name}' needs a judge target: set target: NAME on it, "
                f"execution.judge_target in the dataset, or judge_target on the eval target{why}",
            )
    for i, where, config in added_evaluators(dataset.model):
        case = dataset.cases[i]
        if where[-1] == "rubrics":
            no_judge = (
                f"case '{case.case.id}': its rubrics need a judge target: set execution.judge_target in the "
                f"dataset or judge_target on the eval target, or pass --judge-target NAME{why}"
            )
        else:
            no_judge = (
                f"case '{case.case.id}' has no evaluators, so AgentV's default llm_judge scores it, and it needs "
                f"a judge target: set execution.judge_target in the dataset or judge_target on the eval target, "
                f"pass --judge-target NAME, or give the case evaluators{why}"
            )
        check(where, config, [case.case.id] if case.images else [], no_judge)
    return problems, needed
