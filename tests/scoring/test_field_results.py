"""The typed outcomes of field_accuracy and the geometry evaluators: what they write is the row
format as documented (same keys, a key with nothing to say left out), rows written before the
models existed read back the same, and one entry that does not fit is left out alone."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.field_results import (
    DetectionDetails,
    FieldOutcome,
    read_detection,
    read_field,
    read_fields,
    to_details,
)
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.metrics import field_accuracy_counts, iou_counts, walk_fields
from agentv_py.scoring.taxonomy import row_taxonomy

FIELDS = [
    {"path": "number"},
    {"path": "total", "match": "numeric_tolerance", "tolerance": 0.01, "critical": True},
    {"path": "vendor", "match": "fuzzy", "threshold": 0.9},
    {"path": "date", "match": "date"},
    {"path": "po", "required": False},
    {"path": "note"},
    {"path": "lines", "match": "items", "key": ["d"], "fields": [{"path": "d"}, {"path": "q"}]},
]
TRUTH = {
    "number": "INV-1",
    "total": 10.0,
    "vendor": "Acme Ltd",
    "date": "2025-01-15",
    "po": "PO-9",
    "lines": [{"d": "a", "q": 1}, {"d": "b", "q": 2}],
}
ANSWER = {"number": "INV-2", "total": 10.0, "vendor": "acme  ltd", "date": "2025-01-15", "lines": [{"d": "a", "q": 1}]}


def field_result(answer: Any = ANSWER) -> dict[str, Any]:
    import json

    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "name": "fa", "fields": FIELDS})
    context = EvalContext("c1", "d", ".", json.dumps(answer), TRUTH)
    return run_evaluator(config, context).model_dump()


def test_the_written_keys_are_the_documented_ones():
    """SPEC's `details.fields` entries: path, match, expected, actual (absent: nothing at the
    path), weight, status, score, reason on what did not hit, critical only when set, and the
    matcher's notes."""
    written = {entry["path"]: set(entry) for entry in field_result()["details"]["fields"]}
    base = {"path", "match", "expected", "weight", "status", "score"}
    assert written == {
        "number": base | {"actual", "reason"},
        "total": base | {"actual", "critical", "diff", "tolerance", "relative"},
        "vendor": base | {"actual", "similarity", "threshold", "algorithm"},
        "date": base | {"actual", "parsed", "expected_date"},
        "po": base | {"reason"},  # optional and missing: no `actual`
        "note": base | {"reason"},  # no expected value
        "lines": base | {"actual", "reason", "items", "alignment"},
    }
    lines = next(e for e in field_result()["details"]["fields"] if e["path"] == "lines")
    assert set(lines["items"]) == {"expected", "actual", "matched", "correct", "wrong", "missing", "extra"}
    assert set(lines["alignment"]) == {
        "key",
        "threshold",
        "algorithm",
        "pairs",
        "missing",
        "extra",
        "junk",
        "truncated",
    }
    assert set(lines["alignment"]["pairs"][0]) == {"expected", "actual", "similarity", "status", "score", "fields"}


def test_what_is_written_reads_back_the_same():
    details = field_result()["details"]
    read = read_fields(details)
    assert [to_details(field) for field in read] == details["fields"]
    assert [field.answered for field in read] == [True, True, True, True, False, False, True]


OLD_ROW_FIELDS = [  # as a results file of an earlier version holds them (before the models)
    {"path": "total", "match": "numeric_tolerance", "expected": 10, "actual": 12, "weight": 1, "status": "miss"}
    | {"score": 0.0, "reason": "outside tolerance: diff=2.00, tolerance=0.01", "diff": 2, "tolerance": 0.01}
    | {"relative": False},
    {"path": "number", "expected": "INV-1", "status": "miss", "score": 0.0, "reason": "required, missing"},
    {"path": "po", "expected": None, "actual": "PO-1", "status": "not scored", "score": None},
    {"path": "lines", "match": "items", "expected": [{"d": "a"}], "actual": [], "status": "miss", "score": 0.0}
    | {"items": {"expected": 1, "actual": 0, "matched": 0, "correct": 0, "wrong": 0, "missing": 1, "extra": 0}}
    | {"alignment": {"pairs": [], "missing": [0], "extra": []}, "a_note_of_another_version": 1},
]


def test_a_row_of_an_earlier_version_reads_into_the_models():
    read = read_fields({"fields": OLD_ROW_FIELDS})
    assert [(f.path, f.status, f.answered) for f in read] == [
        ("total", "miss", True),
        ("number", "miss", False),
        ("po", "not scored", True),
        ("lines", "miss", True),
    ]
    assert read[3].items is not None and read[3].items.missing == 1 and read[3].alignment is not None
    assert "a_note_of_another_version" not in to_details(read[3])  # read as the model names it
    counts = field_accuracy_counts({"fields": OLD_ROW_FIELDS})
    assert {path: (c.tp, c.tn, c.fp, c.fn) for path, c in counts.items()} == {
        "total": (0, 0, 1, 1),
        "number": (0, 0, 0, 1),
        "po": (0, 0, 1, 0),
        "lines": (0, 0, 0, 1),
    }


@pytest.mark.parametrize(
    "bad",
    [
        7,
        "junk",
        None,
        {"status": "miss"},  # no path
        {"path": 3, "status": "hit"},
        {"path": "x", "status": "great"},
        {"path": "x", "status": "miss", "items": {"missing": -1}},
        {"path": "x", "status": "miss", "weight": "heavy"},
    ],
    ids=["int", "string", "null", "no-path", "path-not-text", "unknown-status", "bad-counts", "bad-weight"],
)
def test_an_entry_that_does_not_fit_is_left_out_alone(bad):
    good = {"path": "ok", "status": "hit", "expected": 1, "actual": 1, "score": 1.0}
    assert read_field(bad) is None
    assert [f.path for f in read_fields({"fields": [good, bad, good | {"path": "ok2"}]})] == ["ok", "ok2"]
    results = [{"name": "fa", "type": "field_accuracy", "details": {"fields": [bad, good]}}]
    assert [(name, f.path) for name, f in walk_fields(results)] == [("fa", "ok")]
    assert row_taxonomy(results) == {}


def test_no_fields_list_reads_as_none():
    for details in ({}, {"fields": "x"}, {"fields": {"path": "a"}}):
        assert read_fields(details) == []


def test_a_field_is_typed_for_its_readers():
    field = FieldOutcome(path="a", status="miss", expected=1, score=0.0)
    assert not field.answered and not field.is_items
    assert to_details(field) == {"path": "a", "status": "miss", "expected": 1, "score": 0.0}


def geometry(config: Any, answer: Any, truth: Any) -> dict[str, Any]:
    import json

    return run_evaluator(config, EvalContext("c1", "d", ".", json.dumps(answer), truth)).model_dump()["details"]


def test_geometry_details_are_the_documented_keys_and_read_back():
    iou = IouScoreConfig.model_validate({"type": "iou_score", "threshold": 0.5})
    boxes = geometry(iou, [[0, 0, 10, 10], [50, 50, 60, 60]], [[0, 0, 10, 10]])
    assert set(boxes) == {"pairs", "tp", "fp", "fn", "precision", "recall", "f1", "mean_iou_matched"} | {
        "threshold",
        "matching",
        "drawn",
    }
    assert set(boxes["pairs"][0]) == {"expected", "candidate", "iou"}
    typed = read_detection(boxes)
    assert typed is not None and (typed.tp, typed.fp, typed.fn) == (1, 1, 0)
    assert iou_counts(boxes) is not None and to_details(typed) == boxes
    one = geometry(iou, [0, 0, 10, 10], [0, 0, 10, 10])
    assert set(one) == {"iou", "threshold", "format", "expected_format", "drawn"}
    points = CoordinateDistanceConfig.model_validate({"type": "coordinate_distance", "threshold": 1.0})
    found = geometry(points, [[0, 0], [5, 5]], [[0, 0]])
    assert set(found) == {"pairs", "within", "threshold", "metric", "matching", "drawn"}
    assert set(found["pairs"][0]) == {"expected", "candidate", "distance"}
    assert read_detection({"tp": -1}) is None and read_detection({"tp": 1, "fp": 0, "fn": 0}) == DetectionDetails(
        tp=1, fp=0, fn=0
    )
