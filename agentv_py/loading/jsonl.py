"""JSONL datasets (AgentV, 2026-01-20): one case per line, suite keys in an optional sidecar.

`dataset.jsonl` holds one JSON object per line (blank lines skipped); `dataset.yaml` beside it,
if there is one, holds the suite keys (`description`, `dataset`, `execution`, ...). The two are
read into the same raw structure a YAML dataset has, `{**sidecar, "evalcases": [lines]}`, so one
model and one set of checks validate both formats. Problems in a case name the JSONL file and the
case's line; problems in the suite keys name the sidecar and its line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.source import PackedCases, Source, display_path, format_location, pack_case, read_yaml
from agentv_py.loading.yaml_loader import MAX_DEPTH
from agentv_py.scoring.jsontext import TOO_DEEP, loads

JSONL_SUFFIX = ".jsonl"
SIDECAR_KEYS = "description, dataset, execution"  # what a sidecar is for (named in messages)


def is_jsonl(path: Path) -> bool:
    return path.suffix.lower() == JSONL_SUFFIX


def sidecar_path(path: Path) -> Path:
    """The sidecar of `dir/name.jsonl`: `dir/name.yaml` (AgentV reads no `.yml` sidecar)."""
    return path.with_suffix(".yaml")


class _CaseLines:
    """Line numbers of a JSONL file's locations: a case's location is its line."""

    def __init__(self, lines: list[int]) -> None:
        self.case_lines = lines

    def line(self, parts: Iterable[str | int]) -> int | None:
        parts = list(parts)
        if len(parts) >= 2 and parts[0] == "evalcases" and isinstance(parts[1], int):
            index = parts[1]
            return self.case_lines[index] if 0 <= index < len(self.case_lines) else None
        return None


@dataclass
class JsonlSource(Source):
    """A JSONL dataset and its sidecar: a case's problems name the JSONL file and the case's line,
    a suite key's problems name the sidecar (where the key is written)."""

    sidecar: Source | None = field(default=None)

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        if parts and parts[0] != "evalcases" and self.sidecar is not None:
            return self.sidecar.problem(parts, message)
        return Problem(self.display, self.lines.line(parts), format_location(parts), message)


def read_jsonl(path: Path) -> tuple[JsonlSource, dict[str, Any]]:
    """Read a JSONL dataset and its sidecar into `{**sidecar, "evalcases": cases}`, the cases
    packed as a YAML dataset's are (`PackedCases`: each line's object packed as it is read); a line that
    is not a JSON object (and a sidecar that is not a mapping of suite keys) is a ConfigError
    naming the file and the line. Every bad line is reported, not only the first."""
    display = display_path(path)
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError([Problem(display, None, "", "file not found")]) from None
    except IsADirectoryError:
        raise ConfigError([Problem(display, None, "", "is a directory, expected a JSONL file")]) from None
    cases, lines, problems = _parse_lines(content, display)
    sidecar_source, suite = _read_sidecar(path, problems)
    if problems:
        raise ConfigError(problems)
    source = JsonlSource(path, display, _CaseLines(lines), sidecar=sidecar_source)
    return source, {**suite, "evalcases": cases}


def _parse_lines(content: bytes, display: str) -> tuple[PackedCases, list[int], list[Problem]]:
    cases: list[bytes] = []
    lines: list[int] = []
    problems: list[Problem] = []
    if content.startswith(b"\xef\xbb\xbf"):
        content = content[3:]  # a UTF-8 byte order mark (editors on Windows write one)
    for number, raw in enumerate(content.split(b"\n"), 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            byte = raw[exc.start]
            problems.append(
                Problem(display, number, "", f"not valid UTF-8 (byte 0x{byte:02x} at column {exc.start + 1})")
            )
            continue
        if not text.strip():
            continue
        try:
            value = loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(display, number, "", f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        except ValueError as exc:
            reason = f"nests deeper than {MAX_DEPTH} levels" if str(exc) == TOO_DEEP else str(exc)
            problems.append(Problem(display, number, "", f"not JSON: {reason}"))
            continue
        duplicate = _duplicate_key(text)
        if duplicate is not None:
            problems.append(Problem(display, number, "", f"duplicate key '{duplicate}' (keys must be unique)"))
            continue
        if not isinstance(value, dict):
            kind = _json_kind(value)
            problems.append(
                Problem(display, number, "", f"expected a JSON object (one case per line), got {kind} {_short(text)}")
            )
            continue
        if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
            problems.append(Problem(display, number, "", f"JSON nests deeper than {MAX_DEPTH} levels"))
            continue
        cases.append(pack_case(value))
        lines.append(number)
    return tuple(cases), lines, problems


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


_PAIRS = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def _duplicate_key(text: str) -> str | None:
    """The first key repeated within one object of a line already read as JSON (YAML datasets
    refuse duplicate keys too; JSON parsers silently keep the last value), else None."""
    if text.count(":") < 2:
        return None  # one key at most: nothing can repeat
    try:
        _PAIRS.decode(text.strip())
    except _Duplicate as exc:
        return exc.key
    except ValueError:  # NaN and friends: refused by `loads` already
        return None
    return None


def _read_sidecar(path: Path, problems: list[Problem]) -> tuple[Source | None, dict[str, Any]]:
    """The sidecar's suite keys ({} without a sidecar); its problems are appended to `problems`."""
    sidecar = sidecar_path(path)
    if not sidecar.is_file():
        return None, {}
    try:
        source, data = read_yaml(sidecar)
    except ConfigError as exc:
        problems.extend(exc.problems)
        return None, {}
    if data is None:
        return source, {}  # an empty sidecar (comments only): no suite keys
    if not isinstance(data, dict):
        problems.append(
            source.problem([], f"a JSONL dataset's sidecar holds suite keys ({SIDECAR_KEYS}), got {_json_kind(data)}")
        )
        return source, {}
    if "evalcases" in data:
        problems.append(
            source.problem(
                ["evalcases"],
                f"the cases of a JSONL dataset are the lines of {path.name}; "
                f"its sidecar holds suite keys only ({SIDECAR_KEYS})",
            )
        )
        return source, {}
    return source, data


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node)
    return deepest


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 40 else text[:37] + "..."
