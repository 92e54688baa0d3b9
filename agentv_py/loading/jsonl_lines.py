"""Reading a JSONL dataset's lines (`loading.jsonl`): a chunk of lines at once by orjson when one
check of the whole chunk vouches for every line of it (`chunk_values`), else each line by orjson
when its own checks vouch for it (`fast_values`), else by the standard library (`read_line`),
whose reading (and every problem's text) is what the other two must give. orjson is imported on
first use: only a JSONL dataset needs it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.yaml_loader import MAX_DEPTH, nesting_depth
from agentv_py.scoring.jsontext import TOO_DEEP, loads

_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # the fewest digits of an integer beyond 64 bits (which orjson reads as a float)


@cache
def _orjson() -> Any:
    import orjson

    return orjson


def fast_values(lines: Iterable[bytes]) -> Iterator[Any]:
    """Each line's object as orjson reads it, when that is the standard library's reading and it
    needs no check of its own: an object that orjson writes back byte for byte, or whose colons
    (its keys) all survive that (no key written twice) and which holds no run of 19 digits (no
    integer beyond 64 bits), nested no deeper than the line's brackets allow; else None (the line
    is for `read_line`)."""
    orjson = _orjson()
    loads_, dumps, refused = orjson.loads, orjson.dumps, orjson.JSONDecodeError
    for raw in lines:
        try:
            value = loads_(raw)
        except refused:
            yield None
            continue
        if type(value) is dict and raw.count(b"{") + raw.count(b"[") <= MAX_DEPTH:
            written = dumps(value)
            if written == raw or (
                raw.count(b":") == written.count(b":")
                and b"\\u003" not in raw  # `\u003a`, a colon that is not one in the text
                and _LONG_NUMBER not in raw.translate(_DIGITS_AS_ZERO)
            ):
                yield value
                continue
        yield None


def chunk_values(lines: Sequence[bytes]) -> list[Any] | None:
    """The objects of `lines` (as a file has them: each ending in `\\n`, but perhaps the last) as
    orjson reads them, when one check of them all shows that every line is an object that orjson
    writes back byte for byte (so `fast_values` takes it as it is), its `\\r`s aside, nested at
    most MAX_DEPTH deep; else None (read them one by one).

    The check: the list of objects is written by orjson inside `_wrapping()` lists, which makes
    orjson refuse to write one nested deeper than MAX_DEPTH, and the text must be the lines
    joined, each line's `\\n` a comma. Each line was read alone, as one object; the text of an
    object written by orjson ends at the brace matching its first, as the line's does, so where
    the two texts agree each line is its object's text exactly. The `\\r`s left out are whitespace
    between tokens (a string cannot hold one: orjson refuses a control character in a string):
    they change no value."""
    wrapping = _wrapping()
    if wrapping is None or not lines:
        return None
    orjson = _orjson()
    holder: list[Any] = [None]  # the innermost wrapping list: it holds the objects being written
    wrapped = holder
    for _ in range(wrapping - 1):
        wrapped = [wrapped]
    values: list[Any] = []
    for start in range(0, len(lines), _BATCH):  # each batch written back while its objects are in cache
        batch = lines[start : start + _BATCH]
        try:
            holder[0] = read = list(map(orjson.loads, batch))
            written = orjson.dumps(wrapped)
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # not JSON; nested too deep
            return None
        if set(map(type, read)) != {dict} or not _written_as(written, batch, wrapping + 1):
            return None
        values += read
    return values


_BATCH = 128  # lines read and written back at a time: their objects stay in cache, orjson's output small


def _written_as(written: bytes, lines: Sequence[bytes], brackets: int) -> bool:
    """Whether `written` is `brackets` `[`, the lines joined (each line's `\\n` a comma, its `\\r`s
    left out), then `brackets` `]` (which a list written by orjson ends with)."""
    joined = b"".join(lines)
    if b"\r" in joined:
        joined = joined.replace(b"\r", b"")
    joined = joined.replace(b"\n", b",")
    text = memoryview(joined)[: -1 if joined.endswith(b",") else None]  # the last line's "\n" ends the list
    return len(written) == len(text) + 2 * brackets and written.startswith(text, brackets)


_ORJSON_DEPTH = 254  # the deepest value orjson writes (its recursion limit): lists and objects alike


@cache
def _wrapping() -> int | None:
    """How many lists to wrap around a list of objects for orjson to refuse writing it exactly when
    one of them nests deeper than MAX_DEPTH (`chunk_values`): found from orjson's limit, then
    checked on the edge cases (an object then lists, all empty inside); None when the installed
    orjson does not behave so (then no chunk is read whole)."""
    orjson = _orjson()
    wrapping = _ORJSON_DEPTH - 1 - MAX_DEPTH

    def writes(depth: int) -> bool:
        value: Any = []
        for _ in range(depth - 2):
            value = [value]
        wrapped: Any = [{"a": value}]
        for _ in range(wrapping):
            wrapped = [wrapped]
        try:
            orjson.dumps(wrapped)
        except orjson.JSONEncodeError:
            return False
        return True

    return wrapping if writes(MAX_DEPTH) and not writes(MAX_DEPTH + 1) else None


def read_line(raw: bytes, number: int, display: str, problems: list[Problem]) -> dict[str, Any] | None:
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
        kind = json_kind(value)
        problems.append(
            Problem(display, number, "", f"expected a JSON object (one case per line), got {kind} {_short(text)}")
        )
        return None
    if text.count("[") + text.count("{") > MAX_DEPTH and nesting_depth(value) > MAX_DEPTH:
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


def json_kind(value: Any) -> str:
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
