"""JSONL datasets (AgentV, 2026-01-20): one case per line, suite keys in an optional sidecar.

`dataset.jsonl` holds one JSON object per line (blank lines skipped); `dataset.yaml` beside it,
if there is one, holds the suite keys (`description`, `dataset`, `execution`, ...). The two are
read into the same raw structure a YAML dataset has, `{**sidecar, "evalcases": [lines]}`, so one
model and one set of checks validate both formats. Problems in a case name the JSONL file and the
case's line; problems in the suite keys name the sidecar and its line.
"""

from __future__ import annotations

import io
import marshal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, SupportsIndex, overload

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.jsonl_lines import chunk_values, fast_values, json_kind, read_line
from agentv_py.loading.parse_cache import collector_paused
from agentv_py.loading.source import Source, display_path, format_location, pack_case, read_yaml

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
    packed (`JsonlCases`: a line that opens an object kept as its text, read when its case is
    unpacked); a line that is not a JSON object (and a sidecar that is not a mapping of suite
    keys) is a ConfigError naming the file and the line, raised here for a line that does not
    open an object (or a bad sidecar), else by the unpacking that meets the bad line. Either way
    every bad line is reported, not only the first, and before a case is used."""
    display = display_path(path)
    try:
        split = file_lines(path)
    except FileNotFoundError:
        raise ConfigError([Problem(display, None, "", "file not found")]) from None
    except IsADirectoryError:
        raise ConfigError([Problem(display, None, "", "is a directory, expected a JSONL file")]) from None
    cases, lines, problems = _scan_lines(split, display)
    sidecar: list[Problem] = []
    sidecar_source, suite = _read_sidecar(path, sidecar)
    if problems or sidecar:  # every line is read now, so that each bad one is named
        problems = sorted(problems + cases.problems(), key=lambda problem: problem.line or 0)
        raise ConfigError(problems + sidecar)
    source = JsonlSource(path, display, _CaseLines(lines), sidecar=sidecar_source)
    return source, {**suite, "evalcases": cases}


_BLOCK = 1 << 20  # bytes read at a time


def file_lines(path: Path) -> list[bytes]:
    """The file's lines, each with its `\\n` (but perhaps the last), a UTF-8 byte order mark (which
    editors on Windows write) left out. Read a block at a time, so the file is never in memory
    whole beside its lines (fresh memory costs a page fault every 4 KiB); each block is split by
    `BytesIO`, which finds line ends with memchr (bytes.split looks at every byte)."""
    lines: list[bytes] = []
    unended: list[bytes] = []  # the pieces of a line that no block read so far ends
    with path.open("rb") as file:
        while block := file.read(_BLOCK):
            part = io.BytesIO(block).readlines()
            if unended:
                unended.append(part[0])
                if not part[0].endswith(b"\n"):
                    continue  # the block is all inside that line
                part[0] = b"".join(unended)
                unended = []
            if not part[-1].endswith(b"\n"):
                unended.append(part.pop())
            lines += part
    if unended:
        lines.append(b"".join(unended))
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
        if not lines[0]:
            del lines[0]  # the file was the mark alone
    return lines


def _scan_lines(split: list[bytes], display: str) -> tuple[JsonlCases, list[int], list[Problem]]:
    """The file's cases (`JsonlCases`), each case's line, and the problems of the lines read now: a
    line that opens an object (`{` first) is kept as its text (with its `\\n`), to be read when its
    case is unpacked; any other line (blank, or anything else) is read now by the standard library."""
    if not bytes(map(itemgetter(0), split)).translate(None, b"{"):  # every line opens an object
        lines = list(range(1, len(split) + 1))
        return JsonlCases(_Reading(tuple(split), frozenset(), lines, display)), lines, []
    cases: list[bytes] = []
    marshalled: list[int] = []
    lines = []
    problems: list[Problem] = []
    for number, raw in enumerate(split, 1):
        if raw[:1] == b"{":
            cases.append(raw)
            lines.append(number)
            continue
        case = read_line(_chomped(raw), number, display, problems)
        if case is not None:
            marshalled.append(len(cases))
            cases.append(pack_case(case))
            lines.append(number)
    return JsonlCases(_Reading(tuple(cases), frozenset(marshalled), lines, display)), lines, problems


def _chomped(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\n") else line


class _Reading:
    """A JSONL file's cases being read, shared by every slice of its `JsonlCases`: each case's
    text (or its value packed by `marshal`, for a line read by the standard library already) and
    line, which cases are not read yet, and the problems of the lines read so far."""

    def __init__(self, items: tuple[bytes, ...], marshalled: frozenset[int], lines: list[int], display: str) -> None:
        self.items = items
        self.marshalled = marshalled
        self.lines = lines
        self.display = display
        self.unread = bytearray(b"\x01") * len(items)  # 1: the case at that position is not read yet
        for position in marshalled:
            self.unread[position] = 0
        self.found: dict[int, Problem] = {}  # the problems of the lines read, by position

    def read(self, at: range) -> list[Any]:
        """The values of the cases at positions `at`, a bad line's problem kept instead of its value:
        the whole chunk read at once when it can be (`chunk_values`), else line by line."""
        items, marshalled = self.items, self.marshalled
        texts = items[at.start : at.stop : at.step] if not marshalled else [items[i] for i in at if i not in marshalled]
        values = chunk_values(texts) if len(texts) == len(at) else None
        if values is None:
            values = []
            fast = fast_values(map(_chomped, texts))
            for position in at:
                item = items[position]
                if position in marshalled:
                    values.append(marshal.loads(item))
                    continue
                value = next(fast)
                if value is None:
                    found: list[Problem] = []
                    value = read_line(_chomped(item), self.lines[position], self.display, found)
                    if found:
                        self.found[position] = found[0]
                if value is not None:
                    values.append(value)
        if at.step == 1:
            self.unread[at.start : at.stop] = bytes(len(at))
        else:
            for position in at:
                self.unread[position] = 0
        return values

    def problems(self) -> list[Problem]:
        """The problem of every bad line, in the file's order, the lines not read yet read now (a
        chunk at a time: their values are dropped)."""
        with collector_paused():
            start = self.unread.find(1)
            while start >= 0:
                stop = self.unread.find(0, start)
                stop = min(len(self.unread) if stop < 0 else stop, start + _CHECKED_AT_ONCE)
                self.read(range(start, stop))
                start = self.unread.find(1, stop)
        return [self.found[position] for position in sorted(self.found)]


_CHECKED_AT_ONCE = 1000  # lines read at a time to find their problems


class JsonlCases(tuple[bytes, ...]):
    """A JSONL dataset's cases, packed (`PackedCases`): each case as its line's text, read by
    `unpack` (orjson, where its reading is provably the standard library's: `jsonl_lines`), or,
    for a line read by the standard library when the file was read (one that does not open an
    object), its value packed by `marshal`, as a YAML case is. A line is checked when its case is
    unpacked: an unpacking that meets a bad line raises a ConfigError naming every bad line of
    the file (the lines not read yet are read then). A slice is again a JsonlCases, sharing the
    reading; an item, or an iteration, gives `marshal`led cases."""

    _reading: _Reading
    _at: range  # the cases' positions among the file's

    def __new__(cls, reading: _Reading, at: range | None = None) -> JsonlCases:
        at = range(len(reading.items)) if at is None else at
        cases = super().__new__(cls, reading.items[at.start : at.stop : at.step])
        cases._reading = reading
        cases._at = at
        return cases

    @property
    def marshalled(self) -> frozenset[int]:
        """The positions of the cases packed by `marshal`."""
        marshalled = self._reading.marshalled
        return frozenset(i for i, at in enumerate(self._at) if at in marshalled) if marshalled else frozenset()

    @overload
    def __getitem__(self, index: SupportsIndex) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> JsonlCases: ...

    def __getitem__(self, index: SupportsIndex | slice) -> bytes | JsonlCases:
        if isinstance(index, slice):
            return JsonlCases(self._reading, self._at[index])
        position = range(len(self))[index]  # IndexError as a tuple has it
        item = super().__getitem__(position)
        if self._at[position] in self._reading.marshalled:
            return item
        return pack_case(self[position : position + 1].unpack()[0])

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))

    def unpack(self) -> list[Any]:
        """The cases (what `source.unpack_cases` gives for them); a ConfigError naming every bad
        line of the file when one of them is bad."""
        values = self._reading.read(self._at)
        if self._reading.found:
            raise ConfigError(self._reading.problems())
        return values

    def problems(self) -> list[Problem]:
        """The problem of every bad line of the file, in order (the lines not read yet read now)."""
        return self._reading.problems()


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
            source.problem([], f"a JSONL dataset's sidecar holds suite keys ({SIDECAR_KEYS}), got {json_kind(data)}")
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
