"""The failure taxonomy: what kind of miss each `field_accuracy` miss is.

A field that missed is, by the first rule that applies:

    missing        expected a value, the answer has none (absent, null, blank)
    hallucinated   expected none, the answer has one
    format_only    equal once both are normalised: strings by case and whitespace (NFKC,
                   casefolded, runs of whitespace collapsed), numbers parsed (`"1,234.50 USD"`
                   and `1234.5`), dates parsed (the default date formats: `15-Jan-2025` and
                   `2025-01-15`)
    near_miss      fuzzy similarity of the two (normalised, as text) >= 0.9
    wrong_value    anything else

missing / hallucinated / wrong_value point at the model (or, for wrong values, at ground truth
to check); format_only at a normaliser, the matcher's options (`fuzzy`, `numeric_tolerance`,
date `formats`) or the ground truth's form; near_miss at OCR noise, typos, or a fuzzy threshold.

A `match: items` field counts per item: each missing item `missing`, each extra item
`hallucinated`, and each wrong sub-field of a matched item by the rules above (matched items
the listing in `details` left out count `wrong_value`). Pure; never raises on any JSON value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agentv_py.models.evaluators import DEFAULT_DATE_FORMATS
from agentv_py.scoring.match import normalize_text, parse_date, similarity, to_number
from agentv_py.scoring.metrics import FieldKey, is_empty, walk_results

CATEGORIES: tuple[str, ...] = ("missing", "hallucinated", "wrong_value", "format_only", "near_miss")
LABELS: dict[str, str] = {
    "missing": "missing",
    "hallucinated": "hallucinated",
    "wrong_value": "wrong value",
    "format_only": "format only",
    "near_miss": "near miss",
}
NEAR = 0.9  # fuzzy similarity from which a miss is a near miss
_TEXT_LIMIT = 10_000  # characters compared by similarity (longer values: wrong_value unless equal)

# Currency signs and ISO codes around a number, and thousands separators inside it.
_CURRENCY = re.compile(r"^\s*(?:[$€£¥₹]|[A-Za-z]{3}\b)?\s*(.*?)\s*(?:[$€£¥₹]|\b[A-Za-z]{3})?\s*$")
_THOUSANDS = re.compile(r"(?<=\d)[,\s'](?=\d{3}(?:\D|$))")


def _number(value: Any) -> float | None:
    """A number, from a JSON number or a string such as `"$1,234.50"`, `"1 234,5"` is not one."""
    if isinstance(value, str):
        found = _CURRENCY.match(value)
        text = _THOUSANDS.sub("", found.group(1) if found else value)
        parsed = to_number(text)
    else:
        parsed = to_number(value)
    return parsed if isinstance(parsed, float) else None


def _text(value: Any) -> str:
    """A value as text to compare: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        return str(type(value).__name__)


def _format_only(expected: Any, actual: Any) -> bool:
    a, b = _number(expected), _number(actual)
    if a is not None and b is not None:
        return a == b
    if isinstance(expected, str) and isinstance(actual, str):
        if normalize_text(expected) == normalize_text(actual):
            return True
        day_a, day_b = parse_date(expected, DEFAULT_DATE_FORMATS), parse_date(actual, DEFAULT_DATE_FORMATS)
        return day_a is not None and day_a == day_b
    return False


def classify_values(expected: Any, actual: Any) -> str:
    """The kind of miss for a field whose matcher said the two differ (see the module docstring)."""
    expected_empty, actual_empty = is_empty(expected), is_empty(actual)
    if not expected_empty and actual_empty:
        return "missing"
    if expected_empty and not actual_empty:
        return "hallucinated"
    if expected_empty and actual_empty:
        return "wrong_value"  # e.g. null against "": both empty, yet the matcher said they differ
    try:
        if _format_only(expected, actual):
            return "format_only"
        a, b = normalize_text(_text(expected)), normalize_text(_text(actual))
        if len(a) <= _TEXT_LIMIT and len(b) <= _TEXT_LIMIT and similarity(a, b) >= NEAR:
            return "near_miss"
    except (ValueError, OverflowError, RecursionError):
        pass  # a value no rule can read: a wrong value
    return "wrong_value"


def classify_miss(entry: Any) -> str | None:
    """The kind of miss of one entry of a `field_accuracy` result's `details.fields`; None unless
    its status is "miss". An `items` field is classified by `classify_items` instead."""
    if not isinstance(entry, Mapping) or entry.get("status") != "miss":
        return None
    return classify_values(entry.get("expected"), entry.get("actual"))


def _count(data: Any, key: str) -> int:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def classify_items(entry: Mapping[str, Any]) -> dict[str, int]:
    """Kinds of miss in one `match: items` entry: missing items, extra items, and each wrong
    sub-field of the matched items listed (matched items not listed, but counted wrong, count
    `wrong_value`)."""
    kinds: dict[str, int] = {}

    def add(kind: str, count: int = 1) -> None:
        if count > 0:
            kinds[kind] = kinds.get(kind, 0) + count

    counts = entry.get("items")
    add("missing", _count(counts, "missing"))
    add("hallucinated", _count(counts, "extra"))
    alignment = entry.get("alignment")
    pairs = alignment.get("pairs") if isinstance(alignment, Mapping) else None
    listed_wrong = 0
    for pair in pairs if isinstance(pairs, list) else []:
        if not isinstance(pair, Mapping) or pair.get("status") != "miss":
            continue
        listed_wrong += 1
        subs = [classify_miss(sub) for sub in pair.get("fields") or [] if isinstance(sub, Mapping)]
        found = [kind for kind in subs if kind is not None]
        for kind in found or ["wrong_value"]:
            add(kind)
    add("wrong_value", _count(counts, "wrong") - listed_wrong)
    return kinds


def row_taxonomy(results: Iterable[Any]) -> dict[FieldKey, dict[str, int]]:
    """(evaluator name, field path) -> {kind: misses} over one row's results (composites'
    members included); fields without a miss are left out."""
    out: dict[FieldKey, dict[str, int]] = {}
    for name, kind, details in walk_results(results):
        entries = details.get("fields")
        if kind != "field_accuracy" or not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
                continue
            if entry.get("status") != "miss":
                continue
            if entry.get("match") == "items" and isinstance(entry.get("items"), Mapping):
                found = classify_items(entry)
            else:
                single = classify_miss(entry)
                found = {single: 1} if single is not None else {}
            if found:
                into = out.setdefault((name, entry["path"]), {})
                add_kinds(into, found)
    return out


def add_kinds(into: dict[str, int], more: Mapping[str, int]) -> None:
    """Sum `more` into `into` (kind -> count)."""
    for kind, count in more.items():
        into[kind] = into.get(kind, 0) + count
