"""Reading YAML into located problems: the parse (dates stay strings), a content-hash parse cache,
line numbers for locations, and pydantic errors turned into `file:line: location: message`.
"""

from __future__ import annotations

import marshal
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import yaml

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.block_yaml import Undecided, load_block
from agentv_py.loading.case_spool import CaseSpool, SpoolWriter
from agentv_py.loading.parse_cache import (
    SPOOL_MIN,
    Opener,
    cache_dir,
    collector_paused,
    made_old,
    parse_cached,
    parse_spooled,
)
from agentv_py.loading.yaml_loader import (
    MAX_DEPTH,
    Loader,
    LoadRefused,
    NodeRefused,
)

__all__ = ["cache_dir"]  # where it has always been imported from


def format_location(parts: Iterable[str | int]) -> str:
    """('evalcases', 3, 'evaluators', 0) -> 'evalcases[3].evaluators[0]'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class _LineIndex:
    """Line numbers for locations in a YAML file. The file is read again and its node tree built
    only when a problem needs a line number, so a valid dataset costs one parse, not two."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._root: yaml.Node | None = None
        self._built = False

    def line(self, parts: Iterable[str | int]) -> int | None:
        if not self._built:
            self._built = True
            try:
                loader = Loader(self._path.read_bytes())
                try:
                    self._root = loader.get_single_node()
                finally:
                    loader.dispose()
            except (OSError, yaml.YAMLError):
                self._root = None
        node, line = self._root, None
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in parts:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if key_node.value == part:
                        line, node = key_node.start_mark.line + 1, value_node
                        break
                else:
                    return line
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line


class LineLookup(Protocol):
    """Line numbers for data locations of a loaded file (YAML nodes, JSONL lines)."""

    def line(self, parts: Iterable[str | int]) -> int | None: ...


@dataclass
class Source:
    """A loaded YAML file: where it is, how it is shown, and line numbers for its locations."""

    path: Path
    display: str
    lines: LineLookup
    cases_key: str = "evalcases"  # the key its cases are written under (AgentV v4.42: `tests`)

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        return Problem(self.display, self.lines.line(parts), format_location(parts), message)

    def of_a_case(self, problem: Problem) -> bool:
        """Whether `problem` (made by this source) is located in a case, not in the suite's keys."""
        return problem.location.startswith(f"{self.cases_key}[")

    def shifted(self, offset: int) -> Source:
        """This source for a slice of the cases that starts at case `offset`: `evalcases[i]` of
        the slice is located (line and text) as `evalcases[offset + i]` of the file."""
        if offset == 0:
            return self
        return _ShiftedSource(self.path, self.display, self.lines, self.cases_key, base=self, offset=offset)


@dataclass
class _ShiftedSource(Source):
    base: Source | None = None
    offset: int = 0

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        if len(parts) >= 2 and parts[0] == "evalcases" and isinstance(parts[1], int):
            parts[1] += self.offset
        assert self.base is not None
        return self.base.problem(parts, message)

    def of_a_case(self, problem: Problem) -> bool:
        assert self.base is not None
        return self.base.of_a_case(problem)


PackedCases = Sequence[bytes]
"""A dataset's cases packed one by one (`marshal`, about 150 bytes for a small case): what a
parse hands the loader in place of the `evalcases` list, unpacked a slice at a time. A tuple, or
for a big YAML file a `CaseSpool`: on disk, read back a chunk at a time."""


def pack_case(value: Any) -> bytes:
    return marshal.dumps(value)


def unpack_cases(packed: Iterable[bytes]) -> list[Any]:
    """The cases, unpacked (the cyclic garbage collector paused meanwhile, as in `_load`, and the
    cases made old objects, `made_old`, which young collections do not walk); cases that unpack
    themselves (`jsonl.JsonlCases`: JSON text) by their `unpack`."""
    with collector_paused():
        unpack = getattr(packed, "unpack", None)
        cases: list[Any] = unpack() if unpack is not None else [marshal.loads(item) for item in packed]
        made_old()
    return cases


def split_cases(raw: Any) -> tuple[dict[str, Any], PackedCases] | None:
    """A parsed dataset as its suite keys and its packed cases; None when it is not a mapping
    with a list of cases (one pass over the whole value then says what is wrong)."""
    if not isinstance(raw, dict):
        return None
    cases = raw.get("evalcases")
    if isinstance(cases, list):
        cases = tuple(pack_case(case) for case in cases)
    if not isinstance(cases, (tuple, CaseSpool)):
        return None
    return {key: value for key, value in raw.items() if key != "evalcases"}, cases


def display_path(path: Path) -> str:
    """The path as the user would type it: relative under the current directory, else absolute."""
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(absolute)


def read_yaml(path: Path, *, pack_cases: bool = False) -> tuple[Source, Any]:
    """Read and parse a YAML file; unreadable or invalid YAML is a ConfigError with its line.
    `pack_cases`: a root mapping's `evalcases` list comes back packed (`PackedCases`), each case
    packed as soon as it is parsed, so a dataset of any size is never held as Python objects whole;
    a file of `SPOOL_MIN` bytes or more is not read whole either: its packed cases go to disk as
    they are parsed (`parse_cache.parse_spooled`) and come back as a `CaseSpool`."""
    display = display_path(path)
    content: bytes | None = None
    try:
        with path.open("rb") as handle:
            spooled = pack_cases and os.fstat(handle.fileno()).st_size >= SPOOL_MIN
            content = None if spooled else handle.read()
    except FileNotFoundError:
        raise ConfigError([Problem(display, None, "", "file not found")]) from None
    except IsADirectoryError:
        raise ConfigError([Problem(display, None, "", "is a directory, expected a YAML file")]) from None
    source = Source(path, display, _LineIndex(path))
    try:
        data = parse_cached(content, pack_cases, _load) if content is not None else parse_spooled(path, _load)
    except LoadRefused as exc:
        location = format_location(exc.parts[:_MAX_SHOWN_PARTS]) + ("..." if len(exc.parts) > _MAX_SHOWN_PARTS else "")
        raise ConfigError([Problem(display, exc.line, location, exc.message)]) from None
    except yaml.reader.ReaderError as exc:
        line, reason = _unreadable(path.read_bytes() if content is None else content, exc)
        raise ConfigError([Problem(display, line, "", reason)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        column = f" at column {mark.column + 1}" if mark is not None else ""
        text_reason = f"invalid YAML{column}: {reason}" + (f" ({context})" if context else "")
        raise ConfigError([Problem(display, line, "", text_reason)]) from None
    return source, data


_MAX_SHOWN_PARTS = 12  # a location nested deeper is shown cut short (the line says where)

# What YAML allows in a file (YAML 1.1 "printable"): everything else is refused by the reader.
# Compiled when first needed (`re`'s cache): a big character class, and only an unreadable file needs it.
_NOT_PRINTABLE = r"[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


def _unreadable(content: bytes, exc: yaml.reader.ReaderError) -> tuple[int | None, str]:
    """(line, reason) for a file the YAML reader refused, worked out from the bytes: the parser's
    own position is not a byte offset for every reader."""
    utf16 = content[:2] in (b"\xff\xfe", b"\xfe\xff")
    encoding = "utf-16" if utf16 else "utf-8"
    try:
        text = content.decode(encoding)
    except UnicodeDecodeError as error:
        line = None if utf16 else content.count(b"\n", 0, error.start) + 1
        byte = content[error.start]
        return line, f"not valid {encoding.upper()} (byte 0x{byte:02x} at offset {error.start}: {error.reason})"
    found = re.search(_NOT_PRINTABLE, text)
    if found is None:
        return None, f"unreadable: {exc.reason}"
    index = found.start()
    offset = len(text[:index].encode(encoding))  # a UTF-16 BOM is encoded again: it is in the file
    code = ord(found.group())
    return (
        text.count("\n", 0, index) + 1,
        f"character U+{code:04X} at offset {offset} is not allowed in YAML "
        f'(write it as an escape in a double-quoted string: "\\u{code:04x}")',
    )


class _Unusual(Exception):
    """The fast path met something it leaves to the node path (an anchor, an alias, a tag, a
    merge key, a duplicate key, a refused value, a parse error)."""


_STR, _NULL, _BOOL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool"
_BY_CONSTRUCTOR = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _load_plain(content: bytes | IO[bytes], pack_cases: bool = False, sink: SpoolWriter | None = None) -> Any:
    """The data of a YAML document built straight from the C parser's events, in one pass,
    without nodes: the common case (no anchors, aliases, explicit tags or merge keys; every
    bound kept). Anything else raises _Unusual, and the node path (`Loader`) parses the file
    again and says what is wrong, located, exactly as it always did. `pack_cases`: each item of
    the root mapping's `evalcases` list is packed as soon as it is complete (`read_yaml`), and goes
    to `sink` when there is one (the list is then None, and `sink.placed` set)."""
    loader = Loader(content)
    try:
        get_event = loader.get_event
        implicit = loader.yaml_implicit_resolvers
        constructors = loader.yaml_constructors
        scalar_event, end_events = yaml.ScalarEvent, (yaml.SequenceEndEvent, yaml.MappingEndEvent)
        sequence_start, mapping_start = yaml.SequenceStartEvent, yaml.MappingStartEvent
        get_event()  # stream start
        if loader.check_event(yaml.StreamEndEvent):
            return None
        get_event()  # document start
        # one frame per open container: [value, is_mapping, pending key, keys seen]
        stack: list[list[Any]] = []
        while True:
            event = get_event()
            kind = event.__class__
            if kind is scalar_event:
                if event.anchor is not None or event.tag is not None:
                    raise _Unusual
                text = event.value
                tag = _STR
                if event.implicit[0]:
                    for candidate, pattern in implicit.get(text[:1], ()):
                        if pattern.match(text):
                            tag = candidate
                            break
                if tag == _STR:
                    value: Any = text
                elif tag == _NULL:
                    value = None
                elif tag == _BOOL:
                    value = yaml.constructor.SafeConstructor.bool_values[text.lower()]
                elif tag in _BY_CONSTRUCTOR:
                    try:
                        value = constructors[tag](loader, yaml.ScalarNode(tag, text, event.start_mark, event.end_mark))
                    except (NodeRefused, ValueError, OverflowError):
                        raise _Unusual from None
                else:  # a merge key, `=`, anything else
                    raise _Unusual
                identity: Any = (tag, text)
            elif kind is sequence_start or kind is mapping_start:
                if event.anchor is not None or event.tag is not None or len(stack) >= MAX_DEPTH:
                    raise _Unusual
                mapping = kind is mapping_start
                stack.append([{} if mapping else [], mapping, None, set() if mapping else None])
                continue
            elif kind in end_events:
                value = stack.pop()[0]
                identity = None  # a container: never a key
                if pack_cases and len(stack) == 1 and stack[0][2] == ("evalcases",) and isinstance(value, list):
                    value = tuple(value) if sink is None else None  # the packed cases
                    if sink is not None:
                        sink.placed = True
            else:  # an alias, or anything unexpected
                raise _Unusual
            if not stack:
                if not loader.check_event(yaml.DocumentEndEvent):
                    raise _Unusual
                get_event()  # document end
                if not loader.check_event(yaml.StreamEndEvent):
                    raise _Unusual  # another document: the node path says so
                return value
            frame = stack[-1]
            if not frame[1]:
                if pack_cases and len(stack) == 2 and stack[0][2] == ("evalcases",):
                    value = marshal.dumps(value)  # a whole case: packed before the next is read
                    if sink is not None:
                        sink.add(value)
                        continue
                frame[0].append(value)
            elif frame[2] is None:
                if identity is None or identity in frame[3]:
                    raise _Unusual  # a list or mapping as a key; a duplicate key
                frame[3].add(identity)
                frame[2] = (value,)
            else:
                frame[0][frame[2][0]] = value
                frame[2] = None
    except yaml.YAMLError:
        raise _Unusual from None
    finally:
        loader.dispose()


def _load(content: bytes | Opener, pack_cases: bool = False, sink: SpoolWriter | None = None) -> Any:
    """Parse one YAML document (`content`, or the file `content()` opens, once per attempt): the
    common block style read line by line (`block_yaml`), else the fast path from the parser's
    events (`_load_plain`), else `Loader`'s node path. The cyclic garbage collector is paused
    meanwhile: a large file builds hundreds of thousands of objects, none of them garbage, and
    collections triggered by those allocations would take longer than the parse itself.
    `sink`: packed cases go there (`_load_plain`), never all held."""
    read = (lambda: content) if isinstance(content, bytes) else content
    with collector_paused():
        try:
            return load_block(read(), pack_cases, sink)
        except Undecided:
            pass
        if sink is not None:
            sink.reset()
        try:
            return _load_plain(read(), pack_cases, sink)
        except _Unusual:
            pass
        if sink is not None:
            sink.reset()
        loader = Loader(read())
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
        if pack_cases and isinstance(data, dict) and isinstance(data.get("evalcases"), list):
            cases = data["evalcases"]
            data["evalcases"] = tuple(pack_case(case) for case in cases) if sink is None else None
            if sink is not None:
                for case in cases:
                    sink.add(pack_case(case))
                sink.placed = True
        return data
