"""JSONL datasets (AgentV, 2026-01-20): one case per line, suite keys in an optional sidecar.

`dataset.jsonl` holds one JSON object per line (blank lines skipped); `dataset.yaml` beside it,
if there is one, holds the suite keys (`description`, `dataset`, `execution`, ...). The two are
read into the same raw structure a YAML dataset has, `{**sidecar, "evalcases": [lines]}`, so one
model and one set of checks validate both formats. Problems in a case name the JSONL file and the
case's line; problems in the suite keys name the sidecar and its line.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsIndex, overload

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.parse_cache import collector_paused
from agentv_py.loading.source import Source, display_path, format_location, pack_case, read_yaml
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
    packed (`JsonlCases`: each line checked as it is read, kept as its text); a line that
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


class JsonlCases(tuple[bytes, ...]):
    """A JSONL dataset's cases, packed (`PackedCases`): each case as its line's text, read back by
    orjson (`unpack`), which reads such a line exactly as the standard library's `json` does
    (`read_jsonl` checked it); or, for a line it could not vouch for at a glance (a run of 19
    digits: maybe an integer beyond 64 bits, which orjson reads as a float; a `\\u003a` escape;
    over 100 brackets), the standard library's value `marshal`led, as a YAML case is. A slice
    is again a JsonlCases; an item, or an iteration, gives `marshal`led cases."""

    marshalled: frozenset[int]  # the positions of the cases packed by `marshal`

    def __new__(cls, items: Iterable[bytes], marshalled: Iterable[int] = ()) -> JsonlCases:
        cases = super().__new__(cls, items)
        cases.marshalled = frozenset(marshalled)
        return cases

    @overload
    def __getitem__(self, index: SupportsIndex) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> JsonlCases: ...

    def __getitem__(self, index: SupportsIndex | slice) -> bytes | JsonlCases:
        if isinstance(index, slice):
            positions = range(*index.indices(len(self)))
            marshalled = [i for i, at in enumerate(positions) if at in self.marshalled] if self.marshalled else ()
            return JsonlCases(super().__getitem__(index), marshalled)
        position = range(len(self))[index]  # IndexError as a tuple has it
        item = super().__getitem__(position)
        return item if position in self.marshalled else pack_case(_orjson().loads(item))

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))

    def unpack(self) -> list[Any]:
        """The cases (what `source.unpack_cases` gives for them)."""
        loads = _orjson().loads
        items = tuple.__iter__(self)
        if not self.marshalled:
            return list(map(loads, items))
        return [marshal.loads(item) if i in self.marshalled else loads(item) for i, item in enumerate(items)]


def _orjson() -> Any:
    import orjson  # only when a JSONL dataset is read

    return orjson


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # the fewest digits of an integer beyond 64 bits (which orjson reads as a float)


def _parse_lines(content: bytes, display: str) -> tuple[JsonlCases, list[int], list[Problem]]:
    """Each line read by orjson, and kept as its text when orjson's value is the standard
    library's and needs no check of its own: an object that orjson writes back byte for byte, or
    whose colons (its keys) all survive that (no key written twice) and which holds no run of 19
    digits (no integer beyond 64 bits), nested no deeper than the text's brackets allow. Any other
    line is read by the standard library (`_read_line`), exactly as it always was."""
    cases: list[bytes] = []
    marshalled: list[int] = []
    lines: list[int] = []
    problems: list[Problem] = []
    if content.startswith(b"\xef\xbb\xbf"):
        content = content[3:]  # a UTF-8 byte order mark (editors on Windows write one)
    orjson = _orjson()
    loads, dumps, refused = orjson.loads, orjson.dumps, orjson.JSONDecodeError
    with collector_paused():  # every value read dies at once: no cycles to look for
        for number, raw in enumerate(content.split(b"\n"), 1):
            try:
                value = loads(raw)
            except refused:
                value = None
            if type(value) is dict and raw.count(b"{") + raw.count(b"[") <= MAX_DEPTH:
                written = dumps(value)
                if written == raw or (
                    raw.count(b":") == written.count(b":")
                    and b"\\u003" not in raw  # `\u003a`, a colon that is not one in the text
                    and _LONG_NUMBER not in raw.translate(_DIGITS_AS_ZERO)
                ):
                    cases.append(raw)
                    lines.append(number)
                    continue
            case = _read_line(raw, number, display, problems)
            if case is not None:
                marshalled.append(len(cases))
                cases.append(pack_case(case))
                lines.append(number)
    return JsonlCases(cases, marshalled), lines, problems


def _read_line(raw: bytes, number: int, display: str, problems: list[Problem]) -> dict[str, Any] | None:
    """A line read by the standard library: its object, or None (blank, or a problem appended)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
        problems.append(Problem(display, number, "", f"not valid UTF-8 (byte 0x{byte:02x} at column {exc.start + 1})"))
        return None
    if not text.strip():
        return None
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(display, number, "", f"not JSON: {exc.msg} at column {exc.colno}"))
        return None
    except ValueError as exc:
        reason = f"nests deeper than {MAX_DEPTH} levels" if str(exc) == TOO_DEEP else str(exc)
        problems.append(Problem(display, number, "", f"not JSON: {reason}"))
        return None
    duplicate = _duplicate_key(text)
    if duplicate is not None:
        problems.append(Problem(display, number, "", f"duplicate key '{duplicate}' (keys must be unique)"))
        return None
    if not isinstance(value, dict):
        kind = _json_kind(value)
        problems.append(
            Problem(display, number, "", f"expected a JSON object (one case per line), got {kind} {_short(text)}")
        )
        return None
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        problems.append(Problem(display, number, "", f"JSON nests deeper than {MAX_DEPTH} levels"))
        return None
    return value


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
