"""File and image resolution for a dataset's cases: every `type: file` and `type: image` item
found (SPEC §1 search order, `agentv_py.locate`) and every image checked, at load time.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.source import Source
from agentv_py.locate import not_found, resolve_file, search_dirs
from agentv_py.media import ImageRef, check_image_file, is_url, parse_data_uri


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
    source: Source, raw: Any, base_dir: Path
) -> tuple[dict[tuple[int, str], list[Any]], list[Problem]]:
    """Input files as absolute paths and images as checked ImageRefs, per case, in order."""
    resolved: dict[tuple[int, str], list[Any]] = {}
    problems: list[Problem] = []
    dirs = search_dirs(base_dir)  # the same for every file of the dataset
    for i, case in enumerate(raw_cases(raw)):
        if not isinstance(case, dict):
            continue
        for location, item in _content_items(case):
            kind, value = item.get("type"), item.get("value")
            if kind not in ("file", "image", "image_url") or not isinstance(value, str) or not value:
                continue
            where = ["evalcases", i, *location, "value"]
            label = f"case '{case.get('id')}'"
            if kind == "file":
                found, tried = resolve_file(value, base_dir, dirs)
                if found is None:
                    problems.append(source.problem(where, not_found("file", value, tried, label)))
                else:
                    resolved.setdefault((i, "file"), []).append(str(found))
                continue
            image, problem = _image(kind, value, item.get("detail"), base_dir, dirs, label)
            if problem:
                problems.append(source.problem(where, problem))
            elif image is not None:
                resolved.setdefault((i, "image"), []).append(image)
    return resolved, problems


def _image(
    kind: str, value: str, detail: Any, base_dir: Path, dirs: list[Path], label: str
) -> tuple[ImageRef | None, str | None]:
    detail = detail if isinstance(detail, str) else None
    if value.startswith("data:"):
        media_type, _, problem = parse_data_uri(value)
        if problem:
            return None, f"{problem} ({label})"
        return ImageRef("data", value, media_type, detail), None
    if is_url(value):
        return ImageRef("url", value, None, detail), None
    if kind == "image_url":
        return None, f"image_url needs an http(s) URL or a data URI, got {value!r}; use type: image for a local file"
    found, tried = resolve_file(value, base_dir, dirs)
    if found is None:
        return None, not_found("image", value, tried, label)
    media_type, problem = check_image_file(found)
    if problem:
        return None, f"unusable image {value} ({label}): {problem}"
    return ImageRef("file", str(found), media_type, detail), None
