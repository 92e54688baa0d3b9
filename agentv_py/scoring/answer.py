"""Reading a target's answer text as JSON (SPEC §3.1 "Candidate data").

The fence pattern and the JSON loader are `agentv_py.scoring.jsontext`'s; this module holds only
the lenient policy for answers. Standard library only: judges import it from a bare Python.
"""

from __future__ import annotations

from typing import Any

from agentv_py.scoring.jsontext import TOO_DEEP, fenced_blocks, loads

NOT_JSON: Any = type("NotJson", (), {"__repr__": lambda self: "NOT_JSON", "__bool__": lambda self: False})()
"""Sentinel: the answer could not be read as JSON."""


PARSE_FAILURE = "Failed to parse candidate answer as JSON"
TOO_DEEP_FAILURE = f"{PARSE_FAILURE} (nested too deeply)"


def _loads(text: str, problems: list[str]) -> Any:
    try:
        return loads(text, keep_out_of_range=True)
    except ValueError as exc:
        problems.append(str(exc))
        return NOT_JSON


def _parse(text: str, problems: list[str]) -> Any:
    value = _loads(text, problems)
    if value is not NOT_JSON:
        return value
    blocks = fenced_blocks(text)
    if blocks:
        value = _loads(blocks[0], problems)
        if value is not NOT_JSON:
            return value
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return NOT_JSON
    start = min(starts)
    end = text.rfind("}" if text[start] == "{" else "]")
    if end <= start:
        return NOT_JSON
    return _loads(text[start : end + 1], problems)


def parse_answer_json(text: str) -> Any:
    """The answer as JSON: the whole text, else the first fenced ```json block, else the span from
    the first `{` or `[` to the last matching closing bracket. NOT_JSON when none parses.
    Strict JSON throughout (`jsontext.loads`): NaN and Infinity are not JSON. A number beyond
    the double range (`1e309`) or an integer over Python's 4300-digit limit does not make the
    answer unreadable: it is read as a `jsontext.OutOfRangeNumber`, which the matchers report as
    not a finite number for its field alone."""
    return _parse(text, [])


def parse_failure(text: str) -> str:
    """Why `text` is not JSON, for a miss: `PARSE_FAILURE`, or `TOO_DEEP_FAILURE` when what
    looked like JSON was nested deeper than the parser goes."""
    problems: list[str] = []
    _parse(text, problems)
    return TOO_DEEP_FAILURE if TOO_DEEP in problems else PARSE_FAILURE
