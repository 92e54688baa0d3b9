"""Reading a target's answer text as JSON (SPEC §3.1 "Candidate data").

The fence pattern and the JSON loader are `agentv_py.scoring.jsontext`'s; this module holds only
the lenient policy for answers. Standard library only: judges import it from a bare Python.
"""

from __future__ import annotations

from typing import Any

from agentv_py.scoring.jsontext import fenced_blocks, loads

NOT_JSON: Any = type("NotJson", (), {"__repr__": lambda self: "NOT_JSON", "__bool__": lambda self: False})()
"""Sentinel: the answer could not be read as JSON."""


def _loads(text: str) -> Any:
    try:
        return loads(text)
    except ValueError:
        return NOT_JSON


def parse_answer_json(text: str) -> Any:
    """The answer as JSON: the whole text, else the first fenced ```json block, else the span from
    the first `{` or `[` to the last matching closing bracket. NOT_JSON when none parses.
    Strict JSON throughout (`jsontext.loads`): NaN and Infinity are not JSON."""
    value = _loads(text)
    if value is not NOT_JSON:
        return value
    blocks = fenced_blocks(text)
    if blocks:
        value = _loads(blocks[0])
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
