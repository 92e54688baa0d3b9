"""Checking a parsed file against its pydantic model (`validate`): every problem as a `Problem` with
the file, the line and the path of the value, in words a person reads (union tags named, values
shown short)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agentv_py.errors import Problem
from agentv_py.loading.source import Source
from agentv_py.models.base import UNKNOWN_KEYS, unknown_key_error
from agentv_py.models.dataset import CONTENT_TAGS
from agentv_py.models.evaluators import EVALUATOR_TYPE_NAMES
from agentv_py.models.foreign_targets import PROVIDERS

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


def located(source: Source, base: list[str | int], raw: Any, exc: ValidationError) -> list[Problem]:
    """A validation error of `raw` (written at `base` in the file) as located problems."""
    problems = []
    for error in exc.errors():
        parts = _data_path(raw, tuple(error["loc"]))
        key = (error.get("ctx") or {}).get("agentv_key")
        if key is not None and (not parts or parts[-1] != key):
            parts.append(key)
        problems.append(source.problem([*base, *parts], _message(error)))
    return problems


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
        problems.extend(located(source, [], raw, exc))
    if unknown:
        paths = paths_by_identity(raw)
        for identity, keys, valid in unknown:
            base = paths.get(identity, [])
            for key in keys:
                problems.append(source.problem([*base, key], str(unknown_key_error([key], valid))))
    problems.sort(key=lambda p: (p.line or 0, p.location))
    return (parsed if not problems else None), problems


def paths_by_identity(raw: Any) -> dict[int, list[str | int]]:
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
