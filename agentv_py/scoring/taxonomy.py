"""The failure taxonomy: what kind of error each `field_accuracy` miss is.

A field that missed is, by the first rule that applies:

    missing        expected a value, the answer has none (empty: absent, null, blank, [] or {})
    hallucinated   expected none, the answer has one
    format_only    equal once both are normalised: text by case and whitespace (NFKC, casefolded,
                   runs of whitespace collapsed; a non-string in its compact JSON form, so `true`
                   and `"TRUE"`), numbers parsed (`"$1,234.50"`, `"1234.5 USD"` and `1234.5`; two
                   different currency signs or codes are not a format), dates parsed (ISO 8601 and
                   the default date formats: `15-Jan-2025` and `2025-01-15`)
    near_miss      similarity of the two normalised texts >= 0.9, by the fuzzy matcher's own
                   measure (normalised Levenshtein), so a near miss of two strings passes
                   `match: fuzzy` at threshold 0.9
    wrong_value    anything else

missing / hallucinated point at the model (or at ground truth that left a field out);
format_only at a normaliser, the matcher's options (`fuzzy`, `numeric_tolerance`, date `formats`)
or the ground truth's form; near_miss at OCR noise, typos, or a fuzzy threshold; wrong_value at
the model or the ground truth (check it).

Both sides empty, in whatever forms (null against "", [] or {}), is no error at all: the case
score calls it a hit and the metrics TN (`scoring.paths.is_empty`, one definition for all three).

A `match: items` field counts per item: each missing item `missing`, each extra item
`hallucinated`, and each wrong sub-field of a matched item by the rules above (wrong items the
bounded listing in `details` left out count `wrong_value` each, so totals stay exact).

`row_taxonomy` also gives a kind to the fields `agentv metrics` counts as errors without a
matcher miss (a "not scored" field: optional and absent from the answer is FN, so `missing`;
absent from the ground truth but answered is FP, so `hallucinated`): every FP or FN of the
per-field table has a kind. Pure; never raises on any JSON value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agentv_py.models.field_results import FieldOutcome
from agentv_py.models.fields import DEFAULT_DATE_FORMATS
from agentv_py.scoring.dates import parse_date
from agentv_py.scoring.match import normalize_text, similarity, to_number
from agentv_py.scoring.metrics import SCORED, FieldKey, walk_fields
from agentv_py.scoring.paths import is_empty

CATEGORIES: tuple[str, ...] = ("missing", "hallucinated", "wrong_value", "format_only", "near_miss")
LABELS: dict[str, str] = {
    "missing": "missing",
    "hallucinated": "hallucinated",
    "wrong_value": "wrong value",
    "format_only": "format only",
    "near_miss": "near miss",
}
NEAR = 0.9  # similarity from which a miss is a near miss
TEXT_LIMIT = 10_000  # characters compared by similarity (a longer value is a wrong value unless equal)
PARSE_LIMIT = 64  # characters read as a number or a date (a longer string is neither)

# Currency signs and the ISO 4217 codes each is written for.
_SIGN_CODES = {
    "$": frozenset(
        {"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "TWD", "MXN", "ARS", "CLP", "COP", "CUP", "DOP", "UYU"}
        | {"BSD", "BBD", "BZD", "BMD", "KYD", "FJD", "JMD", "LRD", "NAD", "SBD", "SRD", "TTD", "XCD"}
    ),
    "€": frozenset({"EUR"}),
    "£": frozenset({"GBP", "EGP", "GIP", "FKP", "SHP"}),
    "¥": frozenset({"JPY", "CNY"}),
    "₹": frozenset({"INR"}),
}
_SIGNS = frozenset(_SIGN_CODES)
_CODE = re.compile(r"[A-Z]{3}")  # an ISO 4217-style currency code, upper case only ("Box 12" is no amount)
# A thousands separator: a comma, apostrophe or space between a digit and a group of three digits.
_THOUSANDS = re.compile(r"(?<=\d)[,\s'](?=\d{3}(?:\D|$))")


def _amount(value: Any) -> tuple[float, str] | None:
    """(number, currency marker or "") from a JSON number or a short string such as `"$1,234.50"`,
    `"USD 99"`, `"1'234 €"`; None when it is no finite number. Parsed by peeling at most one
    sign or code off either end (no backtracking regex: a hostile string costs linear time)."""
    if not isinstance(value, str):
        number = to_number(value)
        return (number, "") if isinstance(number, float) else None
    text = value.strip()
    if not text or len(text) > PARSE_LIMIT:
        return None
    marker = ""
    if text[0] in _SIGNS:
        marker, text = text[0], text[1:]
    elif text[-1] in _SIGNS:
        marker, text = text[-1], text[:-1]
    elif _CODE.fullmatch(text[:3]) and not text[3:4].isalpha():
        marker, text = text[:3], text[3:]
    elif _CODE.fullmatch(text[-3:]) and not text[-4:-3].isalpha():
        marker, text = text[-3:], text[:-3]
    number = to_number(_THOUSANDS.sub("", text.strip()))
    return (number, marker) if isinstance(number, float) else None


def _same_amount(expected: Any, actual: Any) -> bool | None:
    """Whether two values are one amount; None when either is no number."""
    a, b = _amount(expected), _amount(actual)
    if a is None or b is None:
        return None
    (x, mark_a), (y, mark_b) = a, b
    return x == y and _same_currency(mark_a, mark_b)


def _same_currency(a: str, b: str) -> bool:
    """Could two currency markers (a sign, a code, or "" for none) name one currency? A bare
    number goes with any marker; a sign goes with the codes it writes ("$" with USD, CAD, ...)."""
    if not a or not b or a == b:
        return True
    if (a in _SIGNS) == (b in _SIGNS):
        return False  # two different signs, or two different codes
    sign, code = (a, b) if a in _SIGNS else (b, a)
    return code in _SIGN_CODES[sign]


def _same_date(expected: Any, actual: Any) -> bool:
    if not isinstance(expected, str) or not isinstance(actual, str):
        return False
    if len(expected) > PARSE_LIMIT or len(actual) > PARSE_LIMIT:
        return False
    day = parse_date(expected, DEFAULT_DATE_FORMATS)
    return day is not None and day == parse_date(actual, DEFAULT_DATE_FORMATS)


def _text(value: Any) -> str | None:
    """A value as text to compare: a string as it is, anything else as compact JSON; None for a
    value with no faithful text (an integer over Python's digit limit, nesting too deep)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def classify_values(expected: Any, actual: Any) -> str:
    """The kind of miss for a field whose matcher said the two differ (see the module docstring)."""
    expected_empty, actual_empty = is_empty(expected), is_empty(actual)
    if expected_empty and actual_empty:
        return "format_only"  # never a miss (both nothing: a hit); a miss of an older version
    if actual_empty:
        return "missing"
    if expected_empty:
        return "hallucinated"
    try:
        same = _same_amount(expected, actual)
        if same or (same is None and _same_date(expected, actual)):
            return "format_only"
        a, b = _text(expected), _text(actual)
        if a is None or b is None:
            return "wrong_value"
        a, b = normalize_text(a), normalize_text(b)
        if a == b:
            return "format_only"
        if len(a) <= TEXT_LIMIT and len(b) <= TEXT_LIMIT and similarity(a, b) >= NEAR:
            return "near_miss"
    except (ValueError, OverflowError, RecursionError):
        pass  # a value no rule can read: a wrong value
    return "wrong_value"


def classify_miss(entry: FieldOutcome) -> str | None:
    """The kind of miss of one `field_accuracy` field; None unless its status is "miss" (an
    absent `actual` is no answer). A `match: items` field has one kind per item: `classify_items`."""
    if entry.status != "miss":
        return None
    if entry.match == "date" and entry.parsed is not None and entry.expected_date is not None:
        # the field's own formats and order decided: the days differ (or the answer was read as none)
        return "format_only" if entry.parsed == entry.expected_date else "wrong_value"
    return classify_values(entry.expected, entry.actual)


def _added(into: dict[str, int], kind: str, count: int = 1) -> None:
    if count > 0:
        into[kind] = into.get(kind, 0) + count


def _both_empty(entry: FieldOutcome) -> bool:
    """Nothing expected and nothing answered, in whatever forms: not an error (a hit, TN)."""
    return is_empty(entry.expected) and is_empty(entry.actual)


def classify_items(entry: FieldOutcome) -> dict[str, int]:
    """Kinds of miss in one `match: items` field (status hit, miss or not scored; {} otherwise):
    `items.missing` missing, `items.extra` hallucinated, and for the wrong matched items listed
    in `alignment.pairs`, each wrong sub-field by `classify_miss` (a wrong pair with no sub-field
    listed: one wrong value); the `items.wrong` not listed count one wrong value each. With no
    `items` counts (the answer had no list), each non-empty expected item is missing. A miss
    nothing else explains is one wrong value."""
    if entry.status not in SCORED or _both_empty(entry):
        return {}
    kinds: dict[str, int] = {}
    counts, expected = entry.items, entry.expected
    if counts is not None:
        _added(kinds, "missing", counts.missing)
        _added(kinds, "hallucinated", counts.extra)
        pairs = entry.alignment.pairs if entry.alignment is not None else []
        listed_wrong = 0
        for pair in pairs:
            if pair.status != "miss":
                continue
            listed_wrong += 1
            found = [kind for sub in pair.fields if (kind := classify_miss(sub))]
            for kind in found or ["wrong_value"]:
                _added(kinds, kind)
        _added(kinds, "wrong_value", counts.wrong - listed_wrong)
    elif isinstance(expected, list):  # as `agentv metrics` counts it: every expected item missed
        _added(kinds, "missing", sum(1 for item in expected if not is_empty(item)))
    if not kinds and entry.status == "miss":
        kinds[classify_miss(entry) or "wrong_value"] = 1
    return kinds


def classify_entry(entry: FieldOutcome) -> dict[str, int]:
    """Kinds of error in one field: a miss by `classify_miss` (an items field by
    `classify_items`); a hit or "not scored" field only when one side is empty, as `agentv
    metrics` counts it (answer empty: FN, missing; ground truth empty: FP, hallucinated)."""
    if entry.status not in SCORED or _both_empty(entry):
        return {}
    if entry.is_items:
        return classify_items(entry)
    kind = classify_miss(entry)
    if kind is not None:
        return {kind: 1}
    expected_empty, actual_empty = is_empty(entry.expected), is_empty(entry.actual)
    if expected_empty == actual_empty:
        return {}
    return {"missing" if actual_empty else "hallucinated": 1}


def row_taxonomy(results: Iterable[Any]) -> dict[FieldKey, dict[str, int]]:
    """(evaluator name, field path) -> {kind: count} over one row's evaluator results (results
    objects or their JSON dicts; composites' members included, `scoring.metrics.walk_fields`).
    Fields without an error are left out."""
    out: dict[FieldKey, dict[str, int]] = {}
    for name, entry in walk_fields(results):
        found = classify_entry(entry)
        if found:
            add_kinds(out.setdefault((name, entry.path), {}), found)
    return out


def add_kinds(into: dict[str, int], more: Mapping[str, int]) -> None:
    """Sum `more` into `into` (kind -> count)."""
    for kind, count in more.items():
        into[kind] = into.get(kind, 0) + count


def add_taxonomy(into: dict[FieldKey, dict[str, int]], more: Mapping[FieldKey, Mapping[str, int]]) -> None:
    """Sum one row's `row_taxonomy` (or any other) into a running total, in place."""
    for key, kinds in more.items():
        add_kinds(into.setdefault(key, {}), kinds)
