"""Field paths: `invoice.line_items[0].amount` (dot notation with array indices), `$` for the whole
answer (`$[0].total`, `$.total`), and `[*]` for every item of a list (`line_items[*].amount`: the
list of each item's amount, in order; an item without one gives null)."""

from __future__ import annotations

import functools
import re
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()
"""Sentinel for "the path does not resolve" (distinct from a JSON null)."""


def is_empty(value: Any) -> bool:
    """SPEC §5's one definition of "nothing at this path", used alike by the case score
    (field_accuracy), the per-field metrics and the failure taxonomy: absent (MISSING), null, a
    string of whitespace only, an empty list or an empty object. `0`, `false` and `[null]` are values."""
    if value is MISSING or value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, (list, dict)) and not value


_SEGMENT = re.compile(r"([^.\[\]]*)((?:\[(?:\d+|\*)\])*)")
_INDEX = re.compile(r"\[(\d+|\*)\]")
ROOT = "$"
"""The path of the whole answer (and of the whole ground truth)."""
WILDCARD = "*"
"""The `[*]` step of a parsed path: every item of a list."""


class PathSyntaxError(ValueError):
    """A malformed path such as `a..b`, `a[` or `a[x]`."""


@functools.lru_cache(maxsize=4096)
def parse_path(path: str) -> tuple[str | int, ...]:
    """Split a path into keys (str), indices (int) and `[*]` steps (the WILDCARD object itself;
    a key spelt `*` is another string). `$` alone is the empty path: the whole value.

    >>> parse_path("invoice.line_items[0].amount")
    ('invoice', 'line_items', 0, 'amount')
    >>> parse_path("$")
    ()
    """
    if not path or path.strip() != path:
        raise PathSyntaxError(f"malformed path '{path}': empty or surrounded by spaces")
    if path == ROOT:
        return ()
    rest = path[1:] if path.startswith(ROOT + "[") else path[2:] if path.startswith(ROOT + ".") else path
    if not rest:
        raise PathSyntaxError(f"malformed path '{path}': nothing after '$.'")
    parts: list[str | int] = []
    for position, segment in enumerate(rest.split(".")):
        match = _SEGMENT.fullmatch(segment)
        # A key is required, except that a path may start with an index into a top-level list.
        if match is None or not (match.group(1) or (position == 0 and match.group(2))) or match.group(1) == ROOT:
            raise PathSyntaxError(
                f"malformed path '{path}': segment '{segment}' is not a key optionally followed by "
                "[index] or [*] ('$' alone is the whole answer)"
            )
        if match.group(1):
            parts.append(_Key(match.group(1)))
        parts.extend(WILDCARD if i == "*" else int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(parts)


class _Key(str):
    """A key of a parsed path: a str that is never the WILDCARD step, even for a key named `*`."""

    __slots__ = ()


def path_problem(path: str) -> str | None:
    """The reason a path is malformed, or None when it parses."""
    try:
        parse_path(path)
    except PathSyntaxError as exc:
        return str(exc)
    return None


def resolve(data: Any, path: str) -> Any:
    """The value at `path` in JSON-like data, or MISSING. Never raises. `$` is `data` itself; a
    `[*]` step on a list gives the list of what the rest of the path resolves to in each item
    (null where an item has nothing there), and MISSING on anything else."""
    try:
        parts = parse_path(path)
    except PathSyntaxError:
        return MISSING
    return _walk(data, parts)


def _walk(current: Any, parts: tuple[str | int, ...]) -> Any:
    for step, part in enumerate(parts):
        if isinstance(part, int):
            if isinstance(current, list) and part < len(current):
                current = current[part]
            else:
                return MISSING
        elif part is WILDCARD:
            if not isinstance(current, list):
                return MISSING
            rest = parts[step + 1 :]
            return [None if (value := _walk(item, rest)) is MISSING else value for item in current]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return MISSING
    return current
