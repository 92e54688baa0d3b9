"""JSON written as it is produced: `json.dump(value, indent=2)` for values whose arrays and objects
come from generators (a comparison's case lists, a merged run's manifest), so a document of any
size is never held whole."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any


class Pairs:
    """An object written from a stream of (key, value) pairs."""

    def __init__(self, pairs: Iterable[tuple[str, Any]]) -> None:
        self.pairs = pairs


def write_json(out: IO[str], value: Any, depth: int = 0, *, ensure_ascii: bool = True) -> None:
    """`json.dump(value, out, indent=2, ensure_ascii=...)`, streaming: generators become arrays
    and `Pairs` objects, written one item at a time."""
    if isinstance(value, dict):
        value = Pairs(value.items())
    if not isinstance(value, Pairs) and not isinstance(value, (Iterator, list)):
        out.write(json.dumps(value, ensure_ascii=ensure_ascii))
        return
    pad, inner = "\n" + "  " * depth, "\n" + "  " * (depth + 1)
    is_object = isinstance(value, Pairs)
    items: Iterable[Any] = value.pairs if isinstance(value, Pairs) else value
    empty = True
    for item in items:
        out.write(("{" if is_object else "[") + inner if empty else "," + inner)
        empty = False
        if is_object:
            key, item = item
            out.write(json.dumps(key, ensure_ascii=ensure_ascii) + ": ")
        write_json(out, item, depth + 1, ensure_ascii=ensure_ascii)
    out.write(("{}" if is_object else "[]") if empty else pad + ("}" if is_object else "]"))
