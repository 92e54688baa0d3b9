"""NaN and infinities in ground truth, found fast: `all_finite` (a C pass over the values
marshalled, the C JSON encoder where that cannot tell), `non_finite_at` (where one is)."""

from __future__ import annotations

import json
import marshal
import math
from collections.abc import Sequence
from typing import Any


def _skip(value: Any) -> None:
    return None


_FLOAT_CODES = (ord("g"), ord("g") | 0x80)  # a marshalled float, without and with its reference flag


def _marshalled_finite(values: Sequence[Any]) -> bool:
    """True when `marshal` writes `values` with no float whose exponent bits are all ones (a NaN or
    an infinity): each float is its code byte then its 8 bytes, little-endian, the last two of them
    `f0..ff` and `7f`/`ff` for such a float. Each `7f` and `ff` byte is looked at (memchr, then a
    few bytes each). False when it cannot tell (a value marshal does not write) or finds one."""
    try:
        packed = marshal.dumps(list(values))
    except ValueError:
        return False
    for top in (b"\x7f", b"\xff"):
        at = packed.find(top, 8)
        while at >= 0:
            if packed[at - 1] >= 0xF0 and packed[at - 8] in _FLOAT_CODES:
                return False
            at = packed.find(top, at + 1)
    return True


def all_finite(values: Sequence[Any]) -> bool:
    """True when no value holds a NaN or an infinity: their bytes looked for in `values` marshalled,
    and where that cannot tell, checked by the C JSON encoder (one call each)."""
    if _marshalled_finite(values):
        return True
    try:
        json.dumps(values, allow_nan=False, default=_skip, skipkeys=True, check_circular=False)
    except (ValueError, TypeError, RecursionError):
        return False  # the walks (`_depth`, `non_finite_at`) say where, if anywhere
    return True


def non_finite_at(value: Any) -> tuple[list[str | int], float] | None:
    """The path inside `value` to its first NaN or infinity, and that number (None: all finite)."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return parts, node
        if isinstance(node, dict):
            stack.extend((child, [*parts, str(key)]) for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((child, [*parts, i]) for i, child in reversed(list(enumerate(node))))
    return None


def describe_non_finite(number: float) -> str:
    return "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
