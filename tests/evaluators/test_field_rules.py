"""The whole answer (`$`), every item (`[*]`), and the matchers that combine others: `count`,
`set`, `any`; and a ground-truth value of a type its matcher never reads failing its field only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.field_results import read_fields
from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
from agentv_py.scoring.metrics import field_accuracy_counts
from agentv_py.scoring.paths import MISSING, path_problem, resolve
from agentv_py.scoring.value_rules import _assign, match_set

INVOICE = {"invoice_number": "INV-1", "total": 12.5, "lines": [{"amount": "3.00"}, {"amount": "2.00"}]}


def run(fields: list[dict[str, Any]], answer: Any, expected: Any):
    cfg = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": fields})
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return run_evaluator(cfg, EvalContext("c1", "ds", Path("."), text, expected))


def outcome(result) -> list[tuple[str, str, str | None]]:
    return [(f.path, f.status, f.reason) for f in read_fields(result.details)]


# ----------------------------------------------------------------------------- paths

# (id, data, path, value)
RESOLVED = [
    ("root", [INVOICE], "$", [INVOICE]),
    ("root-index", [INVOICE], "$[0].invoice_number", "INV-1"),
    ("root-dot", INVOICE, "$.total", 12.5),
    ("leading-index", [INVOICE], "[0].total", 12.5),
    ("wildcard", INVOICE, "lines[*].amount", ["3.00", "2.00"]),
    ("wildcard-root", [INVOICE, {"total": 1}], "$[*].total", [12.5, 1]),
    ("wildcard-hole", {"a": [{"x": 1}, {}, 5]}, "a[*].x", [1, None, None]),
    ("wildcard-whole-items", {"a": [1, 2]}, "a[*]", [1, 2]),
    ("wildcard-on-object", {"a": {"x": 1}}, "a[*]", MISSING),
    ("key-named-star", {"*": 1}, "*", 1),
    ("key-named-dollar", {"$x": 1}, "$x", 1),
]


@pytest.mark.parametrize("data, path, value", [c[1:] for c in RESOLVED], ids=[c[0] for c in RESOLVED])
def test_resolve(data, path, value):
    assert resolve(data, path) == value if value is not MISSING else resolve(data, path) is MISSING


@pytest.mark.parametrize(
    "path, problem",
    [
        ("$.", "malformed path '$.': nothing after '$.'"),
        (
            "a.$",
            "malformed path 'a.$': segment '$' is not a key optionally followed by [index] or [*] "
            "('$' alone is the whole answer)",
        ),
        (
            "a[**]",
            "malformed path 'a[**]': segment 'a[**]' is not a key optionally followed by [index] or [*] "
            "('$' alone is the whole answer)",
        ),
    ],
    ids=["dot-nothing", "dollar-inside", "double-star"],
)
def test_malformed_paths(path, problem):
    assert path_problem(path) == problem


# ----------------------------------------------------------------------------- count and the whole answer

ROOT_ITEMS = {
    "path": "$",
    "match": "items",
    "key": ["invoice_number"],
    "fields": [{"path": "total", "match": "numeric_tolerance", "tolerance": 0.01}],
}


def test_a_file_read_twice_fails_on_the_whole_answer():
    """The double-booking bug: the extractor returns the one invoice twice."""
    fields = [ROOT_ITEMS, {"path": "$", "match": "count"}]
    result = run(fields, [INVOICE, INVOICE], [INVOICE])
    assert result.score < 1.0 and result.verdict != "pass"
    assert outcome(result) == [  # two fields on one path: named `path:match`
        ("$:items", "miss", "1 of 1 items matched; 0 missing, 1 extra"),
        ("$:count", "miss", "count 2, expected 1"),
    ]
    assert result.misses == ["$:items (1 of 1 items matched; 0 missing, 1 extra)", "$:count (count 2, expected 1)"]
    assert sorted(field_accuracy_counts(result.details)) == ["$:count", "$:items"]  # counted apart in metrics
    assert run(fields, [INVOICE], [INVOICE]).score == 1.0


# (id, field, answer, expected, (status, reason))
COUNTS = [
    ("equal", {}, [1, 2], [3, 4], ("hit", None)),
    ("fewer", {}, [1], [3, 4], ("miss", "count 1, expected 2")),
    ("empty-answer", {}, [], [3], ("miss", "count 0, expected 1")),
    ("both-empty", {}, [], [], ("hit", None)),
    ("min", {"min": 1}, [], {"other": 1}, ("miss", "count 0, expected at least 1")),
    ("max", {"max": 1}, [1, 2], {}, ("miss", "count 2, expected at most 1")),
    ("within", {"min": 1, "max": 3}, [1, 2], {}, ("hit", None)),
    ("answer-not-a-list", {}, "x", [1], ("miss", "answer is string, not a list")),
    ("answer-missing", {"min": 1}, None, {}, ("miss", "required, missing")),
    ("truth-not-a-list", {}, [1], "x", ("could not score", "expected value for match 'count' is string, not a list")),
]


@pytest.mark.parametrize("options, answer, expected, want", [c[1:] for c in COUNTS], ids=[c[0] for c in COUNTS])
def test_count(options, answer, expected, want):
    answer_doc = {} if answer is None else {"lines": answer}
    truth = {"lines": expected} if not isinstance(expected, dict) else expected
    result = run([{"path": "lines", "match": "count", **options}], answer_doc, truth)
    assert outcome(result) == [("lines", *want)]


def test_count_bounds_are_checked_at_load():
    with pytest.raises(ValueError, match=r"count's min \(3\) is above its max \(1\)"):
        FieldSpec.model_validate({"path": "a", "match": "count", "min": 3, "max": 1})


# ----------------------------------------------------------------------------- set

# (id, of, answer, expected, score, (status, reason))
SETS = [
    ("reordered", None, ["2.00", "3.00"], ["3.00", "2.00"], 1.0, ("hit", None)),
    ("duplicates-count", None, ["3.00", "3.00"], ["3.00", "2.00"], 0.5, None),
    (
        "missing-and-extra",
        None,
        ["3.00", "9.00"],
        ["3.00", "2.00"],
        0.5,
        ("miss", "1 of 2 values matched; 1 missing, 1 extra (first missing: '2.00', first extra: '9.00')"),
    ),
    ("numeric", [{"match": "numeric_tolerance", "tolerance": 0.01}], [2, "3.001"], ["3.00", "2.00"], 1, ("hit", None)),
    ("fuzzy-scores", [{"match": "fuzzy", "threshold": 0.5}], ["acme lt"], ["ACME Ltd"], 7 / 8, ("hit", None)),
    ("both-empty", None, [], [], 1.0, ("hit", None)),
    ("answer-not-a-list", None, "3.00", ["3.00"], 0.0, ("miss", "answer is string, not a list; 0 of 1 values matched")),
]


@pytest.mark.parametrize("of, answer, expected, score, want", [c[1:] for c in SETS], ids=[c[0] for c in SETS])
def test_set(of, answer, expected, score, want):
    field = {"path": "amounts", "match": "set", **({"of": of} if of else {})}
    result = run([field], {"amounts": answer}, {"amounts": expected})
    assert result.score == pytest.approx(score)
    if want is not None:
        assert outcome(result) == [("amounts", *want)]


def test_set_pairs_optimally_not_in_order():
    """Greedy in answer order would pair 10.0 with 10.4 and leave 10.6 unmatched."""
    of = [FieldSpec(path="x", match="numeric_tolerance", tolerance=0.5)]
    result = match_set(of, [10.4, 10.6], [10.0, 11.0])
    assert result.passed and result.info["values"] == {"expected": 2, "actual": 2, "matched": 2}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", 1, 2, None]), max_size=6), st.randoms())
def test_set_ignores_order(values, rnd):
    shuffled = list(values)
    rnd.shuffle(shuffled)
    result = match_set([FieldSpec(path="x", match="exact")], shuffled, values)
    assert result.passed and result.score == 1.0


# ----------------------------------------------------------------------------- any, and types that vary

ANY = {"path": "qty", "match": "any", "of": [{"match": "numeric_tolerance", "tolerance": 0}, "fuzzy"]}

# (id, answer, expected, (status, reason), matcher)
ANYS = [
    ("number-read-as-number", "2", 2, ("hit", None), "numeric_tolerance"),
    ("text-read-by-fuzzy", "two pcs", "two pieces", ("miss", "similarity 0.70 < 0.85"), "fuzzy"),
    ("numeric-text-read-as-number", 2, "2.0", ("hit", None), "numeric_tolerance"),
]


@pytest.mark.parametrize("answer, expected, want, matcher", [c[1:] for c in ANYS], ids=[c[0] for c in ANYS])
def test_any_takes_the_first_matcher_that_reads_the_expected_value(answer, expected, want, matcher):
    result = run([ANY], {"qty": answer}, {"qty": expected})
    assert outcome(result) == [("qty", *want)]
    assert result.details["fields"][0]["matcher"] == matcher


def test_any_with_no_matcher_for_the_value_is_could_not_score_for_that_field():
    result = run([ANY, {"path": "id"}], {"qty": [1], "id": "x"}, {"qty": [1], "id": "x"})
    reason = (
        "no matcher of 'any' reads the expected value (numeric_tolerance: expected value is not numeric: array; "
        "fuzzy: fuzzy match needs strings, expected value is array)"
    )
    assert result.status == "error"
    assert result.misses == [f"case 'c1', field 'qty': cannot score: {reason}"]


@pytest.mark.parametrize("match", ["fuzzy", "date", "numeric_tolerance"])
def test_a_list_where_a_matcher_reads_scalars_fails_that_field_not_the_evaluator(match):
    options = {"tolerance": 0} if match == "numeric_tolerance" else {}
    fields = [{"path": "amount", "match": match, **options}, {"path": "id"}]
    result = run(fields, {"amount": ["3.00", "2.00"], "id": "x"}, {"amount": ["3.00", "2.00"], "id": "x"})
    assert result.status == "processed" and result.verdict == "fail" and result.score == 0.5
    statuses = [(path, status) for path, status, _ in outcome(result)]
    assert statuses == [("amount", "could not score"), ("id", "hit")]
    assert result.misses[0].startswith("could not score: amount (")


def test_of_lists_value_matchers_only():
    with pytest.raises(ValueError, match="of lists value matchers"):
        FieldSpec.model_validate({"path": "a", "match": "any", "of": ["count"]})
    with pytest.raises(ValueError, match="belongs on the field"):
        FieldSpec.model_validate({"path": "a", "match": "any", "of": [{"match": "exact", "weight": 2}]})
    with pytest.raises(ValueError, match="match 'any' needs 'of'"):
        FieldSpec.model_validate({"path": "a", "match": "any"})


# ----------------------------------------------------------------------------- bad input, at load

BAD_INPUT = [
    (
        "root-path-on-text-truth",
        "{path: $, match: count}",
        "expected_output: just text",
        "dataset.yaml:7: evalcases[0]: case 'c1': field '$' addresses the whole answer as JSON, but the case's "
        "expected value is a string; field_accuracy compares JSON objects and arrays (give the expected JSON, "
        "or judge a text answer with a code_judge or an llm_judge)",
    ),
    (
        "count-on-a-non-list",
        "{path: lines, match: count}",
        "expected_output: {lines: three}",
        "dataset.yaml:5: execution.evaluators[0].fields[0]: field 'lines' (match 'count') counts the expected "
        "list, but in case c1 the expected value is not one: expected value for match 'count' is string, not a "
        "list; give the list's path, or min/max bounds",
    ),
    (
        "count-bounds",
        "{path: lines, match: count, min: 2, max: 1}",
        "expected_output: {lines: []}",
        "dataset.yaml:5: execution.evaluators[0].fields[0]: count's min (2) is above its max (1)",
    ),
    (
        "count-option-elsewhere",
        "{path: lines, match: exact, min: 2}",
        "expected_output: {lines: []}",
        "dataset.yaml:5: execution.evaluators[0].fields[0]: option 'min' does not apply to match 'exact' "
        "(options for 'exact': none)",
    ),
    (
        "of-on-count",
        "{path: lines, match: count, of: [exact]}",
        "expected_output: {lines: []}",
        "dataset.yaml:5: execution.evaluators[0].fields[0]: option 'of' does not apply to match 'count' "
        "(options for 'count': min, max)",
    ),
]


@pytest.mark.parametrize("field, truth, message", [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_a_load_error(ws, field, truth, message):
    from agentv_py.errors import ConfigError
    from agentv_py.loading import load_dataset

    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        f"        - {field}\nevalcases:\n  - id: c1\n    {truth}\n"
    )
    with pytest.raises(ConfigError) as raised:
        load_dataset("dataset.yaml")
    assert [str(p) for p in raised.value.problems] == [message]


def test_set_of_long_lists():
    values = [f"v{i}" for i in range(250)]
    answer = list(reversed(values[1:])) + ["extra"]
    result = match_set([FieldSpec(path="x", match="exact")], answer, values)
    assert result.info["values"] == {"expected": 250, "actual": 250, "matched": 249}
    assert result.reason == "249 of 250 values matched; 1 missing, 1 extra (first missing: 'v0', first extra: 'extra')"


def test_above_the_exact_limit_values_pair_greedily_best_first():
    size = 201  # 40,401 cells: over PAIRED_EXACTLY
    scores = [[1.0 if i == j else (0.5 if j == i + 1 else 0.0) for j in range(size)] for i in range(size)]
    assert sorted(_assign(scores)) == [(i, i) for i in range(size)]


SCALARS = st.sampled_from([None, True, False, 0, 1, 1.0, 2, 2.5, "1", "a", "A", ""])


@settings(max_examples=200, deadline=None)
@given(st.lists(SCALARS, max_size=7), st.lists(SCALARS, max_size=7))
def test_exact_sets_counted_as_multisets_agree_with_optimal_pairing(expected, answer):
    """The multiset count (exact scalars) against the pairing matrix (`of` listing exact twice)."""
    counted = match_set([FieldSpec(path="x", match="exact")], answer, expected)
    paired = match_set([FieldSpec(path="x", match="exact")] * 2, answer, expected)
    assert (counted.passed, counted.score, counted.info) == (paired.passed, paired.score, paired.info)


def test_any_may_try_a_set_for_a_value_that_is_a_list_in_some_documents():
    field = {
        "path": "tax",
        "match": "any",
        "of": [{"match": "set", "of": [{"match": "numeric_tolerance", "tolerance": 0}]}, "exact"],
    }
    as_list = run([field], {"tax": ["2.00", "3.00"]}, {"tax": ["3.00", "2.00"]})
    as_text = run([field], {"tax": "3.00"}, {"tax": "3.00"})
    assert (as_list.score, as_text.score) == (1.0, 1.0)
    assert [f["matcher"] for f in (as_list.details["fields"][0], as_text.details["fields"][0])] == ["set", "exact"]
    with pytest.raises(
        ValueError,
        match=r"of lists value matchers \(exact, fuzzy, numeric_tolerance, date, anls, cer, wer\), not 'set'",
    ):
        FieldSpec.model_validate({"path": "a", "match": "set", "of": ["set"]})
