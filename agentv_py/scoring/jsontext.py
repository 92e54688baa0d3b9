"""JSON inside text, in one place: the fence pattern, the fenced-block finder and the JSON loader.

Three readers take JSON out of text, each with its own policy, and all of them use this module:

- `agentv_py.scoring.answer.parse_answer_json` (a target's answer, lenient): the whole text, else
  the first fenced block, else the span from the first `{`/`[` to the last matching bracket;
- `agentv_py.scoring.judging.extract_json` (an LLM judge's reply): the whole reply, or exactly
  one fenced block; never JSON picked out of prose;
- the code-judge stdout reader (`agentv_py.evaluators.code_judge`): the whole stdout only, never
  a fenced block or prose.

Only the standard library, and nothing costly to import: the judge SDK (`agentv_py.judge`)
imports this module in judges' own interpreters, once per judged case. One parser (the standard
library's) serves agentv and every judge, so an answer reads the same in both.
"""

from __future__ import annotations

import json
import re
from typing import Any

FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)\r?\n?```", re.DOTALL)
"""A fenced block: three backticks, an optional `json`/`JSON` language tag (spaces allowed around
it), a line break (LF or CRLF), the content (group 1, without the line break before the closing
fence), three backticks. A fence with another language tag (```` ```python ````) is not matched."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_INFINITY = float("inf")


def fenced_blocks(text: str) -> list[str]:
    """The content of every fenced (```` ```json ```` or bare ```` ``` ````) block in `text`, in
    order; an unterminated fence is not a block."""
    return FENCE.findall(text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if abs(value) == _INFINITY:
        raise ValueError(f"{literal} is not valid JSON (out of range for a float)")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# Built once: json.loads with keyword arguments builds a decoder per call.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_PYTHON = json.JSONDecoder()


def loads(text: str, *, allow_nan: bool = False) -> Any:
    """`text` (all of it, surrounding whitespace aside) as JSON, else ValueError with the standard
    library's description of the problem (`Expecting value: line 1 column 1 (char 0)`).

    Strict by default: `NaN`, `Infinity` and `-Infinity` (which Python's json accepts) are
    refused, as is a number that overflows to infinity (`1e400`) and a string holding a lone
    surrogate escape (`"\\ud800"`, not Unicode), so a NaN score can never slip past a range check
    and every value read can be written out again. `allow_nan=True` reads exactly like
    `json.loads` (NaN, infinities and lone surrogates kept), for a caller that names a non-finite
    number itself. Input nested too deeply is a ValueError too, never a RecursionError."""
    if text.startswith("\ufeff"):  # as json.loads does
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value = (_PYTHON if allow_nan else _STRICT).decode(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if not allow_nan and "\\u" in text and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise ValueError("a string holds a lone surrogate escape (not valid Unicode)")
    return value


def dumps(value: Any) -> str:
    """`value` as compact JSON text (`{"a":1}`), NaN refused: orjson when it is importable (it is
    fast), the standard library for what orjson refuses (integers wider than 64 bits) or where
    it is missing. Imported lazily: judges that never write JSON do not pay for it."""
    try:
        import orjson

        return orjson.dumps(value).decode()
    except (ImportError, TypeError):
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
