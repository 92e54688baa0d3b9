"""Field matchers (SPEC §3.1): pure functions of two values and options, never raising.

Each returns a MatchResult: `passed`, `score` (the field score), `reason` for a miss (the text in
parentheses of `<path> (<reason>)`), and `info` with the rule's numbers (diff, similarity, dates).
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from fractions import Fraction
from types import ModuleType
from typing import Any

from agentv_py.scoring.jsontext import OutOfRangeNumber
from agentv_py.scoring.thresholds import at_least, at_most


@functools.cache
def _rapidfuzz() -> ModuleType | None:
    """`rapidfuzz.distance`, imported on the first string comparison (a run that compares none,
    like `agentv validate`, never loads it); None where it cannot be imported: rapidfuzz is a
    dependency of agentv, but judges may import this module from a bare Python."""
    try:
        from rapidfuzz import distance
    except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
        return None
    return distance


@dataclass(slots=True)
class MatchResult:
    """What a matcher decided: `passed`, a `score` in [0, 1], a one-line `reason` when it did not
    pass, and `info` (similarity, difference, tolerance, ...) for the row's details.
    `bad_expected` marks a field that could not be scored because the expected value (the ground
    truth) is unusable for this matcher: the evaluator reports an error, not a miss. `wrong_type`
    (with it): the expected value is of a JSON type the matcher never reads (a list for `fuzzy`),
    as happens when a value's type varies between documents: that field, not the evaluator, is
    "could not score" (and fails its case)."""

    passed: bool
    score: float
    reason: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    bad_expected: bool = False
    wrong_type: bool = False


def json_type(value: Any) -> str:
    """JSON type name of a Python value: string, number, boolean, null, array, object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, OutOfRangeNumber)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: key order irrelevant, 1889 == 1889.0, but true != 1 and "100" != 100."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b) and a == b


def type_mismatch(candidate: Any, expected: Any) -> str:
    return f"type mismatch: got {json_type(candidate)}, expected {json_type(expected)}"


def match_exact(candidate: Any, expected: Any) -> MatchResult:
    """`match: exact`: deep JSON equality (`json_equal`); no options. Key order is irrelevant and
    1889 == 1889.0, but `true` != 1 and "100" != 100 (a type mismatch is its own reason)."""
    try:
        equal = json_equal(candidate, expected)
    except RecursionError:
        return MatchResult(False, 0.0, "value nested too deeply to compare")
    if equal:
        return MatchResult(True, 1.0)
    if isinstance(candidate, OutOfRangeNumber) and json_type(expected) == "number":
        return MatchResult(False, 0.0, f"number beyond the double range ({candidate.describe()})")
    if json_type(candidate) != json_type(expected):
        return MatchResult(False, 0.0, type_mismatch(candidate, expected))
    return MatchResult(False, 0.0, "value mismatch")


# ----------------------------------------------------------------------------- numbers

_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NON_FINITE_RE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_NOT_NUMERIC = "non-numeric"
_NOT_FINITE = "non-finite"


_OUT_OF_RANGE = "out-of-range"


def to_number(value: Any) -> float | str:
    """A float, or the marker `non-numeric` / `non-finite` / `out-of-range` (a finite number
    beyond the double range: a huge integer, or an answer's `1e309`). Booleans are not numbers."""
    if isinstance(value, bool):
        return _NOT_NUMERIC
    if isinstance(value, OutOfRangeNumber):
        return _OUT_OF_RANGE
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return _OUT_OF_RANGE
    if isinstance(value, float):
        try:
            number = float(value)
        except OverflowError:
            return _NOT_FINITE
        return number if math.isfinite(number) else _NOT_FINITE
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER_RE.fullmatch(text):
            number = float(text)
            return number if math.isfinite(number) else _OUT_OF_RANGE
        if _NON_FINITE_RE.fullmatch(text):
            return _NOT_FINITE
    return _NOT_NUMERIC


def _fmt(number: float) -> str:
    return f"{number:g}"


def describe_value(value: Any, limit: int = 40) -> str:
    """A short, safe rendering of a value for a reason: `1e309`, `'n/a'`, an integer's first
    digits and its length when it is long (never str() of an integer over Python's limit)."""
    if isinstance(value, OutOfRangeNumber):
        return value.describe()
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            text = str(value)
        except ValueError:  # over sys.get_int_max_str_digits()
            return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
        return text if len(text) <= limit else f"{text[:12]}...({len(text.lstrip('-'))} digits)"
    text = repr(value) if isinstance(value, str) else f"{value!r}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(value: Any, limit: int = 40) -> str:
    """A value quoted in a miss text: JSON-like (`null`, `true`, `12.5`, `'n/a'`, `{"a": 1}`), cut to
    about `limit` characters with `...`, every control or non-printable character escaped, so a
    value from a dataset or an answer can neither forge another line nor drive a terminal."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (str, int, float, OutOfRangeNumber)):
        return describe_value(value, limit)
    try:
        text = json.dumps(value, ensure_ascii=True, default=str, sort_keys=False)
    except (TypeError, ValueError, RecursionError):
        text = f"<{json_type(value)}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def formats_tried(formats: tuple[str, ...], listed: int = 8) -> str:
    """`ISO 8601, DD-MMM-YYYY, ...`: the date formats a value was tried against, in order (at most
    `listed` named, each escaped and cut like a value)."""
    names = ["ISO 8601"]
    for fmt in formats[:listed]:
        text = repr(fmt)[1:-1]  # escaped, unquoted
        names.append(text if len(text) <= 24 else text[:21] + "...")
    more = len(formats) - listed
    return ", ".join(names) + (f", and {more} more" if more > 0 else "")


def _number_problem(value: Any, marker: str) -> str:
    if marker == _OUT_OF_RANGE:
        return f"number beyond the double range ({describe_value(value)})"
    return f"not a finite number ({describe_value(value)})"


def match_numeric(candidate: Any, expected: Any, tolerance: float, relative: bool = False) -> MatchResult:
    """`match: numeric_tolerance`. Options: `tolerance` (>= 0; the allowed difference) and
    `relative` (default false: absolute |a - e| <= tolerance; true: |a - e| <= tolerance * |e|).
    Plain numeric strings ("1889.50", " 12 ") are read as numbers; strings with thousands separators or
    currency signs ("1,889.50", "$12") are not, nor are booleans and non-finite values (the failure
    taxonomy calls such a miss "format only": docs/metrics.md)."""
    c, e = to_number(candidate), to_number(expected)
    refused = _expected_number_problem(expected, e)
    if refused is not None:
        return refused
    big_expected = e == _OUT_OF_RANGE and _is_int(expected)  # finite, exact, beyond a float
    if c == _NOT_NUMERIC:
        return MatchResult(False, 0.0, "non-numeric value")
    big_candidate = c == _OUT_OF_RANGE and _is_int(candidate)
    if isinstance(c, str) and not big_candidate:  # NaN, Infinity: SPEC §3.1's text (the value is in details)
        reason = _number_problem(candidate, c) if c == _OUT_OF_RANGE else "invalid numeric value"
        return MatchResult(False, 0.0, reason)
    if big_expected or big_candidate or (_is_exact(candidate) and _is_exact(expected)):
        exact_c: Any = candidate if big_candidate or _is_exact(candidate) else c
        exact_e: Any = expected if big_expected or _is_exact(expected) else e
        return _match_exactly(exact_c, exact_e, tolerance, relative)
    assert isinstance(c, float) and isinstance(e, float)
    diff = abs(c - e)
    if not math.isfinite(diff):  # 1e308 vs -1e308: the difference itself overflows
        return MatchResult(False, 0.0, f"outside tolerance: diff beyond the double range, tolerance={_fmt(tolerance)}")
    scale = max(abs(c), abs(e))  # float noise in the difference scales with the operands: 1.1 - 1.0 is not 0.1
    if relative and e != 0:
        rel = diff / abs(e)
        if not math.isfinite(rel):  # a huge difference relative to a tiny expected value
            reason = f"outside tolerance: relative diff beyond the double range, tolerance={_fmt(tolerance)}"
            return MatchResult(False, 0.0, reason, {"diff": diff, "tolerance": tolerance, "relative": True})
        info = {"diff": diff, "relative_diff": rel, "tolerance": tolerance, "relative": True}
        if at_most(rel, tolerance):
            return MatchResult(True, 1.0, info=info)
        return MatchResult(False, 0.0, f"outside tolerance: relative diff={rel:.4f}, tolerance={_fmt(tolerance)}", info)
    info = {"diff": diff, "tolerance": tolerance, "relative": relative}
    if at_most(diff, tolerance, scale):
        return MatchResult(True, 1.0, info=info)
    return MatchResult(False, 0.0, f"outside tolerance: diff={diff:.2f}, tolerance={_fmt(tolerance)}", info)


def _expected_number_problem(expected: Any, e: Any) -> MatchResult | None:
    """`match_numeric`'s refusal of an expected value (`e`: its `to_number`), or None."""
    if e == _NOT_NUMERIC:
        return MatchResult(
            False,
            0.0,
            f"expected value is not numeric: {json_type(expected)}"
            + (f" {describe_value(expected)}" if isinstance(expected, str) else ""),
            bad_expected=True,
        )
    if isinstance(e, str) and not (e == _OUT_OF_RANGE and _is_int(expected)):  # a big integer is exact
        return MatchResult(False, 0.0, f"expected value is {_number_problem(expected, e)}", bad_expected=True)
    return None


def numeric_truth_problem(expected: Any) -> MatchResult | None:
    """What `match_numeric(expected, expected, ...)` refuses of `expected` (None: nothing),
    without comparing it with itself: its refusal depends on the expected value alone."""
    return _expected_number_problem(expected, to_number(expected))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_DECIMAL_RE = re.compile(r"[+-]?\d{1,400}(?:\.\d{1,400})?")  # a plain decimal: read exactly


def _is_exact(value: Any) -> bool:
    """An integer, or a plain decimal string ("1889.50", " 12 "): compared exactly, never
    through a float (10**20 + 1 is not 10**20). Floats are compared as floats."""
    return _is_int(value) or (isinstance(value, str) and _DECIMAL_RE.fullmatch(value.strip()) is not None)


def _fraction(value: Any) -> Fraction:
    return Fraction(value.strip()) if isinstance(value, str) else Fraction(value)


def _match_exactly(candidate: Any, expected: Any, tolerance: float, relative: bool) -> MatchResult:
    """Numbers compared exactly, as fractions: both integers or plain decimal strings, or one an
    integer beyond the double range (never through a float that would round or overflow). The
    tolerance is the decimal written (0.1 is 1/10), and no allowance for float noise is needed."""
    c, e = _fraction(candidate), _fraction(expected)
    diff = abs(c - e)
    allowed = Fraction(repr(float(tolerance)))
    info: dict[str, Any] = {"tolerance": tolerance, "relative": relative}
    if diff < _FLOAT_MAX:
        info["diff"] = float(diff)
    if relative and e != 0:
        rel = diff / abs(e)
        if rel < _FLOAT_MAX:
            info["relative_diff"] = float(rel)
        if rel <= allowed:
            return MatchResult(True, 1.0, info=info)
        shown = f"{float(rel):.4f}" if rel < _FLOAT_MAX else "beyond the double range"
        return MatchResult(False, 0.0, f"outside tolerance: relative diff={shown}, tolerance={_fmt(tolerance)}", info)
    if diff <= allowed:
        return MatchResult(True, 1.0, info=info)
    shown = f"{float(diff):.2f}" if diff < _FLOAT_MAX else describe_value(round(diff))
    return MatchResult(False, 0.0, f"outside tolerance: diff={shown}, tolerance={_fmt(tolerance)}", info)


_FLOAT_MAX = Fraction(sys.float_info.max)


# ----------------------------------------------------------------------------- fuzzy

_WS = re.compile(r"\s+")


def normalize_text(text: str, case_sensitive: bool = False) -> str:
    """NFKC, trim, collapse internal whitespace, casefold unless case_sensitive."""
    text = _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip()
    return text if case_sensitive else text.casefold()


def similarity(a: str, b: str, algorithm: str = "levenshtein") -> float:
    """Normalized similarity in [0, 1] (rapidfuzz): Levenshtein 1 - d/max(len); Jaro-Winkler p=0.1."""
    distance = _rapidfuzz()
    if distance is None:
        return _py_jaro_winkler(a, b) if algorithm == "jaro_winkler" else _py_levenshtein_similarity(a, b)
    if algorithm == "jaro_winkler":
        return float(distance.JaroWinkler.normalized_similarity(a, b, prefix_weight=0.1))
    return float(distance.Levenshtein.normalized_similarity(a, b))


# Pure-Python versions, used only where rapidfuzz cannot be imported (a code judge running under
# `uv run` with no dependencies). A property test checks they agree with rapidfuzz.


def _py_levenshtein_similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return 1.0 - previous[-1] / max(len(a), len(b))


def _py_jaro_winkler(a: str, b: str, prefix_weight: float = 0.1) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    window = max(max(len(a), len(b)) // 2 - 1, 0)
    b_used = [False] * len(b)
    a_matches = []
    for i, ca in enumerate(a):
        for j in range(max(0, i - window), min(len(b), i + window + 1)):
            if not b_used[j] and b[j] == ca:
                b_used[j] = True
                a_matches.append(ca)
                break
    if not a_matches:
        return 0.0
    b_matches = [cb for cb, used in zip(b, b_used, strict=False) if used]
    transpositions = sum(x != y for x, y in zip(a_matches, b_matches, strict=False)) // 2
    m = len(a_matches)
    jaro = (m / len(a) + m / len(b) + (m - transpositions) / m) / 3
    if jaro <= 0.7:
        return jaro
    prefix = 0
    for x, y in zip(a[:4], b[:4], strict=False):
        if x != y:
            break
        prefix += 1
    return jaro + prefix * prefix_weight * (1.0 - jaro)


def match_fuzzy(
    candidate: Any,
    expected: Any,
    threshold: float = 0.85,
    algorithm: str = "levenshtein",
    case_sensitive: bool = False,
) -> MatchResult:
    """`match: fuzzy` on strings. Options: `threshold` (default 0.85; passes at similarity >=
    threshold), `algorithm` (`levenshtein`, default, or `jaro_winkler`) and `case_sensitive`
    (default false). Both texts are normalised first (`normalize_text`)."""
    if not isinstance(expected, str):
        return MatchResult(
            False, 0.0, f"fuzzy match needs strings, expected value is {json_type(expected)}", bad_expected=True
        )
    if not isinstance(candidate, str) or isinstance(candidate, OutOfRangeNumber):
        return MatchResult(False, 0.0, type_mismatch(candidate, expected))
    score = similarity(normalize_text(candidate, case_sensitive), normalize_text(expected, case_sensitive), algorithm)
    info = {"similarity": round(score, 6), "threshold": threshold, "algorithm": algorithm}
    if at_least(score, threshold):
        return MatchResult(True, score, info=info)
    return MatchResult(False, 0.0, f"similarity {score:.2f} < {threshold:.2f}", info)
