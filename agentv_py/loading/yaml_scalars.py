"""Plain YAML scalars resolved and built as `yaml_loader.Loader` resolves and builds them (YAML
1.1: `yes`/`on` booleans, `017` octal, `0x1F`, `1_000`, sexagesimal `1:30`, `.inf`, `.nan`, dates
kept as text), without nodes: for `block_yaml`, which reads files without the parser."""

from __future__ import annotations

import re
from typing import Any

from agentv_py.loading.yaml_loader import Loader, too_many_digits

_NULL, _BOOL = "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool"
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_BOOL_VALUES = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
_IMPLICIT: dict[str, list[tuple[str, re.Pattern[str]]]] = Loader.yaml_implicit_resolvers


class Undecided(Exception):
    """Something the reader without the parser leaves to the parser."""


def _int(text: str) -> int:
    """`SafeConstructor.construct_yaml_int`, without a node."""
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * int(value[2:], 2)
    if value.startswith("0x"):
        return sign * int(value[2:], 16)
    if value[0] == "0":
        return sign * int(value, 8)
    if ":" in value:
        return sign * int(_base_60(value, int))
    return sign * int(value)


def _float(text: str) -> float:
    """`SafeConstructor.construct_yaml_float`, without a node."""
    value = text.replace("_", "").lower()
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * float("inf")
    if value == ".nan":
        return float("nan")
    if ":" in value:
        return sign * float(_base_60(value, float))
    return sign * float(value)


def _base_60(value: str, number: type[int] | type[float]) -> int | float:
    """YAML 1.1's sexagesimal numbers (`1:30` is 90), as PyYAML builds them: the parts read by
    `number`, the last one first, each times the next power of 60."""
    total: int | float = 0
    base = 1
    for digit in reversed([number(part) for part in value.split(":")]):
        total += digit * base
        base *= 60
    return total


def plain(text: str) -> Any:
    """A plain scalar's value: resolved by `Loader`'s implicit resolvers, built as its constructors build it."""
    tag = next((tag for tag, pattern in _IMPLICIT.get(text[:1], ()) if pattern.match(text)), None)
    if tag is None:
        return text
    if tag == _INT:
        try:
            number = int(text) if text.isdecimal() and (text[0] != "0" or len(text) == 1) else _int(text)
        except ValueError:
            raise Undecided from None  # more digits than Python reads: refused, located, by the node path
        if len(text) > 20 and too_many_digits(number):
            raise Undecided
        return number
    if tag == _FLOAT:
        try:
            return _float(text)
        except (ValueError, OverflowError):
            raise Undecided from None
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return _BOOL_VALUES[text.lower()]
    raise Undecided  # a merge key, `=`
