"""Field paths: `invoice.line_items[0].amount` (dot notation with array indices)."""

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


_SEGMENT = re.compile(r"([^.\[\]]*)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")


class PathSyntaxError(ValueError):
    """A malformed path such as `a..b`, `a[` or `a[x]`."""


@functools.lru_cache(maxsize=4096)
def parse_path(path: str) -> tuple[str | int, ...]:
    """Split a path into keys (str) and indices (int).

    >>> parse_path("invoice.line_items[0].amount")
    ('invoice', 'line_items', 0, 'amount')
    """
    if not path or path.strip() != path:
        raise PathSyntaxError(f"malformed path '{path}': empty or surrounded by spaces")
    parts: list[str | int] = []
    for position, segment in enumerate(path.split(".")):
        match = _SEGMENT.fullmatch(segment)
        # A key is required, except that a path may start with an index into a top-level list.
        if match is None or not (match.group(1) or (position == 0 and match.group(2))):
            raise PathSyntaxError(
                f"malformed path '{path}': segment '{segment}' is not a key optionally followed by [index]"
            )
        if match.group(1):
            parts.append(match.group(1))
        parts.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(parts)


def path_problem(path: str) -> str | None:
    """The reason a path is malformed, or None when it parses."""
    try:
        parse_path(path)
    except PathSyntaxError as exc:
        return str(exc)
    return None


def resolve(data: Any, path: str) -> Any:
    """The value at `path` in JSON-like data, or MISSING. Never raises."""
    try:
        parts = parse_path(path)
    except PathSyntaxError:
        return MISSING
    current = data
    for part in parts:
        if isinstance(part, int):
            if isinstance(current, list) and part < len(current):
                current = current[part]
            else:
                return MISSING
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return MISSING
    return current
