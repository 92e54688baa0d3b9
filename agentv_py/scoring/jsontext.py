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


class OutOfRangeNumber(str):
    """A JSON number Python cannot hold as a value to compare: a float literal beyond the double
    range (`1e309`) or an integer longer than Python's int-string limit (4300 digits). Read with
    `loads(..., keep_out_of_range=True)`, it keeps its literal text (it is a `str`, so it is
    written out as that text, never as Infinity), and every matcher reports it as not a finite
    number instead of comparing it."""

    __slots__ = ()

    def describe(self) -> str:
        """The literal, shortened when it is long: `1e309`, `123456789012...(5000 digits)`."""
        if len(self) <= 40:
            return str(self)
        digits = sum(c.isdigit() for c in self)
        return f"{self[:12]}...({digits} digits)"


def _kept_float(literal: str) -> float | OutOfRangeNumber:
    value = float(literal)
    return OutOfRangeNumber(literal) if abs(value) == _INFINITY else value


def _kept_int(literal: str) -> int | OutOfRangeNumber:
    try:
        return int(literal)
    except ValueError:  # longer than sys.get_int_max_str_digits()
        return OutOfRangeNumber(literal)


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
_KEEPING = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_kept_float, parse_int=_kept_int)

TOO_DEEP = "JSON nested too deeply"
"""The ValueError text for input nested deeper than the parser's recursion allows."""


def loads(text: str, *, allow_nan: bool = False, keep_out_of_range: bool = False) -> Any:
    """`text` (all of it, surrounding whitespace aside) as JSON, else ValueError with the standard
    library's description of the problem (`Expecting value: line 1 column 1 (char 0)`).

    Strict by default: `NaN`, `Infinity` and `-Infinity` (which Python's json accepts) are
    refused, as is a number that overflows to infinity (`1e400`) and a string holding a lone
    surrogate escape (`"\\ud800"`, not Unicode), so a NaN score can never slip past a range check
    and every value read can be written out again. `allow_nan=True` reads exactly like
    `json.loads` (NaN, infinities and lone surrogates kept), for a caller that names a non-finite
    number itself. `keep_out_of_range=True` (for answers, where one odd field must not make
    the whole answer unreadable) reads a number beyond the double range, or an integer over
    Python's int-string limit, as an `OutOfRangeNumber` (its literal text) instead of refusing
    the text. Input nested too deeply is a ValueError (`TOO_DEEP`), never a RecursionError."""
    if text.startswith("\ufeff"):  # as json.loads does
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value = (_PYTHON if allow_nan else _KEEPING if keep_out_of_range else _STRICT).decode(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if not allow_nan and "\\u" in text and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise ValueError("a string holds a lone surrogate escape (not valid Unicode)")
    return value


def dumps(value: Any) -> str:
    """`value` as compact JSON text (`{"a":1}`): orjson when it is importable (it is fast; it
    writes NaN and infinities as null), the standard library for what orjson refuses (integers
    wider than 64 bits; NaN refused there) or where it is missing. Imported lazily: judges that
    never write JSON do not pay for it. A worker's answer is written by the standard library
    instead, NaN kept (`runner.targets`)."""
    try:
        import orjson

        return orjson.dumps(value).decode()
    except (ImportError, TypeError):
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
