"""`.agentv/config.yaml` (agentv-reference §1.4): which of a case's input files are guideline files.

The file is looked for where a targets file is (`locate.targets_search_dirs`: the dataset's
directory up to the repository root, never outside the project); the first one that says
`$schema: agentv-config-v2` is used. One without that `$schema` is ignored with a warning and the
search goes on upwards, as AgentV's loader did until 2026-01-20. `guideline_patterns` are
micromatch-style globs (`wcmatch`, with `**` spanning directories, `{a,b}`, extglobs, `!` negation,
and no match inside dot directories) tested against an input file's path relative to the
repository root (outside a repository: the current directory). With no config, or none listing
patterns, no file is a guideline file: AgentV had no default patterns in this era (its
`agentv init` template wrote `**/*.instructions.md`, `**/*.prompt.md`, `**/SKILL.md`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.source import Source, read_yaml
from agentv_py.locate import repo_root, targets_search_dirs
from agentv_py.models.base import suggest

CONFIG_SCHEMA = "agentv-config-v2"
CONFIG_NAME = Path(".agentv") / "config.yaml"
CONFIG_KEYS = ("$schema", "guideline_patterns")
# AgentV v4.42's config keys: for its interactive mode, its CLI defaults, its results store and its
# hooks, none of which bears on what this tool runs or scores: accepted without a word.
AGENTV_442_CONFIG_KEYS = ("required_version", "eval_patterns", "execution", "results", "hooks")


# micromatch's defaults for these patterns: `**` is globstar, braces and extglobs expand, a leading
# `!` negates, `*` and `**` never match a name starting with a dot. Pure string matching: no I/O.
def matches_any(relative: str, patterns: Iterable[str]) -> bool:
    """Does a `/`-separated relative path match one of the patterns (micromatch's `isMatch`)?
    (`wcmatch` is imported here: only a project with guideline patterns needs it.)"""
    from wcmatch import glob

    flags = glob.GLOBSTAR | glob.BRACE | glob.EXTGLOB | glob.NEGATE | glob.NEGATEALL | glob.FORCEUNIX
    return any(glob.globmatch(relative, _pattern(p), flags=flags) for p in patterns)


def _pattern(pattern: str) -> str:
    return pattern[2:] if pattern.startswith("./") else pattern  # micromatch drops a leading ./


@dataclass(frozen=True)
class GuidelineConfig:
    """The config in force for a dataset: its file (None: none found), its patterns, and the
    directory paths are matched relative to."""

    path: Path | None
    patterns: tuple[str, ...]
    root: Path

    def is_guideline(self, path: str | Path) -> bool:
        """Is this input file (an absolute path) a guideline file?"""
        if not self.patterns:
            return False
        relative = os.path.relpath(path, self.root).replace(os.sep, "/")
        return matches_any(relative, self.patterns)


@dataclass
class LoadedConfig:
    """The config found for a dataset, with the problems (errors) and warnings found on the way."""

    config: GuidelineConfig
    problems: list[Problem]
    warnings: list[Problem]


def load_guideline_config(dataset_dir: Path) -> LoadedConfig:
    """Find and read the `.agentv/config.yaml` for a dataset in `dataset_dir`. Never raises: a
    config that cannot be read or has patterns of the wrong type is a problem (an error, located);
    one without `$schema: agentv-config-v2` and unknown keys are warnings."""
    dataset_dir = dataset_dir.resolve()
    root = repo_root(dataset_dir) or Path.cwd().resolve()
    warnings: list[Problem] = []
    for directory in targets_search_dirs(dataset_dir):
        candidate = directory / CONFIG_NAME
        if not candidate.is_file():
            continue
        try:
            source, raw = read_yaml(candidate)
        except ConfigError as exc:
            return LoadedConfig(GuidelineConfig(candidate, (), root), exc.problems, warnings)
        ignored = _schema_warning(source, raw)
        if ignored is not None:
            warnings.append(ignored)
            continue  # as AgentV: the next config up may be the one
        patterns, problems = _patterns(source, raw)
        warnings.extend(_unknown_keys(source, raw))
        if isinstance(raw, dict) and raw.get("guideline_patterns") == []:
            warnings.append(
                source.problem(
                    ["guideline_patterns"], "is empty: no input file is a guideline file; add patterns or remove it"
                )
            )
        return LoadedConfig(GuidelineConfig(candidate, patterns, root), problems, warnings)
    return LoadedConfig(GuidelineConfig(None, (), root), [], warnings)


def _schema_warning(source: Source, raw: Any) -> Problem | None:
    """Why this config is ignored (it is not a mapping), else None."""
    if raw is not None and not isinstance(raw, dict):
        return source.problem(
            [],
            f"must be a mapping with '$schema: {CONFIG_SCHEMA}' and guideline_patterns, got {_type_name(raw)}; "
            "this config is ignored",
        )
    # AgentV checked `$schema: agentv-config-v2` until 2026-01-20 (2c986442f) and no longer at
    # v2.7.0 (cdf415031), the release this follows: any `$schema`, or none, is accepted.
    return None


def _patterns(source: Source, raw: dict[str, Any]) -> tuple[tuple[str, ...], list[Problem]]:
    value = raw.get("guideline_patterns")
    if value is None:
        return (), []
    if not isinstance(value, list):
        return (), [
            source.problem(
                ["guideline_patterns"], f"must be a list of glob patterns (strings), got {_type_name(value)}"
            )
        ]
    problems: list[Problem] = []
    for i, pattern in enumerate(value):
        where: list[str | int] = ["guideline_patterns", i]
        if not isinstance(pattern, str):
            problems.append(source.problem(where, f"must be a glob pattern (a string), got {_type_name(pattern)}"))
        elif not pattern.strip():
            problems.append(source.problem(where, "must not be empty"))
    return (tuple(value) if not problems else ()), problems


def _unknown_keys(source: Source, raw: dict[str, Any]) -> list[Problem]:
    warnings = []
    for key in raw:
        if key in CONFIG_KEYS or key in AGENTV_442_CONFIG_KEYS:
            continue
        close = suggest(str(key), list(CONFIG_KEYS))
        hint = f" (did you mean '{close}'?)" if close else ""
        warnings.append(source.problem([str(key)], f"unknown key, ignored{hint}; valid keys: {', '.join(CONFIG_KEYS)}"))
    return warnings


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else type(value).__name__
