"""`match: items` alignment (scoring/items.py, SPEC §5 line items): pure pairing, shape checks, score, text."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_py.scoring.items import align, expected_items_problem, items_score, items_summary


def d(*names: str) -> list[dict[str, Any]]:
    return [{"description": name} for name in names]


# (id, expected, actual, key, threshold, algorithm, pairs (i, j), missing, extra, junk)
ALIGN = [
    (
        "reordered",
        d("Widget", "Gadget", "Fee"),
        d("Fee", "Widget", "Gadget"),
        ["description"],
        0.8,
        "optimal",
        [(0, 1), (1, 2), (2, 0)],
        [],
        [],
        [],
    ),
    (
        "reordered-greedy",
        d("Widget", "Gadget", "Fee"),
        d("Fee", "Widget", "Gadget"),
        ["description"],
        0.8,
        "greedy",
        [(0, 1), (1, 2), (2, 0)],
        [],
        [],
        [],
    ),
    ("case-and-spaces-ignored", d("Widget A"), d("  widget a "), ["description"], 0.8, "optimal", [(0, 0)], [], [], []),
    ("below-threshold-never-pairs", d("Widget"), d("Gizmo"), ["description"], 0.8, "optimal", [], [0], [0], []),
    (
        "junk-is-extra-even-at-threshold-0",
        d("Widget"),
        [None, "Widget", 3, ["Widget"], {"description": "Widget"}],
        ["description"],
        0.0,
        "optimal",
        [(0, 4)],
        [],
        [0, 1, 2, 3],
        [0, 1, 2, 3],
    ),
    ("junk-only-answer", d("Widget"), [None, "Widget"], ["description"], 0.8, "greedy", [], [0], [0, 1], [0, 1]),
    ("numbers-exact", [{"sku": 7}], [{"sku": 7.0}, {"sku": 8}], ["sku"], 0.8, "optimal", [(0, 0)], [], [1], []),
    (
        "dates-exact-not-text",
        [{"date": "2024-01-02"}],
        [{"date": "2024-01-03"}],
        ["date"],
        0.8,
        "optimal",
        [],
        [0],
        [0],
        [],
    ),
    ("key-absent-in-answer", d("Widget"), [{"name": "Widget"}], ["description"], 0.8, "optimal", [], [0], [0], []),
    (
        "more-expected-than-actual",
        d("A1", "B2", "C3"),
        d("B2"),
        ["description"],
        0.8,
        "optimal",
        [(1, 0)],
        [0, 2],
        [],
        [],
    ),
    ("empty-both", [], [], ["description"], 0.8, "optimal", [], [], [], []),
    ("empty-answer", d("A"), [], ["description"], 0.8, "optimal", [], [0], [], []),
    # two keys: similarity is their mean, so one matching key of two (0.5) falls under 0.8
    (
        "multi-key-mean",
        [{"description": "Widget", "sku": 1}],
        [{"description": "Widget", "sku": 2}],
        ["description", "sku"],
        0.8,
        "optimal",
        [],
        [0],
        [0],
        [],
    ),
]


@pytest.mark.parametrize(
    "expected, actual, key, threshold, algorithm, pairs, missing, extra, junk",
    [c[1:] for c in ALIGN],
    ids=[c[0] for c in ALIGN],
)
def test_align(expected, actual, key, threshold, algorithm, pairs, missing, extra, junk):
    alignment = align(expected, actual, key, threshold, algorithm)
    assert [(i, j) for i, j, _ in alignment.pairs] == pairs
    assert (alignment.missing, alignment.extra, alignment.junk) == (missing, extra, junk)
    assert all(s >= threshold for _, _, s in alignment.pairs)


THREE_KEYS = ["a", "b", "c"]
# e0~a0 1.0, e0~a1 2/3, e1~a0 2/3, e1~a1 1/3: greedy takes the best pair and strands e1;
# optimal pairs both (2/3 + 2/3 > 1 + nothing).
E = [{"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 1, "c": 1}]
A = [{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 1, "c": 2}]


@pytest.mark.parametrize(
    "algorithm, pairs, missing",
    [("greedy", [(0, 0)], [1]), ("optimal", [(0, 1), (1, 0)], [])],
    ids=["greedy-best-first", "optimal-max-total"],
)
def test_greedy_and_optimal_differ(algorithm, pairs, missing):
    alignment = align(E, A, THREE_KEYS, 0.6, algorithm)
    assert [(i, j) for i, j, _ in alignment.pairs] == pairs and alignment.missing == missing


def test_optimal_ignores_pairs_under_the_threshold():
    """Two 0.7 pairs (under 0.8) must not displace one 0.9 pair: only pairs at or over the
    threshold weigh in the assignment."""
    expected = d("abcdefghij", "XYZdefghiX")
    actual = d("abcdefghiX", "abcdefgXYZ")
    alignment = align(expected, actual, ["description"], 0.8, "optimal")
    assert [(i, j, round(s, 2)) for i, j, s in alignment.pairs] == [(0, 0, 0.9)]
    assert (alignment.missing, alignment.extra) == ([1], [1])


def test_duplicate_keys_pair_one_to_one_deterministically():
    expected = [{"description": "Widget", "quantity": 1}, {"description": "Widget", "quantity": 2}]
    actual = [{"description": "Widget", "quantity": 2}, {"description": "Widget", "quantity": 1}, d("Widget")[0]]
    first = align(expected, actual, ["description"], 0.8, "optimal")
    assert len(first.pairs) == 2 and len({j for _, j, _ in first.pairs}) == 2 and len(first.extra) == 1
    assert align(expected, actual, ["description"], 0.8, "optimal") == first
    # a key that tells the duplicates apart pairs them right
    keyed = align(expected, actual, ["description", "quantity"], 0.8, "greedy")
    assert [(i, j) for i, j, _ in keyed.pairs] == [(0, 1), (1, 0)] and keyed.extra == [2]


@pytest.mark.parametrize(
    "value, problem",
    [
        ([{"description": "a"}], None),
        ([], None),
        ({"description": "a"}, "expected value for match 'items' is object, not a list of objects"),
        ("a, b", "expected value for match 'items' is string, not a list of objects"),
        ([{"a": 1}, None], "expected item 1 is null, not an object"),
        ([["a"]], "expected item 0 is array, not an object"),
    ],
    ids=["list-of-objects", "empty-list", "object", "string", "null-item", "array-item"],
)
def test_expected_items_problem(value, problem):
    assert expected_items_problem(value) == problem


@pytest.mark.parametrize(
    "scores, n_expected, n_actual, score",
    [
        ([1.0, 1.0], 2, 2, 1.0),
        ([1.0, 0.5], 3, 2, 0.5),  # a missing item costs one item's worth
        ([1.0, 1.0], 2, 4, 0.5),  # so does an extra one
        ([], 0, 0, 1.0),
        ([], 2, 0, 0.0),
    ],
    ids=["all-right", "missing", "extra", "both-empty", "nothing-matched"],
)
def test_items_score(scores, n_expected, n_actual, score):
    assert items_score(scores, n_expected, n_actual) == pytest.approx(score)


@pytest.mark.parametrize(
    "args, text",
    [
        ((2, 3, 1, 1, 0), "2 of 3 items matched; 1 missing, 1 extra"),
        ((3, 3, 0, 0, 2), "3 of 3 items matched; 0 missing, 0 extra, 2 with wrong fields"),
    ],
    ids=["counts", "wrong-fields"],
)
def test_items_summary(args, text):
    assert items_summary(*args) == text
