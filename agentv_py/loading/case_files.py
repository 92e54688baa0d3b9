"""File and image resolution for a dataset's cases: every `type: file` and `type: image` item
found (SPEC §1 search order, `agentv_py.locate`) and every image checked, at load time. A file
given by http(s) URL is kept as its URL (its form checked): the run fetches it. An input file that
`.agentv/config.yaml`'s `guideline_patterns` match is a guideline file (`loading.config`), kept
apart from the others, as AgentV kept it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.config import GuidelineConfig
from agentv_py.loading.source import Source
from agentv_py.locate import not_found, repo_root, resolve_file, search_dirs
from agentv_py.media import ImageRef, check_image_file, is_url, parse_data_uri
from agentv_py.process.urls import url_problem


def raw_cases(raw: Any) -> list[Any]:
    """The `evalcases` list of parsed YAML, whatever shape the rest has."""
    cases = raw.get("evalcases") if isinstance(raw, dict) else None
    return cases if isinstance(cases, list) else []


def _content_items(case: dict[str, Any]) -> Iterable[tuple[list[str | int], dict[str, Any]]]:
    key = "input_messages" if "input_messages" in case else "input"
    messages = case.get(key)
    if not isinstance(messages, list):
        return
    for j, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for k, item in enumerate(content):
                if isinstance(item, dict):
                    yield [key, j, "content", k], item


def resolve_case_files(
    source: Source, raw: Any, base_dir: Path, guidelines: GuidelineConfig | None = None
) -> tuple[dict[tuple[int, str], list[Any]], list[Problem]]:
    """Per case, in order: its input files as absolute paths (or http(s) URLs) under "file", its
    guideline files (`guidelines.is_guideline`) under "guideline" with, under "guideline_item",
    which of its `file` items (counted from 0 in dataset order) they are; its images as checked
    ImageRefs under "image"."""
    resolved: dict[tuple[int, str], list[Any]] = {}
    problems: list[Problem] = []
    dirs = search_dirs(base_dir)  # the same for every file of the dataset
    project = Project(base_dir)
    files = _Files(base_dir, dirs, project)
    for i, case in enumerate(raw_cases(raw)):
        if not isinstance(case, dict):
            continue
        file_item = -1  # which `file` item this is, as `runner.llm.case_messages` counts them
        for location, item in _content_items(case):
            kind, value = item.get("type"), item.get("value")
            if kind not in ("file", "image", "image_url") or not isinstance(value, str) or not value:
                continue
            where = ["evalcases", i, *location, "value"]
            label = f"case '{case.get('id')}'"
            if kind == "file":
                file_item += 1
            if kind == "file" and is_url(value):
                # Fetched once per run (`agentv_py.process.fetch`); here only its form is
                # checked: loading and `validate` need no network.
                problem = url_problem(value)
                if problem is not None:
                    problems.append(source.problem(where, f"{problem} ({label})"))
                else:
                    resolved.setdefault((i, "file"), []).append(value)
                continue
            if kind == "file":
                found, tried, real = files.find(value)
                refused = None if found is None else project.refuse("file", value, found, label, real)
                if found is None:
                    problems.append(source.problem(where, not_found("file", value, tried, label)))
                elif refused is not None:
                    problems.append(source.problem(where, refused))
                elif guidelines is not None and guidelines.is_guideline(found):
                    resolved.setdefault((i, "guideline"), []).append(found)
                    resolved.setdefault((i, "guideline_item"), []).append(file_item)
                else:
                    resolved.setdefault((i, "file"), []).append(found)
                continue
            image, problem = _image(kind, value, item.get("detail"), base_dir, dirs, label, project)
            if problem:
                problems.append(source.problem(where, problem))
            elif image is not None:
                resolved.setdefault((i, "image"), []).append(image)
    return resolved, problems


class _Files:
    """`resolve_file` for a dataset's input files, each distinct value looked up once, and with one
    `lstat` per place tried: a regular file that is not a symlink is found, regular, and its real
    path is its directory's (resolved once, `Project.realpath`). Anything else (a symlink, a
    directory, an absolute path, no file at all) goes through `resolve_file` itself."""

    def __init__(self, base_dir: Path, dirs: list[Path], project: Project) -> None:
        self._base_dir = base_dir
        self._dirs = dirs
        self._names = [str(directory) for directory in dirs]
        self._project = project
        self._found: dict[str, tuple[str | None, list[Path], str | None]] = {}
        self._places: dict[str, list[str]] = {}  # a value's folder -> where it is looked for

    def find(self, value: str) -> tuple[str | None, list[Path], str | None]:
        """(the file found or None, every place tried, its real path when it is a regular file
        reached without a symlink, else None: `Project.refuse` then works it out)."""
        known = self._found.get(value)
        if known is None:
            known = self._found[value] = self._look(value)
        return known

    def _look(self, value: str) -> tuple[str | None, list[Path], str | None]:
        expanded = os.path.expanduser(value)
        head, name = os.path.split(expanded)
        if not os.path.isabs(expanded) and name not in ("", ".", ".."):
            places = self._places.get(head)
            if places is None:  # `os.path.normpath(os.path.join(directory, value))`, a folder at a time
                places = self._places[head] = [os.path.normpath(os.path.join(d, head)) for d in self._names]
            for place in places:
                path = os.path.join(place, name)
                try:
                    mode = os.lstat(path).st_mode
                except OSError:
                    continue  # `os.path.isfile` is False: the next place
                if stat.S_ISREG(mode):
                    return path, [], self._project.real_in_dir(path)
                break  # a symlink, a directory, ...: as `resolve_file` decides
        found, tried = resolve_file(value, self._base_dir, self._dirs)
        return (str(found) if found is not None else None), tried, None


_SYSTEM_DIRS = ("/proc", "/sys", "/dev")


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class Project:
    """Where a dataset may name files: its project (the repository holding it, else its own
    directory) or the current directory; never a system directory, never anything but a regular
    file. Paths are compared after `os.path.realpath`, so a symlink counts as what it points at."""

    def __init__(self, base_dir: Path) -> None:
        base = os.path.realpath(base_dir)
        root = repo_root(Path(base))
        self.root = str(root) if root is not None else base
        self.what = "the repository holding the dataset" if root is not None else "the dataset's directory"
        self.cwd = os.path.realpath(os.getcwd())
        self._real_dirs: dict[str, str] = {}

    def realpath(self, found: str | Path) -> str:
        """`os.path.realpath(found)`, with each directory's resolved once: a dataset names
        thousands of files in a few directories."""
        try:
            if not stat.S_ISLNK(os.lstat(found).st_mode):
                return self.real_in_dir(str(found))
        except OSError:
            pass
        return os.path.realpath(found)

    def real_in_dir(self, path: str) -> str:
        """The real path of `path`, a file that is not a symlink: its directory's real path and its name."""
        directory, name = os.path.split(path)
        real_dir = self._real_dirs.get(directory)
        if real_dir is None:
            real_dir = self._real_dirs[directory] = os.path.realpath(directory)
        return os.path.join(real_dir, name)

    def refuse(
        self, what: str, value: str, found: str | Path, label: str, regular_real: str | None = None
    ) -> str | None:
        """Why the dataset may not name `found` (its `what` item `value`), or None. `regular_real`:
        `found`'s real path, known to be a regular file (`_Files`): not looked up again."""
        real = regular_real if regular_real is not None else self.realpath(found)
        shown = value if real == value else f"{value} (really {real})"
        for system in _SYSTEM_DIRS:
            if _inside(real, system):
                return f"{what} {shown} is under {system}; a dataset may not name system files ({label})"
        if not (_inside(real, self.root) or _inside(real, self.cwd)):
            return (
                f"{what} {shown} is outside the project ({self.root}, {self.what}); "
                f"a dataset may only name files inside it ({label})"
            )
        try:
            regular = regular_real is not None or stat.S_ISREG(os.stat(real).st_mode)
        except OSError as exc:
            return f"{what} {shown} cannot be read: {exc.strerror or exc} ({label})"
        if not regular:
            return f"{what} {shown} is not a regular file ({label})"
        return None


def _image(
    kind: str, value: str, detail: Any, base_dir: Path, dirs: list[Path], label: str, project: Project
) -> tuple[ImageRef | None, str | None]:
    detail = detail if isinstance(detail, str) else None
    if value.startswith("data:"):
        media_type, _, problem = parse_data_uri(value)
        if problem:
            return None, f"{problem} ({label})"
        return ImageRef("data", value, media_type, detail), None
    if is_url(value):
        problem = url_problem(value)
        if problem is not None:
            return None, f"{problem} ({label})"
        return ImageRef("url", value, None, detail), None
    if kind == "image_url":
        return None, f"image_url needs an http(s) URL or a data URI, got {value!r}; use type: image for a local file"
    found, tried = resolve_file(value, base_dir, dirs)
    if found is None:
        return None, not_found("image", value, tried, label)
    refused = project.refuse("image", value, found, label)
    if refused is not None:
        return None, refused
    media_type, problem = check_image_file(found)
    if problem:
        return None, f"unusable image {value} ({label}): {problem}"
    return ImageRef("file", str(found), media_type, detail), None
