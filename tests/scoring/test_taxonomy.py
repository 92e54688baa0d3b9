"""The failure taxonomy: each kind of miss, the order the rules apply in, line items, junk, and
agreement with the per-field counts of `agentv metrics`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentv_py.evaluators.base import processed_result
from agentv_py.evaluators.field_accuracy import score_fields
from agentv_py.models.field_results import FieldOutcome, read_field
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.jsontext import OutOfRangeNumber
from agentv_py.scoring.match import match_fuzzy
from agentv_py.scoring.metrics import field_accuracy_counts
from agentv_py.scoring.paths import is_empty
from agentv_py.scoring.taxonomy import (
    CATEGORIES,
    LABELS,
    add_taxonomy,
    classify_entry,
    classify_items,
    classify_miss,
    classify_values,
    row_taxonomy,
)

VALUES = [
    # missing: expected a value, got none
    ("missing/null", "INV-1", None, "missing"),
    ("missing/blank", "INV-1", "   ", "missing"),
    ("missing/number-vs-empty", 12, "", "missing"),
    ("missing/list-vs-null", ["a"], None, "missing"),
    # hallucinated: expected none, got one
    ("hallucinated/string", None, "INV-1", "hallucinated"),
    ("hallucinated/zero", "", 0, "hallucinated"),
    ("hallucinated/list", None, [1], "hallucinated"),
    # format only: equal once normalised
    ("format/case", "INV-2025-001", "inv-2025-001", "format_only"),
    ("format/whitespace", "Acme  Shipping Ltd", " acme shipping\n\tltd ", "format_only"),
    ("format/nfkc", "ＩＮＶ-1", "INV-1", "format_only"),
    ("format/thousands", 1234.5, "1,234.50", "format_only"),
    ("format/currency-sign", 120.5, "$120.50", "format_only"),
    ("format/currency-sign-after", "1'234.50 €", 1234.5, "format_only"),
    ("format/currency-code", "USD 99", 99, "format_only"),
    ("format/currency-code-after", 12, "12 USD", "format_only"),
    ("format/sign-vs-code", "$99", "USD 99", "format_only"),
    ("format/code-vs-its-sign", "5 EUR", "€5", "format_only"),
    ("format/dollar-sign-vs-cad", "CAD 12", "$12", "format_only"),
    ("format/number-string", 12, "12.0", "format_only"),
    ("format/number-spaces", "  12 ", 12, "format_only"),
    ("format/date-name", "2025-01-15", "15-Jan-2025", "format_only"),
    ("format/date-slashes", "2025-01-15", "01/15/2025", "format_only"),
    ("format/date-with-time", "2025-01-15", "2025-01-15T10:00:00Z", "format_only"),
    ("format/boolean-text", True, "TRUE", "format_only"),
    ("format/list-case", ["a"], ["A"], "format_only"),
    ("format/null-vs-blank", None, "", "format_only"),
    ("format/null-vs-empty-list", [], None, "format_only"),
    ("format/blank-vs-empty-object", "  ", {}, "format_only"),
    # near miss: similarity >= 0.9
    ("near/typo", "Acme Shipping", "Acme Shiping", "near_miss"),
    ("near/one-digit", "INV-2025-000123", "INV-2025-000128", "near_miss"),
    ("near/exactly-0.9", "abcdefghij", "abcdefghik", "near_miss"),
    ("near/date-one-char", "2025-01-15", "2025-01-16", "near_miss"),
    # wrong value: anything else
    ("wrong/just-under-0.9", "abcdefghi", "abcdefghx", "wrong_value"),
    ("wrong/word", "Widget", "Gadget", "wrong_value"),
    ("wrong/number", 1, 2, "wrong_value"),
    ("wrong/amount", 1234.5, "1,234.55", "wrong_value"),
    ("wrong/other-currency-code", "EUR 99", "USD 99", "wrong_value"),
    ("wrong/other-currency-sign", "$99", "€99", "wrong_value"),
    ("wrong/sign-vs-other-code", "€5", "5 USD", "wrong_value"),
    ("wrong/code-vs-other-sign", "GBP 5", "€5", "wrong_value"),
    ("wrong/lower-case-word-is-no-code", "Box 12", 12, "wrong_value"),
    ("wrong/european-decimal", 1234.5, "1 234,5", "wrong_value"),
    ("wrong/other-date", "2025-01-15", "16-Jan-2025", "wrong_value"),
    ("wrong/object", {"a": 1}, {"a": 2}, "wrong_value"),
    ("wrong/list-vs-string", "ACME", ["ACME"], "wrong_value"),
    # priority: the first rule that applies
    ("priority/format-before-near", "Acme Shipping", "ACME SHIPPING", "format_only"),
    ("priority/missing-before-format", 0, None, "missing"),
    ("priority/hallucinated-before-format", "", "  x", "hallucinated"),
    # hostile values
    ("hostile/huge-ints", 10**5000, 10**5000 + 1, "wrong_value"),  # no text: never "equal as text"
    ("hostile/out-of-range", OutOfRangeNumber("1e309"), 1e308, "wrong_value"),
    ("hostile/nan", float("nan"), float("nan"), "format_only"),  # NaN != NaN, yet both read "NaN"
    ("hostile/whitespace-run", "1" + " " * 100_000 + "x", "y", "wrong_value"),  # linear: no regex backtracking
    ("hostile/long-equal-text", "a" * 50_000, "A" * 50_000, "format_only"),
    ("hostile/long-differing-text", "a" * 50_000, "a" * 49_999 + "b", "wrong_value"),  # too long to compare
]


@pytest.mark.parametrize(("expected", "actual", "kind"), [v[1:] for v in VALUES], ids=[v[0] for v in VALUES])
def test_classify_values(expected, actual, kind):
    assert classify_values(expected, actual) == kind


def test_deep_nesting_is_a_wrong_value():
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]
    assert classify_values(deep, [deep]) == "wrong_value"


def test_labels_follow_the_categories():
    assert list(LABELS) == list(CATEGORIES)
    assert [LABELS[kind] for kind in CATEGORIES] == [
        "missing",
        "hallucinated",
        "wrong value",
        "format only",
        "near miss",
    ]


def typed(data: Any) -> FieldOutcome | None:
    """An entry as every reader takes it: through the model (`read_field`), or not at all. The
    tables' entries without a path get one (classifying never looks at it)."""
    return read_field({"path": "f", **data} if isinstance(data, dict) and "path" not in data else data)


def entry(expected: Any, actual: Any, status: str = "miss", **more: Any) -> dict[str, Any]:
    return {"path": "f", "match": "exact", "expected": expected, "actual": actual, "status": status, **more}


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (entry("INV-1", "inv-1"), "format_only"),
        (entry(1, 2, "hit"), None),
        (entry(1, None, "not scored"), None),
        (entry(1, None, "could not score"), None),
        ({"path": "f", "expected": "x", "status": "miss"}, "missing"),  # no `actual` key: nothing extracted
        ({"path": "f", "actual": "x", "status": "miss"}, "hallucinated"),
        ("junk", None),
        (None, None),
        ([entry(1, 2)], None),
    ],
    ids=["miss", "hit", "not-scored", "could-not-score", "absent-actual", "absent-expected", "string", "null", "list"],
)
def test_classify_miss(data, kind):
    field = typed(data)
    assert (classify_miss(field) if field is not None else None) == kind


def items_entry(
    pairs: list[dict[str, Any]],
    status: str = "miss",
    lists: tuple[list[Any], list[Any]] = ([{"d": 1}], [{"d": 2}]),
    **counts: Any,
) -> dict[str, Any]:
    base = {"expected": 0, "actual": 0, "matched": 0, "correct": 0, "wrong": 0, "missing": 0, "extra": 0}
    return {
        "path": "line_items",
        "match": "items",
        "status": status,
        "expected": lists[0],
        "actual": lists[1],
        "items": {**base, **counts},
        "alignment": {"pairs": pairs, "missing": [], "extra": [], "junk": [], "truncated": False},
    }


def pair(status: str, *fields: dict[str, Any]) -> dict[str, Any]:
    return {"expected": 0, "actual": 0, "similarity": 1.0, "status": status, "fields": list(fields)}


TWO_ITEMS = [{"description": "Freight"}, {"description": "Insurance"}]


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
        (items_entry([pair("miss", entry(2, 3)), pair("miss", entry(2, 3))], wrong=1), {"wrong_value": 2}),
        (items_entry([], "hit"), {}),
        (items_entry([], "could not score", missing=2), {}),
        (items_entry([], lists=([], []), missing=-1, extra=True, wrong="3"), {}),  # bad counts, both lists empty
        (entry(TWO_ITEMS, None, match="items"), {"missing": 2}),  # the answer had no list: no counts
        (entry(TWO_ITEMS + [None, " "], None, "not scored", match="items"), {"missing": 2}),  # optional, absent
        (entry([], None, match="items"), {}),  # [] against null: both empty, no error
        ({"match": "items", "items": "junk", "alignment": 7}, {}),  # no status
        (  # counts that do not fit the model: the field is left out by the reader
            {"match": "items", "status": "miss", "expected": [1], "items": {"missing": 1}, "alignment": {"pairs": "x"}},
            {},
        ),
        (
            {
                "match": "items",
                "status": "miss",
                "expected": [1],
                "items": {"wrong": 1},
                "alignment": {"pairs": [pair("miss", 7)]},
            },
            {},  # left out by the reader, as above
        ),
        ({"match": "items", "status": "miss", "items": {"missing": 1}}, {}),  # neither list: both empty
        ("junk", {}),
    ],
    ids=[
        "missing-and-extra",
        "wrong-sub-fields",
        "cut-listing",
        "no-sub-fields",
        "more-listed-than-counted",
        "hit",
        "could-not-score",
        "bad-counts",
        "no-list-answered",
        "optional-absent",
        "empty-list-vs-null",
        "no-status",
        "pairs-not-a-list",
        "sub-fields-junk",
        "counts-without-lists",
        "string",
    ],
)
def test_classify_items(data, kinds):
    field = typed(data)
    assert (classify_items(field) if field is not None else {}) == kinds


def items_config() -> FieldAccuracyConfig:
    spec = {
        "path": "line_items",
        "match": "items",
        "key": ["description"],
        "fields": [{"path": "description", "match": "exact"}, {"path": "quantity", "match": "exact"}],
    }
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [spec]})


def test_items_entry_from_field_accuracy():
    """A real `match: items` entry: one item missing, one extra, one matched with its quantity as text."""
    truth = {"line_items": [{"description": "Freight", "quantity": 2}, {"description": "Insurance", "quantity": 1}]}
    answer = {
        "line_items": [{"description": "Freight", "quantity": "2"}, {"description": "Customs fee", "quantity": 1}]
    }
    [field] = score_fields(items_config(), answer, truth)["fields"]
    assert field.items is not None
    assert field.items.model_dump() | {"status": field.status} == {
        "expected": 2,
        "actual": 2,
        "matched": 1,
        "correct": 0,
        "wrong": 1,
        "missing": 1,
        "extra": 1,
        "status": "miss",
    }
    assert classify_items(field) == {"missing": 1, "hallucinated": 1, "format_only": 1}


def test_items_listing_cut_keeps_exact_totals():
    """105 matched items with a wrong quantity: details list 100 pairs (each a format-only quantity);
    the 5 not listed count as wrong values, so the total stays 105."""
    truth = {"line_items": [{"description": f"item {i:03}", "quantity": i} for i in range(105)]}
    answer = {"line_items": [{"description": f"item {i:03}", "quantity": str(i)} for i in range(105)]}
    [field] = score_fields(items_config(), answer, truth)["fields"]
    assert field.alignment is not None and field.items is not None
    assert len(field.alignment.pairs) == 100 and field.items.wrong == 105
    assert classify_items(field) == {"format_only": 100, "wrong_value": 5}


@pytest.mark.parametrize(
    ("data", "kinds"),
    [
        (entry("INV-1", "inv-1"), {"format_only": 1}),
        (entry(None, "PO-7", "not scored", reason="no expected value"), {"hallucinated": 1}),
        (entry("PO-7", None, "not scored", reason="optional, missing"), {"missing": 1}),
        (entry("a", "b", "not scored"), {}),
        (entry(None, None, "not scored"), {}),
        (entry("x", "x", "hit"), {}),
        (entry("", "abc", "hit", match="fuzzy"), {"hallucinated": 1}),  # fuzzy threshold 0: a hit, yet FP
        (entry("x", None, "could not score"), {}),
        (entry(TWO_ITEMS, None, match="items"), {"missing": 2}),
        (entry(None, TWO_ITEMS, "not scored", match="items"), {"hallucinated": 1}),  # no list expected: one field
        ({"status": "miss"}, {}),  # neither side: both empty, no error
        (7, {}),
    ],
    ids=[
        "miss",
        "not-in-truth-but-answered",
        "optional-absent",
        "not-scored-both-present",
        "not-scored-both-absent",
        "hit",
        "hit-with-empty-truth",
        "could-not-score",
        "items",
        "items-not-in-truth",
        "bare-miss",
        "junk",
    ],
)
def test_classify_entry(data, kinds):
    field = typed(data)
    assert (classify_entry(field) if field is not None else {}) == kinds


def test_row_taxonomy_over_nested_results():
    fields = [
        entry("INV-1", "inv-1"),
        entry(5, None) | {"path": "g"},
        entry(1, 1, "hit") | {"path": "h"},
        entry(None, "x", "not scored") | {"path": "i"},
    ]
    inner = {"name": "inner", "type": "field_accuracy", "details": {"fields": [entry(None, 3)]}}
    judge_fields = {"name": "judge", "type": "code_judge", "details": {"fields": [entry(1, 2)]}}
    results = [
        processed_result(name="fa", type="field_accuracy", score=0.3, details={"fields": fields}),
        processed_result(name="combo", type="composite", score=0.5, details={"evaluator_results": [inner]}),
        processed_result(
            name="lines", type="field_accuracy", score=0.0, details={"fields": [items_entry([], missing=2)]}
        ),
        processed_result(name="cj", type="code_judge", score=0.0, details={"evaluator_results": [judge_fields]}),
        processed_result(name="junk", type="field_accuracy", score=0.0, details={"fields": [7, {"path": 3}]}),
    ]
    assert row_taxonomy(results) == {
        ("fa", "f"): {"format_only": 1},
        ("fa", "g"): {"missing": 1},
        ("fa", "i"): {"hallucinated": 1},
        ("inner", "f"): {"hallucinated": 1},
        ("lines", "line_items"): {"missing": 2},
    }


def test_add_taxonomy_sums_rows():
    total: dict[tuple[str, str], dict[str, int]] = {}
    add_taxonomy(total, {("fa", "f"): {"missing": 1}})
    add_taxonomy(total, {("fa", "f"): {"missing": 2, "near_miss": 1}, ("fa", "g"): {"wrong_value": 1}})
    assert total == {("fa", "f"): {"missing": 3, "near_miss": 1}, ("fa", "g"): {"wrong_value": 1}}


leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["$1,234.50", "USD 99", "15-Jan-2025", "2025-01-15", " ", "1e309"])
    | st.builds(pow, st.just(10), st.integers(min_value=4400, max_value=4500))  # over the int-to-text limit
    | st.builds(OutOfRangeNumber, st.sampled_from(["1e309", "9" * 5000]))
)
json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_never_raises_and_always_names_a_kind(expected, actual):
    assert classify_values(expected, actual) in CATEGORIES
    field = typed({"status": "miss", "expected": expected, "actual": actual})
    assert field is not None and classify_miss(field) in CATEGORIES


@settings(max_examples=200, deadline=None)
@given(json_values, json_values)
def test_junk_details_never_raise(junk, more):
    results = [
        {
            "name": "x",
            "type": "field_accuracy",
            "details": {
                "fields": [
                    junk,
                    {"path": "p", "status": "miss", "match": "items", "items": junk, "alignment": more},
                    {"path": "q", "status": "miss", "match": "items", "expected": [junk], "actual": more},
                ]
            },
        }
    ]
    kinds = row_taxonomy(results)
    assert all(kind in CATEGORIES and count > 0 for found in kinds.values() for kind, count in found.items())


statuses = st.sampled_from(["hit", "miss", "not scored", "could not score"])
counts = st.integers(min_value=0, max_value=5)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.builds(entry, json_values, json_values, statuses),
        st.builds(
            lambda expected, actual, status, missing, extra, wrong: entry(
                expected,
                actual,
                status,
                match="items",
                items={"missing": missing, "extra": extra, "wrong": wrong, "correct": 0}
                | {"expected": 0, "actual": 0, "matched": 0},
            ),
            st.lists(json_values, max_size=3),
            json_values,
            statuses,
            counts,
            counts,
            counts,
        ),
        st.builds(entry, st.lists(json_values, max_size=3), json_values, statuses, match=st.just("items")),
    )
)
def test_every_error_of_the_per_field_counts_has_a_kind(data):
    """What `agentv metrics` counts FP or FN, and every miss, has a kind in the taxonomy."""
    errors = sum(c.fp + c.fn for c in field_accuracy_counts({"fields": [data]}).values())
    field = typed(data)
    if field is None:  # an entry the model does not take: left out by every reader alike
        assert errors == 0
        return
    found = sum(classify_entry(field).values())
    nothing = is_empty(data.get("expected")) and is_empty(data.get("actual"))
    if errors or (data["status"] == "miss" and not nothing):  # both empty is never an error
        assert found > 0
    else:
        assert found == 0


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=30), st.text(max_size=3), st.integers(min_value=0, max_value=30))
@example("Acme Shipping", "", 8)
@example("INV-2025-000123", "8", 14)
def test_a_near_miss_passes_fuzzy_at_0_9(text, inserted, at):
    """Same measure as the fuzzy matcher: turning a near miss's field into `match: fuzzy,
    threshold: 0.9` makes it a hit."""
    other = text[:at] + inserted + text[at + 1 :]
    if classify_values(text, other) == "near_miss":
        assert match_fuzzy(other, text, threshold=0.9).passed
