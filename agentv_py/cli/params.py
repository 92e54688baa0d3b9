"""Cheap coercion of the command line's plain values, so a command does not build a pydantic
`TypeAdapter` per parameter before it runs (Typer 0.29 builds one for every parameter of the
command invoked, even one left at its default: 26 for `agentv eval`, a twentieth of its start-up).

`fast_coercion(params)` gives each parameter whose type is `str`, `bool`, `int`, `float`, `Path`
or a list of `str` or `Path` (no parser, no file, no clamp) a coercion that takes the common
values itself: a string or a flag's bool as given, a number written in plain digits within the
option's `min`/`max`, a path (Typer's own path checks, `coerce_cli_path`, run on it). Any other value goes to the
coercion Typer would have built (`build_runtime_param`), so every error, and every value the
fast path does not take, is Typer's, word for word.

This sets the attribute Typer caches a parameter's coercion in (`_runtime_param`); with a Typer
that has none, nothing is changed (`help.py` imports this module only when Typer has the layer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args, get_origin

from typer._coercion import RuntimeParam, build_runtime_param
from typer._param_types import coerce_cli_path

_SLOW = object()  # the fast path does not take this value: Typer's coercion does
_LEAVES = (str, bool, int, float, Path)


def _digits(text: str) -> bool:
    """Plain ASCII digits only (no sign, space, underscore or other script's digits)."""
    return text.isascii() and text.isdigit()


def _decimal(text: str) -> bool:
    """Digits, or digits '.' digits."""
    whole, dot, fraction = text.partition(".")
    return _digits(whole) and (not dot or _digits(fraction))


def _leaf_of(annotation: Any) -> type | None:
    """The plain type a parameter holds (`str`, `bool`, `int`, `float`, `Path`), or of its list
    (`str`, `Path`); None: any other (choices, tuples, files...), left to Typer."""
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        return item if item in (str, Path) else None
    return annotation if annotation in _LEAVES else None


class PlainParam(RuntimeParam):
    """A parameter's coercion: the common values here, anything else by Typer's own. (Not a
    dataclass of its own: generating one costs start-up, the very thing this module saves.)"""

    leaf: type
    many: bool  # a list of `leaf`

    def __init__(self, parameter_info: Any, annotation: Any, leaf: type, many: bool) -> None:
        super().__init__(parameter_info=parameter_info, annotation=annotation)
        object.__setattr__(self, "leaf", leaf)  # RuntimeParam is frozen
        object.__setattr__(self, "many", many)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        if self.many and isinstance(value, (list, tuple)):
            items = [self._leaf(item, param, ctx) for item in value]
            if all(item is not _SLOW for item in items):
                return items
        elif not isinstance(value, (list, tuple)):
            fast = self._leaf(value, param, ctx)
            if fast is not _SLOW:
                return fast
        return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)

    def _leaf(self, value: Any, param: Any, ctx: Any) -> Any:
        leaf = self.leaf
        if leaf is str or leaf is bool:
            return value if type(value) is leaf else _SLOW
        if leaf is Path:
            if type(value) is str and value:
                value = Path(value)
            if not isinstance(value, Path):
                return _SLOW
            return coerce_cli_path(value, self.parameter_info, path_type=Path, param=param, ctx=ctx)
        number: float | int
        if leaf is int:
            if type(value) is int:
                number = value
            elif type(value) is str and _digits(value):
                number = int(value)
            else:
                return _SLOW
        elif type(value) is float and math.isfinite(value):
            number = value
        elif type(value) is str and _decimal(value):
            number = float(value)
        else:
            return _SLOW
        low, high = self.parameter_info.min, self.parameter_info.max
        if (low is not None and number < low) or (high is not None and number > high):
            return _SLOW  # Typer's coercion words the error
        return number


def fast_coercion(params: Sequence[Any]) -> None:
    """Give each plain parameter of a command its `PlainParam` (see the module's docstring)."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", _SLOW) is not None:
            continue  # not a Typer parameter, or its coercion is already built
        info = descriptor.parameter_info
        leaf = _leaf_of(descriptor.annotation)
        if leaf is None or descriptor.file_annotation is not None or info.parser is not None or info.clamp:
            continue
        if leaf is Path and info.path_type not in (None, Path):
            continue
        many = get_origin(descriptor.annotation) is list
        param._runtime_param = PlainParam(parameter_info=info, annotation=descriptor.annotation, leaf=leaf, many=many)
