"""`field_accuracy` with `match: items` end to end: alignment, sub-field scoring, hostile answers,
bad ground truth (an error, never a miss), config errors, and per-item metrics counts."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from agentv_py.errors import ConfigError
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.loading import load_dataset
from agentv_py.models.field_results import read_fields
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.metrics import field_accuracy_counts

ITEMS = {
    "path": "line_items",
    "match": "items",
    "key": ["description"],
    "threshold": 0.8,
    "fields": [{"path": "quantity", "match": "numeric_tolerance", "tolerance": 0}, {"path": "description"}],
}
TRUTH = {
    "line_items": [
        {"description": "Widget", "quantity": 2},
        {"description": "Gadget", "quantity": 1},
        {"description": "Service fee", "quantity": 1},
    ]
}


def config(**options: Any) -> FieldAccuracyConfig:
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [{**ITEMS, **options}]})


def run(cfg: FieldAccuracyConfig, answer: Any, expected: Any = TRUTH):
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return run_evaluator(cfg, EvalContext("c1", "ds", Path("."), text, expected))


def counts(result) -> tuple[int, int, int, int]:
    return field_accuracy_counts(result.details)["line_items"].as_tuple()


W, G, F = TRUTH["line_items"]
# (id, answer's line_items, score, miss (None: hit), (tp, tn, fp, fn))
CASES = [
    ("reordered", [F, W, G], 1.0, None, (3, 0, 0, 0)),
    (
        "one-missing-one-extra",
        [G, {"description": "Shipping", "quantity": 1}, W],
        2 / 3,
        "line_items (2 of 3 items matched; 1 missing, 1 extra)",
        (2, 0, 1, 1),
    ),
    (
        "null-and-string-entries-are-extra",
        [W, None, G, "Service fee", F],
        3 / 5,
        "line_items (3 of 3 items matched; 0 missing, 2 extra)",
        (3, 0, 2, 0),
    ),
    (
        "wrong-quantity",
        [W, G, {"description": "Service fee", "quantity": 4}],
        2.5 / 3,
        "line_items (3 of 3 items matched; 0 missing, 0 extra, 1 with wrong fields; first: [2].quantity "
        "(outside tolerance: diff=3.00, tolerance=0))",
        (2, 0, 1, 1),
    ),
    ("empty-list", [], 0.0, "line_items (0 of 3 items matched; 3 missing, 0 extra)", (0, 0, 0, 3)),
    (
        "not-a-list",
        "Widget, Gadget",
        0.0,
        "line_items (answer is string, not a list; 0 of 3 items matched; 3 missing, 0 extra)",
        (0, 0, 0, 3),
    ),
    (
        "object-not-list",
        {"description": "Widget", "quantity": 2},
        0.0,
        "line_items (answer is object, not a list; 0 of 3 items matched; 3 missing, 0 extra)",
        (0, 0, 0, 3),
    ),
    ("null", None, 0.0, "line_items (null value)", (0, 0, 0, 3)),
]


@pytest.mark.parametrize("items, score, miss, tp_tn_fp_fn", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_items_scoring(items, score, miss, tp_tn_fp_fn):
    result = run(config(), {"line_items": items})
    assert result.status == "processed"
    assert result.score == pytest.approx(score)
    assert result.misses == ([] if miss is None else [miss])
    assert counts(result) == tp_tn_fp_fn


def test_missing_list_misses_every_item():
    result = run(config(), {"other": 1})
    assert result.misses == ["line_items (required, missing)"]  # an items miss never quotes the lists
    assert counts(result) == (0, 0, 0, 3)


def test_details_record_the_alignment():
    result = run(config(), {"line_items": [None, F, {"description": "widget", "quantity": 3}]})
    row = result.details["fields"][0]
    assert row["items"] == {
        "expected": 3,
        "actual": 3,
        "matched": 2,
        "correct": 1,
        "wrong": 1,
        "missing": 1,
        "extra": 1,
    }
    alignment = row["alignment"]
    assert {k: alignment[k] for k in ("key", "threshold", "algorithm", "missing", "extra", "junk", "truncated")} == {
        "key": ["description"],
        "threshold": 0.8,
        "algorithm": "optimal",
        "missing": [1],
        "extra": [0],
        "junk": [0],
        "truncated": False,
    }
    pairs = [(p["expected"], p["actual"], p["similarity"], p["status"], p["score"]) for p in alignment["pairs"]]
    assert pairs == [(0, 2, 1.0, "miss", 0.0), (2, 1, 1.0, "hit", 1.0)]
    assert [(f["path"], f["status"]) for f in alignment["pairs"][0]["fields"]] == [
        ("quantity", "miss"),
        ("description", "miss"),  # exact match is case-sensitive; the key similarity is not
    ]


def test_both_empty_lists_hit():
    result = run(config(), {"line_items": []}, {"line_items": []})
    assert (result.score, result.misses, counts(result)) == (1.0, [], (0, 1, 0, 0))


@pytest.mark.parametrize("algorithm", ["optimal", "greedy"])
def test_a_thousand_shuffled_items_each_side(algorithm):
    expected = [{"description": f"item number {n:04d}", "quantity": n % 7} for n in range(1000)]
    answer = [dict(item) for item in expected]
    random.Random(14).shuffle(answer)
    answer[10]["quantity"] = 99  # one wrong sub-field
    result = run(config(algorithm=algorithm), {"line_items": answer}, {"line_items": expected})
    row = result.details["fields"][0]
    assert row["items"] == {
        "expected": 1000,
        "actual": 1000,
        "matched": 1000,
        "correct": 999,
        "wrong": 1,
        "missing": 0,
        "extra": 0,
    }
    assert len(row["alignment"]["pairs"]) == 100 and row["alignment"]["truncated"] is True
    assert result.score == pytest.approx(999.5 / 1000)
    assert counts(result) == (999, 0, 1, 1)


def test_thousand_junk_entries_against_thousand_items():
    expected = [{"description": f"item {n}", "quantity": 1} for n in range(1000)]
    result = run(config(), {"line_items": [None] * 500 + ["item 1"] * 500}, {"line_items": expected})
    assert result.misses == ["line_items (0 of 1000 items matched; 1000 missing, 1000 extra)"]
    assert result.score == 0.0 and counts(result) == (0, 0, 1000, 1000)


def test_duplicate_keys_each_pair_once():
    truth = {"line_items": [{"description": "Widget", "quantity": 1}, {"description": "Widget", "quantity": 1}]}
    answer = {"line_items": [{"description": "Widget", "quantity": 1}] * 3}
    result = run(config(), answer, truth)
    assert result.misses == ["line_items (2 of 2 items matched; 0 missing, 1 extra)"]
    assert result.score == pytest.approx(2 / 3)


# (id, expected line_items, error message)
BAD_TRUTH = [
    ("null-item", [W, None], "case 'c1', field 'line_items': cannot score: expected item 1 is null, not an object"),
    (
        "bad-sub-field",
        [W, {"description": "Gadget", "quantity": "lots"}],
        "case 'c1', field 'line_items[1].quantity': cannot score: expected value is not numeric: string 'lots'",
    ),
]


@pytest.mark.parametrize("truth, message", [c[1:] for c in BAD_TRUTH], ids=[c[0] for c in BAD_TRUTH])
def test_unusable_ground_truth_is_an_error_not_a_miss(truth, message):
    result = run(config(), {"line_items": [W]}, {"line_items": truth})
    assert result.status == "error" and result.score == 0.0
    assert result.misses == [message] and result.reasoning == message
    assert field_accuracy_counts(result.details) == {}  # could not score: counts nothing


@pytest.mark.parametrize("truth, kind", [({"description": "Widget"}, "object"), ("Widget", "string")], ids=str)
def test_ground_truth_of_another_type_fails_its_field_not_the_evaluator(truth, kind):
    result = run(config(), {"line_items": [W]}, {"line_items": truth})
    reason = f"expected value for match 'items' is {kind}, not a list of objects"
    assert result.status == "processed" and result.verdict == "fail" and result.score == 0.0
    assert result.misses == [f"could not score: line_items ({reason})"]
    assert [(f.status, f.reason) for f in read_fields(result.details)] == [("could not score", reason)]


HEAD = "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
# (id, field line, problems)
BAD_CONFIG = [
    (
        "fields-missing",
        "        - {path: line_items, match: items, key: [description]}",
        "dataset.yaml:5: execution.evaluators[0].fields[0]: match 'items' needs 'fields': the sub-fields scored in "
        "each matched item, e.g. [{path: quantity, match: numeric_tolerance, tolerance: 0}]",
    ),
    (
        "empty-key",
        "        - {path: line_items, match: items, key: [], fields: [{path: quantity}]}",
        "dataset.yaml:5: execution.evaluators[0].fields[0].key: key must list at least one sub-path (omit it for the "
        "default [description])",
    ),
    (
        "empty-fields",
        "        - {path: line_items, match: items, fields: []}",
        "dataset.yaml:5: execution.evaluators[0].fields[0].fields: fields must list at least one sub-field",
    ),
    (
        "fuzzy-algorithm",
        "        - {path: line_items, match: items, algorithm: levenshtein, fields: [{path: q}]}",
        "dataset.yaml:5: execution.evaluators[0].fields[0].algorithm: Invalid algorithm: levenshtein. "
        "Valid algorithms: optimal, greedy",
    ),
    (
        "nested-items",
        "        - {path: a, match: items, fields: [{path: b, match: items, fields: [{path: c}]}]}",
        "dataset.yaml:5: execution.evaluators[0].fields[0].fields: nested match 'items' (at 'b') is not supported: "
        "score the inner list with a code judge",
    ),
    (
        "key-on-fuzzy",
        "        - {path: a, match: fuzzy, key: [description]}",
        "dataset.yaml:5: execution.evaluators[0].fields[0]: option 'key' does not apply to match 'fuzzy' "
        "(options for 'fuzzy': algorithm, threshold, case_sensitive)",
    ),
]


@pytest.mark.parametrize("line, problem", [c[1:] for c in BAD_CONFIG], ids=[c[0] for c in BAD_CONFIG])
def test_config_errors_are_located(ws, line, problem):
    ws.file("dataset.yaml", HEAD + line + "\nevalcases:\n  - id: c1\n")
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert [str(p) for p in caught.value.problems] == [problem]


def test_items_defaults_follow_spec():
    spec = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "fields": [{"path": "line_items", "match": "items", "fields": [{"path": "q"}]}]}
    ).fields[0]
    assert (spec.key, spec.threshold, spec.algorithm) == (["description"], 0.8, "optimal")
