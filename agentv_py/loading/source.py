"""Reading YAML into located problems: the parse (dates stay strings), a content-hash parse cache,
line numbers for locations, and pydantic errors turned into `file:line: location: message`.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import marshal
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agentv_py.errors import ConfigError, Problem
from agentv_py.models.base import UNKNOWN_KEYS, unknown_key_error
from agentv_py.models.dataset import CONTENT_TAGS
from agentv_py.models.evaluators import EVALUATOR_TYPE_NAMES
from agentv_py.models.targets import PROVIDERS

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"

# Bounds on what a YAML file may make the loader build. A dataset is data from anywhere: a small
# file of nested aliases (a "billion laughs") must not expand into billions of values downstream,
# and deep nesting must not overflow a stack (C or Python) anywhere later.
MAX_ALIAS_VALUES = 1_000_000  # values reached through aliases, each counted by what it expands to
MAX_DEPTH = 100  # levels of nested lists and mappings


class LoadRefused(yaml.YAMLError):
    """A YAML file the loader will not build: too deep, aliases expanding too far, a recursive
    alias, a duplicate key, a number Python cannot hold. Located by line and data path."""

    def __init__(self, message: str, line: int | None, parts: list[str | int]) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.parts = parts


class _NodeRefused(Exception):
    """Raised while constructing: the node is located (path search) by `get_single_data`."""

    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


class _Frame:
    """A list or mapping being composed."""

    __slots__ = ("anchor", "first_lines", "height", "key", "node", "weight")

    def __init__(self, node: yaml.Node, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.weight = 1  # values in this node, aliases counted by what they expand to
        self.height = 0  # levels of lists and mappings below this one, aliases counted expanded
        self.key: yaml.Node | None = None  # a mapping's key whose value is being composed
        self.first_lines: dict[tuple[str, str], int] | None = {} if isinstance(node, yaml.MappingNode) else None


def _key_part(node: yaml.Node | None) -> str | int:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return "?"


def _frames_path(stack: list[_Frame]) -> list[str | int]:
    """The data path of the node being composed under the innermost frame."""
    parts: list[str | int] = []
    for frame in stack:
        if isinstance(frame.node, yaml.SequenceNode):
            parts.append(len(frame.node.value))
        elif frame.key is not None:
            parts.append(_key_part(frame.key))
    return parts


def _node_path(root: yaml.Node, target: yaml.Node) -> list[str | int]:
    """The data path from `root` to `target` (found by identity; each node visited once)."""
    stack: list[tuple[yaml.Node, list[str | int]]] = [(root, [])]
    seen: set[int] = set()
    while stack:
        node, parts = stack.pop()
        if node is target:
            return parts
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, [*parts, i]) for i, child in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, parts))
                stack.append((value, [*parts, _key_part(key)]))
    return []


def int_digit_limit() -> int:
    """Python's limit on the digits of an integer read from text (0: no limit)."""
    return sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


def too_many_digits_message(where: str = "") -> str:
    """`where`: " in ..." when the integer is inside something (JSON text)."""
    limit = int_digit_limit()
    return f"integer with more than {limit} digits{where}: Python reads at most {limit} (quote it to keep it as text)"


@functools.lru_cache(maxsize=4)
def _power_of_ten(digits: int) -> int:
    return int(10**digits)


def _too_many_digits(value: int) -> bool:
    limit = int_digit_limit()
    return bool(limit) and abs(value) >= _power_of_ten(limit)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe YAML, except that dates stay strings: ground truth `2025-01-15` must compare as the
    text the extractor emits, not as a Python date.

    Nodes are composed here, without recursion, from the (C) parser's events, so that a file is
    refused as soon as it nests too deep, its aliases expand too far or refer to themselves, or a
    mapping repeats a key; the tree is then constructed as usual.
    """

    def get_single_node(self) -> yaml.Node | None:
        self.get_event()  # stream start
        document = None
        if not self.check_event(yaml.StreamEndEvent):
            document = self._compose_document()
        if not self.check_event(yaml.StreamEndEvent):
            event = self.get_event()
            raise yaml.composer.ComposerError(
                "expected a single document in the stream",
                document.start_mark if document is not None else None,
                "but found another document",
                event.start_mark,
            )
        self.get_event()  # stream end
        return document

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        try:
            return self.construct_document(node)
        except _NodeRefused as exc:
            raise LoadRefused(exc.message, exc.node.start_mark.line + 1, _node_path(node, exc.node)) from None

    def _compose_document(self) -> yaml.Node:
        """Compose one document: the events of its nodes, iteratively, every bound checked."""
        get_event = self.get_event
        # Tag resolution inlined (no path resolvers here): a plain scalar's first character picks
        # the patterns to try; anything else is a string, a list or a mapping.
        implicit = self.yaml_implicit_resolvers
        assert not self.yaml_path_resolvers and None not in implicit
        str_tag, seq_tag, map_tag = self.DEFAULT_SCALAR_TAG, self.DEFAULT_SEQUENCE_TAG, self.DEFAULT_MAPPING_TAG
        scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
        sequence_start, mapping_start = yaml.SequenceStartEvent, yaml.MappingStartEvent
        scalar_node, sequence_node, mapping_node = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
        # anchor -> (node, weight, height); weight None: still being composed
        anchors: dict[str, tuple[yaml.Node, int | None, int]] = {}
        stack: list[_Frame] = []
        expanded = 0
        get_event()  # document start
        while True:
            event = get_event()
            kind = event.__class__
            node: yaml.Node
            if kind is scalar_event:
                tag, value = event.tag, event.value
                if tag is None or tag == "!":
                    tag = str_tag
                    if event.implicit[0]:
                        for candidate, pattern in implicit.get(value[:1], ()):
                            if pattern.match(value):
                                tag = candidate
                                break
                node = scalar_node(tag, value, event.start_mark, event.end_mark, style=event.style)
                weight, height = 1, 0
                if event.anchor is not None:
                    self._check_anchor(anchors, event, stack)
                    anchors[event.anchor] = (node, 1, 0)
            elif kind is alias_event:
                anchor = event.anchor
                if anchor not in anchors:
                    raise yaml.composer.ComposerError(None, None, f"found undefined alias {anchor!r}", event.start_mark)
                node, known, height = anchors[anchor]
                if known is None:
                    raise LoadRefused(
                        f"alias *{anchor} refers to a node that contains it (a recursive structure); "
                        "datasets cannot hold recursive data",
                        event.start_mark.line + 1,
                        _frames_path(stack),
                    )
                if len(stack) + height > MAX_DEPTH:
                    # Each anchored node is within the limit, but one holding aliases of others
                    # would build a far deeper value than any written out.
                    raise LoadRefused(
                        f"YAML nests deeper than {MAX_DEPTH} levels: alias *{anchor} ({height} levels deep) "
                        f"used at level {len(stack)}",
                        event.start_mark.line + 1,
                        _frames_path(stack),
                    )
                weight = known
                expanded += weight
                if expanded > MAX_ALIAS_VALUES:
                    raise LoadRefused(
                        f'YAML aliases expand to more than {MAX_ALIAS_VALUES:,} values (a "billion laughs" file?); '
                        "write the data out, or use fewer nested aliases",
                        event.start_mark.line + 1,
                        _frames_path(stack),
                    )
            elif kind is sequence_start or kind is mapping_start:
                if len(stack) >= MAX_DEPTH:
                    raise LoadRefused(
                        f"YAML nests deeper than {MAX_DEPTH} levels", event.start_mark.line + 1, _frames_path(stack)
                    )
                node_kind = sequence_node if kind is sequence_start else mapping_node
                tag = event.tag
                if tag is None or tag == "!":
                    tag = seq_tag if kind is sequence_start else map_tag
                container = node_kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
                if event.anchor is not None:
                    self._check_anchor(anchors, event, stack)
                    anchors[event.anchor] = (container, None, 0)
                stack.append(_Frame(container, event.anchor))
                continue
            else:  # the end of a list or a mapping
                frame = stack.pop()
                node = frame.node
                node.end_mark = event.end_mark
                weight, height = frame.weight, frame.height + 1
                if frame.anchor is not None:
                    anchors[frame.anchor] = (node, weight, height)
            if not stack:
                get_event()  # document end
                return node
            parent = stack[-1]
            parent.weight += weight
            if height > parent.height:
                parent.height = height
            if parent.first_lines is None:
                parent.node.value.append(node)
            elif parent.key is None:
                if isinstance(node, scalar_node) and node.tag != _MERGE:
                    self._check_duplicate(parent, node, stack)
                parent.key = node
            else:
                parent.node.value.append((parent.key, node))
                parent.key = None

    @staticmethod
    def _check_anchor(anchors: dict[str, tuple[yaml.Node, int | None, int]], event: Any, stack: list[_Frame]) -> None:
        if event.anchor in anchors:
            first = anchors[event.anchor][0].start_mark.line + 1
            raise LoadRefused(
                f"anchor &{event.anchor} is defined twice (first at line {first}); give each anchor its own name",
                event.start_mark.line + 1,
                _frames_path(stack),
            )

    @staticmethod
    def _check_duplicate(frame: _Frame, key: yaml.ScalarNode, stack: list[_Frame]) -> None:
        assert frame.first_lines is not None
        identity = (key.tag, key.value)
        first = frame.first_lines.get(identity)
        line = key.start_mark.line + 1
        if first is not None:
            raise LoadRefused(
                f"duplicate key '{key.value}' (first at line {first})", line, [*_frames_path(stack), str(key.value)]
            )
        frame.first_lines[identity] = line


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    """An integer, refused (located) when it has more digits than Python reads: over the limit
    a decimal raises ValueError, and a hex or binary one would fail later, when written out."""
    try:
        value = int(yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
    except ValueError:
        raise _NodeRefused(too_many_digits_message(), node) from None
    if len(node.value) > 20 and _too_many_digits(value):
        raise _NodeRefused(too_many_digits_message(), node)
    return value


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != _TIMESTAMP]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
_Loader.add_constructor(_TIMESTAMP, lambda loader, node: loader.construct_scalar(node))
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)

# Tags safe YAML builds into values that are not JSON (a set, bytes, a list of pairs): a dataset
# holds only JSON values (and dates as text), so these are refused where they are written.
_NOT_JSON_TAGS = ("set", "binary", "omap", "pairs")


def _refuse_tag(loader: Any, node: yaml.Node) -> Any:
    short = node.tag.replace("tag:yaml.org,2002:", "!!", 1)
    raise _NodeRefused(f"YAML tag {short} is not allowed: datasets hold only JSON values", node)


for _name in _NOT_JSON_TAGS:
    _Loader.add_constructor(f"tag:yaml.org,2002:{_name}", _refuse_tag)

CACHE_VERSION = "3"  # 2: files are refused by the bounded composer before they are cached; 3: tags
CACHE_MAX_ENTRIES = 32


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
                loader = _Loader(self._path.read_bytes())
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

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        return Problem(self.display, self.lines.line(parts), format_location(parts), message)

    def shifted(self, offset: int) -> Source:
        """This source for a slice of the cases that starts at case `offset`: `evalcases[i]` of
        the slice is located (line and text) as `evalcases[offset + i]` of the file."""
        return self if offset == 0 else _ShiftedSource(self.path, self.display, self.lines, base=self, offset=offset)


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


PackedCases = tuple[bytes, ...]
"""A dataset's cases packed one by one (`marshal`, about 150 bytes for a small case): what a
parse hands the loader in place of the `evalcases` list, unpacked a slice at a time."""


def pack_case(value: Any) -> bytes:
    return marshal.dumps(value)


def unpack_cases(packed: PackedCases) -> list[Any]:
    return [marshal.loads(item) for item in packed]


def split_cases(raw: Any) -> tuple[dict[str, Any], PackedCases] | None:
    """A parsed dataset as its suite keys and its packed cases; None when it is not a mapping
    with a list of cases (one pass over the whole value then says what is wrong)."""
    if not isinstance(raw, dict):
        return None
    cases = raw.get("evalcases")
    if isinstance(cases, list):
        cases = tuple(pack_case(case) for case in cases)
    if not isinstance(cases, tuple):
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
    packed as soon as it is parsed, so a dataset of any size is never held as Python objects whole."""
    display = display_path(path)
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError([Problem(display, None, "", "file not found")]) from None
    except IsADirectoryError:
        raise ConfigError([Problem(display, None, "", "is a directory, expected a YAML file")]) from None
    source = Source(path, display, _LineIndex(path))
    try:
        data = _parse_cached(content, pack_cases)
    except LoadRefused as exc:
        location = format_location(exc.parts[:_MAX_SHOWN_PARTS]) + ("..." if len(exc.parts) > _MAX_SHOWN_PARTS else "")
        raise ConfigError([Problem(display, exc.line, location, exc.message)]) from None
    except yaml.reader.ReaderError as exc:
        line, reason = _unreadable(content, exc)
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
_NOT_PRINTABLE = re.compile(r"[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


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
    found = _NOT_PRINTABLE.search(text)
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


def cache_dir() -> Path | None:
    """Where parsed YAML is cached (None when AGENTV_NO_CACHE is set)."""
    if os.environ.get("AGENTV_NO_CACHE"):
        return None
    base = os.environ.get("AGENTV_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agentv"
    )
    return Path(base) / "yaml"


class _Unusual(Exception):
    """The fast path met something it leaves to the node path (an anchor, an alias, a tag, a
    merge key, a duplicate key, a refused value, a parse error)."""


_STR, _NULL, _BOOL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool"
_BY_CONSTRUCTOR = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _load_plain(content: bytes, pack_cases: bool = False) -> Any:
    """The data of a YAML document built straight from the C parser's events, in one pass,
    without nodes: the common case (no anchors, aliases, explicit tags or merge keys; every
    bound kept). Anything else raises _Unusual, and the node path (`_Loader`) parses the file
    again and says what is wrong, located, exactly as it always did. `pack_cases`: each item of
    the root mapping's `evalcases` list is packed as soon as it is complete (`read_yaml`)."""
    loader = _Loader(content)
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
                    except (_NodeRefused, ValueError, OverflowError):
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
                    value = tuple(value)  # the packed cases
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


def _load(content: bytes, pack_cases: bool = False) -> Any:
    """Parse one YAML document: the fast path (`_load_plain`), else `_Loader`'s node path. The
    cyclic garbage collector is paused meanwhile: a large file builds hundreds of thousands of
    objects, none of them garbage, and collections triggered by those allocations would take
    longer than the parse itself."""
    paused = gc.isenabled()
    gc.disable()
    try:
        try:
            return _load_plain(content, pack_cases)
        except _Unusual:
            pass
        loader = _Loader(content)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
        if pack_cases and isinstance(data, dict) and isinstance(data.get("evalcases"), list):
            data["evalcases"] = tuple(pack_case(case) for case in data["evalcases"])
        return data
    finally:
        if paused:
            gc.enable()


def _parse_cached(content: bytes, pack_cases: bool = False) -> Any:
    """yaml.load, memoised on disk by content hash: a large dataset is parsed once, not per run.

    The cache holds only the parsed data; validation always runs in full. Any cache problem
    falls back to parsing.
    """
    directory = cache_dir()
    if directory is None or len(content) < 64 * 1024:
        return _load(content, pack_cases)
    digest = hashlib.blake2b(content, digest_size=20)
    digest.update(f"{CACHE_VERSION}/{yaml.__version__}/{int(pack_cases)}".encode())
    entry = directory / f"{digest.hexdigest()}.marshal"
    try:
        cached = entry.read_bytes()
        paused = gc.isenabled()
        gc.disable()
        try:
            return marshal.loads(cached)
        finally:
            if paused:
                gc.enable()
    except (OSError, ValueError, EOFError, TypeError):
        pass
    data = _load(content, pack_cases)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(marshal.dumps(data))
        os.replace(temporary, entry)
        entries = sorted(directory.glob("*.marshal"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-CACHE_MAX_ENTRIES]:
            old.unlink(missing_ok=True)
    except (OSError, ValueError):
        pass
    return data


_JSON_TYPE = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _data_path(raw: Any, loc: tuple[Any, ...]) -> list[str | int]:
    """The part of a pydantic loc that exists in the raw data (drops union tags like 'items')."""
    parts: list[str | int] = []
    current = raw
    for part in loc:
        if (
            isinstance(current, dict)
            and part in current
            or isinstance(current, list)
            and isinstance(part, int)
            and part < len(current)
        ):
            current = current[part]
            parts.append(part)
        elif isinstance(current, (dict, list)):
            # a tag (skip it) or a key that is absent (a "missing" error: keep it as the last part)
            if not (isinstance(part, str) and _is_union_tag(part)):
                parts.append(part)
                current = None
        else:
            break
    return parts


# Union member tags pydantic puts into error locations (not keys of the data).
_UNION_TAGS = {*CONTENT_TAGS, *EVALUATOR_TYPE_NAMES, *PROVIDERS}


def _is_union_tag(part: str) -> bool:
    return part in _UNION_TAGS


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    msg = str(error["msg"])
    value = error.get("input")
    if kind == "missing":
        return f"missing required key '{error['loc'][-1]}'"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind in {"unknown_key", "unknown_tag", "missing_tag", "alias_conflict", "invalid_option"}:
        return msg
    if kind == "literal_error":
        return f"invalid value {_short(value)}: expected {error['ctx']['expected']}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"expected a mapping, got {_json_type(value)} {_short(value)}"
    if kind.endswith(("_type", "_parsing")):
        text = f"{msg[0].lower()}{msg[1:]}, got {_json_type(value)} {_short(value)}"
        if kind == "string_type" and isinstance(value, bool):
            text += " (YAML reads yes/no/on/off/true/false as booleans: quote the value)"
        return text
    return f"{msg} (got {_short(value)})"


def validate(source: Source, raw: Any, model: type[BaseModel]) -> tuple[Any | None, list[Problem]]:
    """Validate parsed YAML against a model; every problem located (unknown keys collected, not
    fatal). Returns (model or None, problems sorted by line)."""
    if not isinstance(raw, dict):
        kind = _json_type(raw)
        what = "empty" if raw is None else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
        return None, [source.problem([], f"expected a mapping at the top level, the file is {what}")]
    unknown: list[tuple[int, list[str], list[str]]] = []
    problems: list[Problem] = []
    parsed = None
    try:
        parsed = model.model_validate(raw, context={UNKNOWN_KEYS: unknown})
    except ValidationError as exc:
        for error in exc.errors():
            parts = _data_path(raw, tuple(error["loc"]))
            key = (error.get("ctx") or {}).get("agentv_key")
            if key is not None and (not parts or parts[-1] != key):
                parts.append(key)
            problems.append(source.problem(parts, _message(error)))
    if unknown:
        paths = _paths_by_identity(raw)
        for identity, keys, valid in unknown:
            base = paths.get(identity, [])
            for key in keys:
                problems.append(source.problem([*base, key], str(unknown_key_error([key], valid))))
    problems.sort(key=lambda p: (p.line or 0, p.location))
    return (parsed if not problems else None), problems


def _paths_by_identity(raw: Any) -> dict[int, list[str | int]]:
    found: dict[int, list[str | int]] = {}
    stack: list[tuple[Any, list[str | int]]] = [(raw, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            found[id(node)] = path
            stack.extend((v, [*path, k]) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node) if isinstance(v, (dict, list)))
    return found
