"""Cases AgentV v4.42 reads from other files: `tests: <path>` (a YAML list, a JSONL file, or a
directory whose subdirectories each hold a `case.yaml`) and `file://<path or glob>` entries of a
`tests` list (AgentV's `case-file-loader`). Each case comes with the file it was read from and its
place there, so its problems point at that file's line.

Unlike AgentV, a file named must lie inside the project (the repository holding the dataset, else
the dataset's directory: `case_files.Project`), a missing or malformed file is a located error (AgentV
warned, or skipped the file), and `${{ VAR }}` in it is refused as in the dataset itself."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.case_files import Project
from agentv_py.loading.jsonl import file_lines
from agentv_py.loading.jsonl_lines import read_line
from agentv_py.loading.source import Source, display_path, format_location, read_yaml
from agentv_py.loading.written_paths import Path_

FILE_PREFIX = "file://"
CASE_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl")
MAIN_BRANCH_SUFFIXES = (".csv", ".json", ".js", ".mjs", ".cjs", ".py")  # case sources AgentV 5.1 added
MAX_CASE_FILES = 10_000  # files one glob or directory may stand for


@dataclass
class CaseOrigin:
    """Where a case read from another file was written: that file and the case's path in it."""

    source: Source
    path: Path_


@dataclass
class ReadCases:
    cases: list[Any] = field(default_factory=list)
    origins: list[CaseOrigin] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


class _LineOfCase:
    """Line numbers of a JSONL case file: case j is line `lines[j]`."""

    def __init__(self, lines: list[int]) -> None:
        self.lines = lines

    def line(self, parts: Iterable[str | int]) -> int | None:
        first = next(iter(parts), None)
        return self.lines[first] if isinstance(first, int) and 0 <= first < len(self.lines) else None


def is_file_reference(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(FILE_PREFIX)


def read_case_files(
    reference: str, dataset_dir: Path, located: Callable[[str], Problem], *, whole_list: bool
) -> ReadCases:
    """The cases `reference` names (`file://...`, or any path when it is the whole `tests:` value),
    relative to the dataset's directory. A problem with the reference itself is `located` where it
    was written; a problem inside a case file, in that file."""
    out = ReadCases()
    label = "named by the dataset's tests"
    written = reference[len(FILE_PREFIX) :] if reference.startswith(FILE_PREFIX) else reference
    project = Project(dataset_dir)
    pattern = os.path.join(dataset_dir, written)
    if any(c in written for c in "*?["):
        import glob  # only a dataset that names a glob needs it

        found = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))[: MAX_CASE_FILES + 1]
        if not found:
            out.problems.append(located(f"no case file matches {written!r} (relative to {dataset_dir})"))
        elif len(found) > MAX_CASE_FILES:
            out.problems.append(located(f"{written!r} matches more than {MAX_CASE_FILES} files"))
        else:
            for match in found:
                _read_file(Path(match), written, project, label, located, out)
        return out
    path = Path(pattern)
    if whole_list and path.is_dir():
        _read_directory(path, written, project, label, located, out)
    elif not path.exists():
        out.problems.append(located(f"case file {written!r} not found (relative to {dataset_dir})"))
    else:
        _read_file(path, written, project, label, located, out)
    return out


def _read_file(
    path: Path, written: str, project: Project, label: str, located: Callable[[str], Problem], out: ReadCases
) -> None:
    refused = project.refuse("case file", written, path, label)
    if refused is not None:
        out.problems.append(located(refused))
        return
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        _read_jsonl(path, out)
    elif suffix in (".yaml", ".yml"):
        source, value = read_yaml(path)
        if value is None:
            return  # an empty file holds no cases (AgentV: a warning)
        if not isinstance(value, list):
            out.problems.append(source.problem([], f"a case file holds a list of cases, got {_kind(value)}"))
            return
        for j, case in enumerate(value):
            out.cases.append(case)
            out.origins.append(CaseOrigin(source, (j,)))
    elif suffix in MAIN_BRANCH_SUFFIXES:
        out.problems.append(
            located(
                f"case file {written!r}: {suffix} case files are AgentV 5.1.0's syntax (after v4.42.4, the format "
                "read here); instead, write the cases as .yaml or .jsonl"
            )
        )
    else:
        out.problems.append(located(f"case file {written!r} is not .yaml, .yml or .jsonl (AgentV v4.42 reads those)"))


def _read_jsonl(path: Path, out: ReadCases) -> None:
    display = display_path(path)
    lines: list[int] = []
    cases: list[Any] = []
    for number, raw in enumerate(file_lines(path), 1):
        text = raw.rstrip(b"\r\n")
        if not text.strip():
            continue
        case = read_line(text, number, display, out.problems)
        if case is not None:
            cases.append(case)
            lines.append(number)
    source = _JsonlCaseSource(path, display, _LineOfCase(lines))
    for j, case in enumerate(cases):
        out.cases.append(case)
        out.origins.append(CaseOrigin(source, (j,)))


@dataclass
class _JsonlCaseSource(Source):
    """A JSONL case file: a case's problems name its line; the location is the path within the case."""

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        return Problem(self.display, self.lines.line(parts), format_location(parts[1:]), message)


def _read_directory(
    path: Path, written: str, project: Project, label: str, located: Callable[[str], Problem], out: ReadCases
) -> None:
    """AgentV's directory of cases: each subdirectory (in name order) with a `case.yaml` (or
    `case.yml`) holding one case, whose `id` defaults to the subdirectory's name."""
    subdirs = sorted(entry for entry in os.listdir(path) if (path / entry).is_dir())[: MAX_CASE_FILES + 1]
    if len(subdirs) > MAX_CASE_FILES:
        out.problems.append(located(f"{written!r} holds more than {MAX_CASE_FILES} case directories"))
        return
    for name in subdirs:
        for filename in ("case.yaml", "case.yml"):
            case_path = path / name / filename
            if case_path.is_file():
                break
        else:
            continue  # AgentV: skipped with a warning
        refused = project.refuse("case file", f"{written.rstrip('/')}/{name}/{case_path.name}", case_path, label)
        if refused is not None:
            out.problems.append(located(refused))
            continue
        source, value = read_yaml(case_path)
        if not isinstance(value, dict):
            out.problems.append(source.problem([], f"a case.yaml holds one case (a mapping), got {_kind(value)}"))
            continue
        if value.get("id") is None:
            value = {**value, "id": name}
        out.cases.append(value)
        out.origins.append(CaseOrigin(source, ()))


def _kind(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "text", type(None): "nothing"}
    return names.get(type(value), f"a {type(value).__name__}")
