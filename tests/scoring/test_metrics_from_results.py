"""Per-field counts straight from evaluator results (SPEC §5): field_accuracy fields, iou_score
detections and judges' details.metrics, kept apart per (evaluator, field)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.base import processed_result
from agentv_py.evaluators.field_accuracy import score_fields
from agentv_py.models.evaluators import CompositeConfig, IouScoreConfig
from agentv_py.models.field_results import to_details
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.metrics import Counts, field_accuracy_counts, field_labels, iou_counts, row_field_counts
from agentv_py.scoring.paths import MISSING

EXACT: dict[str, Any] = {"match": "exact"}
TOLERANCE: dict[str, Any] = {"match": "numeric_tolerance", "tolerance": 1}
OPTIONAL: dict[str, Any] = {"match": "exact", "required": False}
DATE: dict[str, Any] = {"match": "date"}

# (id, field options, expected value, answer value, (tp, tn, fp, fn)); MISSING = key absent.
FIELD_ACCURACY = [
    ("hit-tp", EXACT, "INV-1", "INV-1", (1, 0, 0, 0)),
    ("within-tolerance-is-tp", TOLERANCE, 12, 12.5, (1, 0, 0, 0)),
    ("wrong-value-fp-and-fn", EXACT, "INV-1", "INV-2", (0, 0, 1, 1)),
    ("outside-tolerance-fp-and-fn", TOLERANCE, 12, 14, (0, 0, 1, 1)),
    ("required-missing-fn", EXACT, "INV-1", MISSING, (0, 0, 0, 1)),
    ("optional-missing-still-fn", OPTIONAL, "INV-1", MISSING, (0, 0, 0, 1)),
    ("null-answer-fn", EXACT, "INV-1", None, (0, 0, 0, 1)),
    ("blank-answer-fn", EXACT, "INV-1", "  ", (0, 0, 0, 1)),
    ("expected-absent-answer-given-fp", EXACT, MISSING, "PO-7", (0, 0, 1, 0)),
    ("expected-null-answer-given-fp", EXACT, None, "PO-7", (0, 0, 1, 0)),
    ("expected-blank-answer-given-fp", EXACT, "", "PO-7", (0, 0, 1, 0)),
    ("expected-null-answer-null-tn", EXACT, None, None, (0, 1, 0, 0)),
    ("expected-blank-answer-blank-tn", EXACT, "", " ", (0, 1, 0, 0)),
    ("both-absent-tn", EXACT, MISSING, MISSING, (0, 1, 0, 0)),
    ("zero-is-a-value-tp", EXACT, 0, 0, (1, 0, 0, 0)),
]


def as_doc(value: Any) -> dict[str, Any]:
    return {} if value is MISSING else {"f": value}


@pytest.mark.parametrize(
    "options, expected, answer, counts", [c[1:] for c in FIELD_ACCURACY], ids=[c[0] for c in FIELD_ACCURACY]
)
def test_field_accuracy_counts_follow_the_confusion_rules(options, expected, answer, counts):
    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [{"path": "f", **options}]})
    scored = score_fields(config, as_doc(answer), as_doc(expected))["fields"]
    details = {"fields": json.loads(json.dumps([to_details(field) for field in scored]))}  # as a row holds them
    assert field_accuracy_counts(details) == {"f": Counts(*counts)}


def test_a_field_whose_truth_is_unusable_counts_nothing():
    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [{"path": "d", **DATE}]})
    details = {"fields": score_fields(config, {"d": "2025-01-01"}, {"d": "soon"})["fields"]}
    assert details["fields"][0].status == "could not score" and field_accuracy_counts(details) == {}


@pytest.mark.parametrize(
    "details",
    [{}, {"fields": "x"}, {"fields": [1, None, {"path": 3, "status": "hit"}, {"path": "f", "status": "odd"}]}],
    ids=["no-fields", "fields-not-a-list", "junk-entries"],
)
def test_malformed_details_count_nothing(details):
    assert field_accuracy_counts(details) == {}


def test_an_answer_that_is_not_json_counts_every_expected_field_fn():
    config = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "fields": [{"path": "a"}, {"path": "b"}, {"path": "c"}]}
    )
    result = run_evaluator(config, EvalContext("c", "d", Path("."), "I could not read it.", {"a": 1, "b": None}))
    assert result.score == 0.0
    assert field_accuracy_counts(result.details) == {"a": Counts(fn=1), "b": Counts(tn=1), "c": Counts(tn=1)}


IOU = [
    ("list-counts", {"tp": 1, "fp": 2, "fn": 1, "pairs": []}, Counts(tp=1, fp=2, fn=1)),
    ("single-box-over-threshold-tp", {"iou": 0.7, "threshold": 0.5}, Counts(tp=1)),
    ("single-box-at-threshold-tp", {"iou": 0.5, "threshold": 0.5}, Counts(tp=1)),
    ("single-box-under-threshold-fp-and-fn", {"iou": 0.2, "threshold": 0.5}, Counts(fp=1, fn=1)),
    ("nothing-recorded", {}, None),
    ("negative-count-ignored", {"tp": -1, "fp": 0, "fn": 0}, None),
]


@pytest.mark.parametrize("details, counts", [c[1:] for c in IOU], ids=[c[0] for c in IOU])
def test_iou_counts(details, counts):
    assert iou_counts(details) == counts


def test_iou_score_result_pairs_at_the_threshold():
    config = IouScoreConfig.model_validate({"type": "iou_score", "name": "boxes", "path": "boxes"})
    answer = json.dumps({"boxes": [[0, 0, 2, 2], [5, 5, 6, 6], [9, 9, 10, 10]]})
    result = run_evaluator(config, EvalContext("c", "d", Path("."), answer, {"boxes": [[0, 0, 2, 2], [5, 5, 7, 7]]}))
    assert row_field_counts([result]) == {("boxes", "boxes"): Counts(tp=1, fp=2, fn=1)}


def fields_result(name: str, answer: dict[str, Any], expected: dict[str, Any]):
    config = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "name": name, "fields": [{"path": k} for k in expected]}
    )
    return run_evaluator(config, EvalContext("c", "d", Path("."), json.dumps(answer), expected))


def test_judge_metrics_and_field_accuracy_on_the_same_field_stay_apart():
    judge = processed_result(
        name="header", type="code_judge", score=1.0, details={"metrics": {"total": {"tp": 1}, "bad": {"tp": "x"}}}
    )
    problems: list[str] = []
    counts = row_field_counts([judge, fields_result("fields", {"total": 5}, {"total": 6})], problems)
    assert counts == {("header", "total"): Counts(tp=1), ("fields", "total"): Counts(fp=1, fn=1)}
    assert problems == ["header: details.metrics.bad: 'tp' must be a whole number >= 0, got 'x'"]
    assert field_labels(counts) == {("header", "total"): "header/total", ("fields", "total"): "fields/total"}


def test_composite_members_are_counted():
    config = CompositeConfig.model_validate(
        {
            "type": "composite",
            "name": "all",
            "aggregator": {"type": "weighted_average"},
            "evaluators": [{"type": "field_accuracy", "name": "inner", "fields": [{"path": "a"}, {"path": "b"}]}],
        }
    )
    result = run_evaluator(config, EvalContext("c", "d", Path("."), '{"a": 1}', {"a": 1, "b": 2}))
    assert row_field_counts([result]) == {("inner", "a"): Counts(tp=1), ("inner", "b"): Counts(fn=1)}


LABELS = [
    ("one-owner-bare", [("e", "a"), ("e", "b")], ["a", "b"]),
    ("two-owners-prefixed", [("e", "a"), ("j", "a"), ("j", "b")], ["e/a", "j/a", "b"]),
    ("no-keys", [], []),
]


@pytest.mark.parametrize("keys, labels", [c[1:] for c in LABELS], ids=[c[0] for c in LABELS])
def test_field_labels(keys, labels):
    assert list(field_labels(keys).values()) == labels
