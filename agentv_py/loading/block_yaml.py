"""The common shape of a dataset file read line by line, without the YAML parser: block mappings
and sequences, one scalar per line (plain, single- or double-quoted), `[]` and `{}`, comments.

It gives exactly the data PyYAML's node path (`yaml_loader.Loader`) builds, YAML 1.1 types
included, or raises `Undecided` as soon as a line is anything else (a flow collection, a block or
multi-line scalar, an anchor, an alias, a tag, a merge key, a duplicate key, a tab, a document
marker, a number Python cannot hold, a line it cannot place...): the caller then parses the file
with the parser, which reads or refuses it, located, as it always did. Scalars are resolved with
`Loader`'s own implicit resolvers and built as its constructors build them, without nodes.
"""

from __future__ import annotations

import itertools
import marshal
import re
from collections.abc import Iterable, Iterator
from typing import IO, Any, Protocol

from agentv_py.loading.yaml_loader import MAX_DEPTH
from agentv_py.loading.yaml_scalars import Undecided, plain

__all__ = ["Undecided", "load_block"]

_BLOCK = 1024 * 1024
_KEY_SPAN = 1000  # libyaml refuses a simple key longer than 1024 characters: leave long ones to it


# Characters this reader leaves to the parser: anything YAML does not print (the reader refuses
# it, located), and tabs, carriage returns, the other line breaks (NEL, U+2028, U+2029) and byte
# order marks, whose meaning depends on where they stand. (`_decoded` looks for them in the
# bytes, faster: tests hold the two to the same answer for every character. Not compiled here.)
_AWKWARD = r"[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SINGLE = re.compile(r"'((?:[^']|'')*)'")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", "e": "\x1b",
    " ": " ", '"': '"', "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}  # fmt: skip
# The most common lines: `key: "text"`, `key: 12`, `key: 1.5`, `key:`, each maybe after `- `.
_COMMON = re.compile(
    r"( *)(- +)?([A-Za-z_][A-Za-z0-9_]{0,200}):"
    r'(?: +(?:"([^"\\]*)"|(-?(?:0|[1-9][0-9]{0,17}))|(-?[0-9]{1,20}\.[0-9]{0,20})))? *$'
)
_NOT_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@`")
_EMPTY = object()  # a key or entry whose value is on the lines below (or null)


class Sink(Protocol):
    """Where packed cases go as they are read (`case_spool.SpoolWriter`)."""

    placed: bool

    def add(self, packed: bytes) -> None: ...


class _Frame:
    """A mapping or sequence being read: the column of its keys or dashes, and its open slot."""

    __slots__ = ("indent", "indentless", "is_map", "key", "obj", "open")

    def __init__(self, indent: int, is_map: bool, indentless: bool = False) -> None:
        self.indent = indent
        self.is_map = is_map
        self.indentless = indentless
        self.obj: Any = {} if is_map else []
        self.open = False  # the last key or entry has no value on its line: what is below is it
        self.key: Any = None


def _unescape(found: re.Match[str]) -> str:
    code = found.group(1)
    if len(code) == 1:
        try:
            return _ESCAPES[code]
        except KeyError:
            raise Undecided from None
    point = int(code[1:], 16)
    if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
        raise Undecided
    return chr(point)


def _quoted(rest: str) -> tuple[str, str]:
    """A quoted scalar at the start of `rest`: its value and what follows it on the line."""
    if rest[0] == '"':
        found = _DOUBLE.match(rest)
        if found is None:
            raise Undecided  # goes on to the next line
        text = found.group(1)
        if "\\" in text:
            text = _ESCAPE.sub(_unescape, text)
    else:
        found = _SINGLE.match(rest)
        if found is None:
            raise Undecided
        text = found.group(1).replace("''", "'")
    return text, rest[found.end() :]


def _ends_line(tail: str) -> bool:
    """Whether nothing but spaces and a comment follow a scalar."""
    if not tail:
        return True
    stripped = tail.lstrip(" ")
    return not stripped or (stripped[0] == "#" and stripped != tail)


def _value(text: str) -> Any:
    """The value of what follows `key:` or `- ` on a line, or _EMPTY."""
    if not text or text[0] == "#":
        return _EMPTY
    first = text[0]
    if first == '"' or first == "'":
        value, tail = _quoted(text)
        if not _ends_line(tail):
            raise Undecided
        return value
    if first == "[" or first == "{":
        body = text.split(" #", 1)[0].rstrip(" ")
        if body == "[]":
            return []
        if body == "{}":
            return {}
        raise Undecided  # a flow collection: the parser reads it
    cut = text.find(" #")
    body = (text if cut < 0 else text[:cut]).rstrip(" ")
    if first in _NOT_PLAIN_FIRST and not (first == "-" and len(body) > 1 and body[1] != " "):
        raise Undecided
    if ": " in body or body.endswith(":"):
        raise Undecided
    return plain(body)


def _key_value(key: Any) -> Any:
    """A key as this reader keeps it. Keys are told apart by value (`key in mapping`), the node path
    by tag and text: where the two could differ (`1` and `true`, `0.0` and `-0.0`, `.nan`), a
    repeated key is left to the node path, which either refuses it or keeps the last value; a NaN
    key, never equal to itself, is left to it at once."""
    if key != key:
        raise Undecided
    return key


def _key(rest: str) -> tuple[Any, str] | None:
    """`key: rest-of-line` at the start of `rest`: (key, what follows the colon), or None when the
    line holds no key."""
    first = rest[0]
    if first == '"' or first == "'":
        key, tail = _quoted(rest)
        after = tail.lstrip(" ")
        if not after or after[0] != ":":
            if _ends_line(tail):
                return None
            raise Undecided
        if len(after) > 1 and after[1] != " " or len(rest) - len(after) > _KEY_SPAN:
            raise Undecided
        return key, after[1:].lstrip(" ")
    colon = rest.find(": ")
    if colon < 0:
        if not rest.endswith(":"):
            return None
        colon = len(rest) - 1
    text = rest[:colon].rstrip(" ")
    if not text or first in _NOT_PLAIN_FIRST or "#" in text or colon > _KEY_SPAN or text.startswith(("---", "...")):
        raise Undecided
    return plain(text), rest[colon + 1 :].lstrip(" ")


def _texts(content: bytes | IO[bytes]) -> Iterator[list[str]]:
    """The file's lines, decoded, a block of them at a time; Undecided for text this reader leaves."""
    if isinstance(content, bytes):
        blocks: Iterable[bytes] = (content,)
    else:
        blocks = iter(lambda: content.read(_BLOCK), b"")
    left = b""
    for block in blocks:
        block = left + block
        cut = block.rfind(b"\n") + 1
        left = block[cut:]
        if cut:
            yield _decoded(block[:cut]).split("\n")
    if left:
        yield _decoded(left).split("\n")


# _AWKWARD in the bytes of UTF-8 text, where a lead byte is never a continuation byte: every byte
# but ASCII's control characters (what `translate` leaves of a block), then U+0080..U+009F,
# U+2028, U+2029, U+FEFF, U+FFFE and U+FFFF (surrogates are not UTF-8: `decode` refuses them).
_NOT_CONTROL = bytes(range(0x20, 0x7F)) + b"\n" + bytes(range(0x80, 0x100))
_AWKWARD_UTF8 = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf|\xef\xbf[\xbe\xbf]")


def _decoded(block: bytes) -> str:
    if block.translate(None, _NOT_CONTROL):
        raise Undecided  # an ASCII control character
    if block.isascii():
        return block.decode("ascii")
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        raise Undecided from None
    if _AWKWARD_UTF8.search(block):
        raise Undecided
    return text


_NO_KEY = object()  # a line with no key: a scalar entry of a list (`- text`), or dashes only
_LINES_KEPT = 16384  # lines decoded and kept for their repeats (then forgotten, all at once)
_MUTABLE = (list, dict)  # values never shared between lines
Decoded = tuple[tuple[int, ...], int, Any, Any]


def _decode(line: str, keys: dict[str, Any]) -> Decoded | None:
    """What a line says, from its text alone: the columns of its dashes (each opens an entry of a
    list), the column of what follows them, its key (_NO_KEY: none) and its value (_EMPTY: on the
    lines below); None for a blank or comment line. Undecided for a line this reader leaves.
    The same text always says the same: a dataset's many repeated lines are decoded once.
    `keys`: plain keys already resolved (`plain`), by their text."""
    found = _COMMON.match(line)
    if found is not None:
        spaces, dash, text, quoted, integer, decimal = found.groups()
        column = len(spaces)
        dashes: tuple[int, ...] = ()
        if dash is not None:
            dashes = (column,)
            column += len(dash)
        if quoted is not None:
            value: Any = quoted
        elif integer is not None:
            value = int(integer)
        elif decimal is not None:
            value = float(decimal)
        else:
            value = _EMPTY
        key = keys.get(text, _NO_KEY)
        if key is _NO_KEY:
            if len(keys) >= _LINES_KEPT:
                keys.clear()
            key = keys[text] = _key_value(plain(text))
        return dashes, column, key, value
    rest = line.lstrip(" ")
    if not rest or rest[0] == "#":
        return None
    column = len(line) - len(rest)
    if column == 0 and (rest[0] == "%" or rest.startswith(("---", "..."))):
        raise Undecided  # a directive or a document marker
    columns: list[int] = []
    while rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
        columns.append(column)
        stripped = rest[1:].lstrip(" ")
        column += len(rest) - len(stripped)
        rest = stripped
        if not rest:
            return tuple(columns), column, _NO_KEY, _EMPTY
    if rest[0] == "#":
        return tuple(columns), column, _NO_KEY, _EMPTY
    keyed = _key(rest)
    if keyed is None:
        return tuple(columns), column, _NO_KEY, _value(rest)
    key, after = keyed
    value = _value(after)
    return tuple(columns), column, _key_value(key), value


def load_block(content: bytes | IO[bytes], pack_cases: bool = False, sink: Sink | None = None) -> Any:
    """The document of a file in the common block style (module doc), else Undecided.
    `pack_cases` and `sink` as `source._load_plain` takes them: each case of the root mapping's
    `evalcases` list packed (`marshal`) as soon as it is read, into `sink` when there is one."""
    stack: list[_Frame] = []
    root: _Frame | None = None
    cases: _Frame | None = None  # the root's `evalcases` list, when its cases are packed
    packed: list[bytes] = []
    add = sink.add if sink is not None else packed.append

    def close() -> None:
        frame = stack.pop()
        if frame is cases:
            for case in frame.obj:
                add(marshal.dumps(case))
            frame.obj.clear()
            parent = stack[-1]
            parent.obj[parent.key] = tuple(packed) if sink is None else None
            if sink is not None:
                sink.placed = True

    def child(parent: _Frame, frame: _Frame) -> None:
        nonlocal cases
        if len(stack) >= MAX_DEPTH:
            raise Undecided
        if parent.is_map:
            parent.obj[parent.key] = frame.obj
            if pack_cases and parent is root and not frame.is_map and parent.key == "evalcases":
                cases = frame
        else:
            parent.obj[-1] = frame.obj
        parent.open = False
        stack.append(frame)

    def place(column: int, is_map: bool) -> _Frame:
        """The frame a key (`is_map`) or a dash at `column` belongs to, opened if need be."""
        nonlocal root
        while stack and stack[-1].indent > column:
            if len(stack) == 1:
                raise Undecided  # less indented than the document: the parser says what it is
            close()
        if not stack:
            if root is not None:
                raise Undecided
            root = _Frame(column, is_map)
            stack.append(root)
            return root
        top = stack[-1]
        if top.indent == column:
            if top.is_map == is_map:
                return top
            if top.is_map and top.open:  # `key:` then `- item` at the key's column
                frame = _Frame(column, False, indentless=True)
                child(top, frame)
                return frame
            if top.indentless:  # a key after such a list: the list is over
                close()
                return stack[-1]
            raise Undecided
        if not top.open:
            raise Undecided  # a continuation line, or one indented where nothing opens
        frame = _Frame(column, is_map)
        child(top, frame)
        return frame

    def entry(column: int) -> None:
        """A dash at `column`: a new entry of the list there, its value to come."""
        frame = place(column, False)
        if frame is cases and frame.obj:
            add(marshal.dumps(frame.obj.pop()))
        frame.obj.append(None)
        frame.open = True

    seen: dict[str, Decoded] = {}
    seen_get = seen.get
    keys: dict[str, Any] = {}
    for line in itertools.chain.from_iterable(_texts(content)):
        decoded = seen_get(line)
        if decoded is None:
            decoded = _decode(line, keys)
            if decoded is None:
                continue  # blank, or a comment
            if type(decoded[3]) not in _MUTABLE:  # `key: []` is a new list on every line
                if len(seen) >= _LINES_KEPT:
                    seen.clear()
                seen[line] = decoded
        dashes, column, key, value = decoded
        if dashes:
            for dash in dashes:
                entry(dash)
        top = stack[-1] if stack else None
        if key is _NO_KEY:
            if value is _EMPTY:
                continue
            if top is None or top.is_map or not top.open or top.indent >= column:
                raise Undecided  # a scalar on a line of its own
            top.obj[-1] = value
            top.open = False
            continue
        frame = top if top is not None and top.indent == column and top.is_map else place(column, True)
        obj = frame.obj
        if key in obj:
            raise Undecided  # a duplicate key: refused, located, by the node path
        frame.key = key
        if value is _EMPTY:
            obj[key] = None
            frame.open = True
        else:
            obj[key] = value
            frame.open = False
    while stack:
        close()
    return None if root is None else root.obj
