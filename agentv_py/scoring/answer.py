"""Reading a target's answer text as JSON (SPEC §3.1 "Candidate data")."""

from __future__ import annotations

import re
from typing import Any

try:  # orjson is a dependency of agentv; judges may import this module from a bare Python
    import orjson

    _decode_error: type[Exception] = orjson.JSONDecodeError
    _json_loads = orjson.loads
except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
    import json

    _decode_error = ValueError
    _json_loads = json.loads

NOT_JSON: Any = type("NotJson", (), {"__repr__": lambda self: "NOT_JSON", "__bool__": lambda self: False})()
"""Sentinel: the answer could not be read as JSON."""

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.DOTALL)


def _loads(text: str) -> Any:
    try:
        return _json_loads(text)
    except _decode_error:
        return NOT_JSON


def parse_answer_json(text: str) -> Any:
    """The answer as JSON: the whole text, else a fenced ```json block, else the span from the
    first `{` or `[` to the last matching closing bracket. NOT_JSON when none parses."""
    value = _loads(text)
    if value is not NOT_JSON:
        return value
    fence = _FENCE.search(text)
    if fence:
        value = _loads(fence.group(1))
        if value is not NOT_JSON:
            return value
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return NOT_JSON
    start = min(starts)
    end = text.rfind("}" if text[start] == "{" else "]")
    if end <= start:
        return NOT_JSON
    return _loads(text[start : end + 1])
