"""JSON written as it is produced: `json.dump(value, indent=2)` for values whose arrays and objects
come from generators (a comparison's case lists, a merged run's manifest), so a document of any
size is never held whole."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring, encode_basestring_ascii  # what `json.dumps` writes a str with
from typing import IO, Any


class Pairs:
    """An object written from a stream of (key, value) pairs."""

    def __init__(self, pairs: Iterable[tuple[str, Any]]) -> None:
        self.pairs = pairs


class Objects:
    """An array of objects of the same keys, one per tuple of scalars (str, int, float, bool or
    None, exactly those types) in `rows`: written as `json.dumps(indent=2)` writes the list of
    dicts, without a dict per object."""

    def __init__(self, keys: tuple[str, ...], rows: Iterable[tuple[Any, ...]]) -> None:
        self.keys, self.rows = keys, rows


_SCALARS = frozenset((str, int, float, bool, type(None)))
_CHUNK = 256  # plain items of an array written at once
_FLOATS_KEPT = 4096  # texts of floats `Objects` remembers


def _plain(item: Any) -> bool:
    """Written alike by `json.dumps` and item by item: a scalar, or an object of str keys and
    scalar values (exact types: a subclass may write otherwise)."""
    kind = type(item)
    if kind in _SCALARS:
        return True
    return kind is dict and all(type(key) is str and type(value) in _SCALARS for key, value in item.items())


def write_json(out: IO[str], value: Any, depth: int = 0, *, ensure_ascii: bool = True) -> None:
    """`json.dump(value, out, indent=2, ensure_ascii=...)`, streaming: generators become arrays
    and `Pairs` objects, written one item at a time (`_write_array`: plain items a chunk at a time)."""
    if isinstance(value, Objects):
        _write_objects(out, value, depth, ensure_ascii)
        return
    if isinstance(value, dict):
        value = Pairs(value.items())
    if not isinstance(value, Pairs) and not isinstance(value, (Iterator, list)):
        out.write(json.dumps(value, ensure_ascii=ensure_ascii))
        return
    pad, inner = "\n" + "  " * depth, "\n" + "  " * (depth + 1)
    if not isinstance(value, Pairs):
        _write_array(out, value, depth, ensure_ascii)
        return
    empty = True
    for key, item in value.pairs:
        out.write("{" + inner if empty else "," + inner)
        empty = False
        out.write(json.dumps(key, ensure_ascii=ensure_ascii) + ": ")
        write_json(out, item, depth + 1, ensure_ascii=ensure_ascii)
    out.write("{}" if empty else pad + "}")


def _write_array(out: IO[str], items: Iterable[Any], depth: int, ensure_ascii: bool) -> None:
    """An array's items at `depth`; runs of plain items are written a chunk at a time, each item
    by the standard library's C encoder (`json.dumps` with `indent` takes the pure-Python one),
    laid out as `indent=2` lays it out (JSON text has no newline but between tokens)."""
    pad, inner = "\n" + "  " * depth, "\n" + "  " * (depth + 1)
    encode = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=("," + inner + "  ", ": ")).encode
    empty = True
    chunk: list[str] = []

    def flush() -> None:
        nonlocal empty
        out.write(("[" if empty else ",") + inner + ("," + inner).join(chunk))
        empty = False
        chunk.clear()

    for item in items:
        if _plain(item):
            if type(item) is not dict or not item:
                chunk.append(encode(item))
            else:  # {"k": v,<inner>  "k2": v2} -> {<inner>  "k": v,<inner>  "k2": v2<inner>}
                chunk.append("{" + inner + "  " + encode(item)[1:-1] + inner + "}")
            if len(chunk) >= _CHUNK:
                flush()
            continue
        if chunk:
            flush()
        out.write("[" + inner if empty else "," + inner)
        empty = False
        write_json(out, item, depth + 1, ensure_ascii=ensure_ascii)
    if chunk:
        flush()
    out.write("[]" if empty else pad + "]")


def _float(value: float) -> str:
    """A float as the json encoders write it (allow_nan, their default)."""
    if math.isfinite(value):
        return float.__repr__(value)
    return "Infinity" if value > 0 else "-Infinity" if value < 0 else "NaN"


def _scalars(ensure_ascii: bool) -> dict[type, Callable[[Any], str]]:
    """Per scalar type, how `json.dumps` writes a value of it."""
    return {
        str: encode_basestring_ascii if ensure_ascii else encode_basestring,
        float: _float,
        int: int.__repr__,
        bool: lambda value: "true" if value else "false",
        type(None): lambda value: "null",
    }


def _write_objects(out: IO[str], value: Objects, depth: int, ensure_ascii: bool) -> None:
    """`Objects` at `depth`, a chunk of objects at a time, laid out as `_write_array` lays out a
    list of plain dicts; each scalar written as the json encoders write it."""
    pad, inner = "\n" + "  " * depth, "\n" + "  " * (depth + 1)
    scalars = _scalars(ensure_ascii)
    name = scalars[str]
    floats: dict[float, str] = {}  # the texts of floats written so far (scores repeat)

    def float_text(value: float) -> str:
        text = floats.get(value)
        if text is None:
            text = _float(value)
            if value and len(floats) < _FLOATS_KEPT:  # 0.0 and -0.0 are equal keys, written apart
                floats[value] = text
        return text

    scalars[float] = float_text
    # `{` <inner + 2> "key": value `,` <inner + 2> "key": value ... <inner> `}`, the format escaped
    heads = [("" if at == 0 else ",") + inner + "  " + name(key) + ": " for at, key in enumerate(value.keys)]
    template = ("{" + "%s".join(head.replace("%", "%%") for head in heads) + "%s" + inner + "}") if heads else "{}"
    width = len(heads)
    empty = True
    chunk: list[str] = []
    for row in value.rows:
        if len(row) != width:
            raise ValueError(f"an object of {width} keys given {len(row)} values")
        chunk.append(template % tuple([scalars[type(item)](item) for item in row]))
        if len(chunk) >= _CHUNK:
            out.write(("[" if empty else ",") + inner + ("," + inner).join(chunk))
            empty = False
            chunk.clear()
    if chunk:
        out.write(("[" if empty else ",") + inner + ("," + inner).join(chunk))
        empty = False
    out.write("[]" if empty else pad + "]")
