"""The failure taxonomy: each kind of miss, the order the rules apply in, line items, junk."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators.base import processed_result
from agentv_py.scoring.taxonomy import CATEGORIES, classify_items, classify_miss, classify_values, row_taxonomy


@pytest.mark.parametrize(
    ("expected", "actual", "kind"),
    [
        ("INV-1", None, "missing"),
        ("INV-1", "   ", "missing"),
        (12, "", "missing"),
        (None, "INV-1", "hallucinated"),
        ("", 0, "hallucinated"),
        ("INV-2025-001", "inv-2025-001", "format_only"),
        ("Acme  Shipping Ltd", "acme shipping ltd ", "format_only"),
        (1234.5, "1,234.50", "format_only"),
        (120.5, "$120.50", "format_only"),
        ("USD 99", 99, "format_only"),
        (12, "12.0", "format_only"),
        ("2025-01-15", "15-Jan-2025", "format_only"),
        ("2025-01-15", "01/15/2025", "format_only"),
        ("Acme Shipping", "Acme Shiping", "near_miss"),
        ("INV-2025-000123", "INV-2025-000128", "near_miss"),
        ("Widget", "Gadget", "wrong_value"),
        (1, 2, "wrong_value"),
        (1234.5, "1,234.55", "wrong_value"),
        ("2025-01-15", "2025-01-16", "near_miss"),  # one character: a near miss, not a format
        ("2025-01-15", "16-Jan-2025", "wrong_value"),
        ({"a": 1}, {"a": 2}, "wrong_value"),
        (None, "", "wrong_value"),  # both empty, yet the matcher said they differ
        (True, "true", "near_miss"),  # a boolean is not a number: compared as text
    ],
    ids=lambda value: repr(value)[:30],
)
def test_classify_values(expected, actual, kind):
    assert classify_values(expected, actual) == kind


def entry(expected: Any, actual: Any, status: str = "miss", **more: Any) -> dict[str, Any]:
    return {"path": "f", "match": "exact", "expected": expected, "actual": actual, "status": status, **more}


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (entry(1, 2, "hit"), None),
        (entry(1, None, "not scored"), None),
        (entry(1, None, "could not score"), None),
        ({"path": "f", "expected": "x", "status": "miss"}, "missing"),  # no `actual` key: nothing extracted
        ("junk", None),
        (None, None),
    ],
    ids=["hit", "not-scored", "could-not-score", "absent-actual", "string", "null"],
)
def test_classify_miss(data, kind):
    assert classify_miss(data) == kind


def items_entry(pairs: list[dict[str, Any]], **counts: int) -> dict[str, Any]:
    base = {"expected": 0, "actual": 0, "matched": 0, "correct": 0, "wrong": 0, "missing": 0, "extra": 0}
    return {
        "path": "line_items",
        "match": "items",
        "status": "miss",
        "expected": [],
        "actual": [],
        "items": {**base, **counts},
        "alignment": {"pairs": pairs, "missing": [], "extra": [], "junk": [], "truncated": False},
    }


def pair(status: str, *fields: dict[str, Any]) -> dict[str, Any]:
    return {"expected": 0, "actual": 0, "similarity": 1.0, "status": status, "fields": list(fields)}


@pytest.mark.parametrize(
    ("data", "kinds"),
    [
        (items_entry([], missing=2, extra=1), {"missing": 2, "hallucinated": 1}),
        (
            items_entry([pair("miss", entry(2, 3), entry("Box", "box")), pair("hit", entry(1, 1, "hit"))], wrong=1),
            {"wrong_value": 1, "format_only": 1},
        ),
        (items_entry([pair("miss", entry(2, 3))], wrong=4), {"wrong_value": 4}),  # 3 wrong items were not listed
        (items_entry([pair("miss")], wrong=1), {"wrong_value": 1}),  # a wrong item without its sub-fields
        ({"match": "items", "items": "junk", "alignment": 7}, {}),
    ],
    ids=["missing-and-extra", "wrong-sub-fields", "cut-listing", "no-sub-fields", "junk"],
)
def test_classify_items(data, kinds):
    assert classify_items(data) == kinds


def test_row_taxonomy_over_nested_results():
    fields = [entry("INV-1", "inv-1"), entry(5, None) | {"path": "g"}, entry(1, 1, "hit") | {"path": "h"}]
    inner = {"name": "inner", "type": "field_accuracy", "details": {"fields": [entry(None, 3)]}}
    results = [
        processed_result(name="fa", type="field_accuracy", score=0.3, details={"fields": fields}),
        processed_result(name="combo", type="composite", score=0.5, details={"evaluator_results": [inner]}),
        processed_result(
            name="lines", type="field_accuracy", score=0.0, details={"fields": [items_entry([], missing=2)]}
        ),
    ]
    assert row_taxonomy(results) == {
        ("fa", "f"): {"format_only": 1},
        ("fa", "g"): {"missing": 1},
        ("inner", "f"): {"hallucinated": 1},
        ("lines", "line_items"): {"missing": 2},
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_never_raises_and_always_names_a_kind(expected, actual):
    assert classify_values(expected, actual) in CATEGORIES
    assert classify_miss({"status": "miss", "expected": expected, "actual": actual}) in CATEGORIES


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_junk_details_never_raise(junk):
    results = [
        {
            "name": "x",
            "type": "field_accuracy",
            "details": {
                "fields": [junk, {"path": "p", "status": "miss", "match": "items", "items": junk, "alignment": junk}]
            },
        }
    ]
    kinds = row_taxonomy(results)
    assert all(kind in CATEGORIES for found in kinds.values() for kind in found)
