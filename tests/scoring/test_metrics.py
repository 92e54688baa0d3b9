"""Dataset-level metrics (SPEC §5): classification, undefined rates, macro/micro, alignment."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.scoring.alignment import align_items, item_similarity, similarity_matrix
from agentv_py.scoring.metrics import Counts, classify, field_counts, line_item_counts, macro_f1, total
from agentv_py.scoring.paths import MISSING

CLASSIFY = [
    ("equal-values-tp", "INV-1", "INV-1", (1, 0, 0, 0)),
    ("int-equals-float-tp", 1889, 1889.0, (1, 0, 0, 0)),
    ("different-values-fp-and-fn", "Acme", "Acme Inc", (0, 0, 1, 1)),
    ("both-missing-tn", MISSING, MISSING, (0, 1, 0, 0)),
    ("null-vs-empty-string-tn", None, "", (0, 1, 0, 0)),
    ("whitespace-vs-null-tn", "   ", None, (0, 1, 0, 0)),
    ("hallucinated-fp", MISSING, "PO-7781", (0, 0, 1, 0)),
    ("null-expected-value-given-fp", None, "x", (0, 0, 1, 0)),
    ("missing-fn", "INV-1", MISSING, (0, 0, 0, 1)),
    ("null-answer-fn", "INV-1", None, (0, 0, 0, 1)),
    ("whitespace-answer-fn", "INV-1", "  \t", (0, 0, 0, 1)),
    ("zero-is-not-empty", 0, 0, (1, 0, 0, 0)),
    ("false-is-not-empty", False, None, (0, 0, 0, 1)),
]


@pytest.mark.parametrize("expected, parsed, counts", [c[1:] for c in CLASSIFY], ids=[c[0] for c in CLASSIFY])
def test_classify(expected, parsed, counts):
    assert classify(expected, parsed).as_tuple() == counts


def test_undefined_rates_stay_undefined_and_a_field_never_right_has_f1_0():
    only_tn = Counts(tn=3)
    assert (only_tn.precision, only_tn.recall, only_tn.f1) == (None, None, None)
    only_fn = Counts(fn=2)  # expected, never answered (the field disappeared)
    assert (only_fn.precision, only_fn.recall, only_fn.f1) == (None, 0.0, 0.0)
    only_fp = Counts(fp=1)
    assert (only_fp.precision, only_fp.recall, only_fp.f1) == (0.0, None, 0.0)
    wrong = Counts(fp=12, fn=12)  # answered every time, always wrong
    assert (wrong.precision, wrong.recall, wrong.f1) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "counts",
    [Counts(tp=tp, fp=fp, fn=fn) for tp in range(6) for fp in range(6) for fn in range(6) if tp],
    ids=lambda c: f"tp{c.tp}-fp{c.fp}-fn{c.fn}",
)
def test_f1_is_the_harmonic_mean_wherever_that_is_defined(counts):
    p, r = counts.precision, counts.recall
    assert counts.f1 == pytest.approx(2 * p * r / (p + r), rel=1e-15)


def test_macro_counts_undefined_f1_with_errors_as_zero_and_skips_pure_tn():
    per_field = {"a": Counts(tp=1), "b": Counts(fp=1), "c": Counts(tn=5)}
    assert macro_f1(per_field) == 0.5  # a: 1.0, b: counts 0, c: left out
    assert macro_f1({"c": Counts(tn=1)}) is None


FIELDS = ["currency", "gross_total", "supplier.name", "invoice_number", "invoice_date", "importer.name"]


def five_documents():
    """The worked example of docs/metrics.md (and of the issue)."""
    expected = [
        {
            "invoice_number": f"INV-{i}",
            "invoice_date": f"2025-01-0{i + 1}",
            "currency": "USD",
            "supplier": {"name": "Acme Shipping"},
            "importer": {"name": "Global Trade Co"},
            "gross_total": 100 + i,
        }
        for i in range(5)
    ]
    parsed = copy.deepcopy(expected)
    for i in range(4):
        parsed[i]["supplier"]["name"] = "Acme Logistics"  # supplier wrong in four
    del parsed[0]["invoice_number"]  # missing in one
    parsed[1]["currency"] = "EUR"  # currency wrong in one
    parsed[2]["gross_total"] = 999  # gross wrong in one ...
    del parsed[3]["gross_total"]  # ... and missing in another
    return expected, parsed


def test_worked_example():
    per_field = {f: Counts() for f in FIELDS}
    for e, p in zip(*five_documents(), strict=False):
        for name, counts in field_counts(e, p, FIELDS).items():
            per_field[name] += counts
    table = {name: (c.as_tuple(), c.precision, c.recall, c.f1) for name, c in per_field.items()}
    assert table["currency"] == ((4, 0, 1, 1), 0.8, 0.8, pytest.approx(0.8))
    assert table["gross_total"][0] == (3, 0, 1, 2)
    assert [round(x, 3) for x in table["gross_total"][1:]] == [0.75, 0.6, 0.667]
    assert table["supplier.name"][0] == (1, 0, 4, 4) and round(table["supplier.name"][3], 3) == 0.2
    assert table["invoice_number"][0] == (4, 0, 0, 1)
    assert [round(x, 3) for x in table["invoice_number"][1:]] == [1.0, 0.8, 0.889]
    assert table["invoice_date"] == ((5, 0, 0, 0), 1.0, 1.0, 1.0) == table["importer.name"]
    summed = total(per_field)
    assert summed.as_tuple() == (22, 0, 6, 8)
    assert [round(x, 3) for x in (summed.precision, summed.recall, summed.f1, macro_f1(per_field))] == [
        0.786,
        0.733,
        0.759,
        0.759,
    ]


# ----------------------------------------------------------------------------- alignment

E3 = [
    {"description": "OCEAN FREIGHT", "quantity": 1},
    {"description": "Bunker Adjustment Factor", "quantity": 2},
    {"description": "Documentation Fee", "quantity": 1},
]


@pytest.mark.parametrize("assignment", ["greedy", "optimal"])
def test_reordered_items_align_perfectly(assignment):
    parsed = [E3[2], E3[0], E3[1]]
    alignment = align_items(E3, parsed, assignment=assignment)
    assert [(i, j) for i, j, _ in alignment.pairs] == [(0, 1), (1, 2), (2, 0)]
    counts = line_item_counts(E3, parsed, alignment, ["description", "quantity"])
    assert {k: c.as_tuple() for k, c in counts.items()} == {"description": (3, 0, 0, 0), "quantity": (3, 0, 0, 0)}


def test_greedy_and_optimal_differ():
    expected = [{"description": "port terminal"}, {"description": "bunker freight"}]
    parsed = [{"description": "port freight"}, {"description": "ocean freight"}]
    greedy = align_items(expected, parsed, threshold=0.5, assignment="greedy")
    optimal = align_items(expected, parsed, threshold=0.5, assignment="optimal")
    # greedy takes the best pair first (bunker freight ~ port freight, 0.571, tie broken by index)
    # and strands "port terminal"; optimal maximises the total and pairs both.
    assert [(i, j) for i, j, _ in greedy.pairs] == [(1, 0)] and greedy.unmatched_expected == [0]
    assert [(i, j) for i, j, _ in optimal.pairs] == [(0, 0), (1, 1)] and optimal.unmatched_expected == []


def test_extra_and_missing_items_count_fp_and_fn_per_non_empty_field():
    parsed = [E3[0], E3[2], {"description": "Port Security Charge", "quantity": None}]
    alignment = align_items(E3, parsed)
    assert alignment.unmatched_expected == [1] and alignment.unmatched_parsed == [2]
    counts = line_item_counts(E3, parsed, alignment, ["description", "quantity"])
    assert counts["description"].as_tuple() == (2, 0, 1, 1)
    assert counts["quantity"].as_tuple() == (2, 0, 0, 1)  # the extra item's quantity is empty: no FP


def test_duplicates_pair_one_to_one():
    expected = [{"description": "Fee"}, {"description": "Fee"}]
    parsed = [{"description": "Fee"}, {"description": "Fee"}, {"description": "Fee"}]
    for assignment in ("greedy", "optimal"):
        alignment = align_items(expected, parsed, assignment=assignment)
        assert len(alignment.pairs) == 2 and len(alignment.unmatched_parsed) == 1


@pytest.mark.parametrize(
    "expected, parsed, fp, fn",
    [([], E3, 3, 0), (E3, [], 0, 3), ([], [], 0, 0)],
    ids=["no-expected-items", "no-parsed-items", "both-empty"],
)
def test_empty_lists(expected, parsed, fp, fn):
    alignment = align_items(expected, parsed)
    counts = line_item_counts(expected, parsed, alignment, ["description"])
    assert (counts["description"].fp, counts["description"].fn) == (fp, fn)


def test_deterministic_under_ties():
    expected = [{"description": "Fee"}, {"description": "Fee"}]
    parsed = [{"description": "Fee"}, {"description": "Fee"}]
    first = align_items(expected, parsed).pairs
    assert all(align_items(expected, parsed).pairs == first for _ in range(5))
    assert first == [(0, 0, 1.0), (1, 1, 1.0)]


def test_item_similarity_rules():
    assert item_similarity({"d": " Freight ", "q": 2}, {"d": "freight", "q": 2}, ["d", "q"]) == 1.0
    assert item_similarity({"d": "x", "q": 2}, {"d": "x", "q": 3}, ["d", "q"]) == 0.5  # numbers: exact
    assert item_similarity({"when": "2025-01-15"}, {"when": "2025-01-16"}, ["when"]) == 0.0  # dates: exact
    assert item_similarity({"d": "x"}, {"q": 1}, ["d", "q"]) == 0.0  # nothing on both sides
    assert item_similarity("not an item", {"d": "x"}, ["d"]) == 0.0


def test_alignment_details_are_bounded():
    items = [{"description": f"item {i}"} for i in range(150)]
    data = align_items(items, items).to_dict(limit=100)
    assert len(data["pairs"]) == 100 and data["pairs_total"] == 150 and data["truncated"] is True


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.5, "2025-01-15", "2025-01-16", "15-JAN-2025"]),
    st.text(alphabet="abc -", max_size=6),
    st.lists(st.integers(0, 2), max_size=2),
)
items = st.lists(st.dictionaries(st.sampled_from(["d", "q", "x"]), values, max_size=3), max_size=5)


@settings(max_examples=300, deadline=None)
@given(expected=items, parsed=items)
def test_vectorised_matrix_agrees_with_item_similarity(expected, parsed):
    fast = similarity_matrix(expected, parsed, ["d", "q"])
    slow = [[item_similarity(e, p, ["d", "q"]) for p in parsed] for e in expected]
    assert len(fast) == len(slow)
    for row_fast, row_slow in zip(fast, slow, strict=False):
        assert row_fast == row_slow  # the same bits: installing numpy changes no pairing at a threshold


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({"tp": 1, "fn": 2}, (1, 0, 0, 2), id="missing counts are 0"),
        pytest.param({"tp": 10**30, "tn": 0, "fp": 0, "fn": 0}, (10**30, 0, 0, 0), id="a count wider than 64 bits"),
        pytest.param({"tp": 1, "fp": -1}, "'fp' must be a whole number >= 0, got -1", id="negative"),
        pytest.param({"tp": True}, "'tp' must be a whole number >= 0, got True", id="a boolean"),
        pytest.param({"tp": 1.0}, "'tp' must be a whole number >= 0, got 1.0", id="a float"),
        pytest.param({"tp": "1", "fn": -1}, "'tp' must be a whole number >= 0, got '1'", id="the first bad one named"),
        pytest.param({"fn": None}, "'fn' must be a whole number >= 0, got None", id="null"),
    ],
)
def test_counts_from_a_judges_mapping(data, expected):
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=None) as raised:
            Counts.from_mapping(data)
        assert str(raised.value) == expected
    else:
        assert Counts.from_mapping(data).as_tuple() == expected
