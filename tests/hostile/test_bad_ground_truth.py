"""Bad ground truth is "could not score", never a wrong answer (issue 11, point 11): a non-numeric
expected value for numeric_tolerance, an unparseable expected date, a non-string for fuzzy and an
invalid expected shape or point (alone or in a list) are evaluator errors naming the case and the
field, whatever the target answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.session import run_eval


def evaluate(config, answer, expected, eval_id: str = "inv-7"):
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return run_evaluator(config, EvalContext(eval_id, "d", Path("."), text, expected))


def fields(*specs: dict) -> FieldAccuracyConfig:
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": list(specs)})


BAD_FIELDS = [
    (
        "numeric-tolerance-with-text",
        {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
        {"total": "about five"},
        "case 'inv-7', field 'total': cannot score: expected value is not numeric: string 'about five'",
    ),
    (
        "numeric-tolerance-with-nan-text",
        {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
        {"total": "NaN"},
        "case 'inv-7', field 'total': cannot score: expected value is not a finite number ('NaN')",
    ),
    (
        "unparseable-date",
        {"path": "due", "match": "date"},
        {"due": "2025-13-45"},
        "case 'inv-7', field 'due': cannot score: unparseable expected date: '2025-13-45'",
    ),
    (
        "nested-path",
        {"path": "lines[1].amount", "match": "numeric_tolerance", "tolerance": 0},
        {"lines": [{"amount": 1}, {"amount": "n/a"}]},
        "case 'inv-7', field 'lines[1].amount': cannot score: expected value is not numeric: string 'n/a'",
    ),
]


# (id, field, expected, the field's reason): a value of a JSON type the matcher never reads, as
# when a value's type varies between documents (issue 27, point 3): that field, not the evaluator
WRONG_TYPE = [
    (
        "numeric-tolerance-with-a-boolean",
        {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
        {"total": True},
        "expected value is not numeric: boolean",
    ),
    (
        "numeric-tolerance-with-an-object",
        {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
        {"total": {"amount": 5}},
        "expected value is not numeric: object",
    ),
    (
        "date-that-is-a-number",
        {"path": "due", "match": "date"},
        {"due": 20250115},
        "unparseable expected date: 20250115",
    ),
    (
        "fuzzy-with-a-number",
        {"path": "vendor", "match": "fuzzy"},
        {"vendor": 42},
        "fuzzy match needs strings, expected value is number",
    ),
]


@pytest.mark.parametrize("spec, expected, reason", [c[1:] for c in WRONG_TYPE], ids=[c[0] for c in WRONG_TYPE])
@pytest.mark.parametrize("answer", ["not json at all", {}, {"total": 5, "due": "2025-01-15", "vendor": "Acme"}])
def test_expected_value_of_another_type_fails_its_field_whatever_the_answer(spec, expected, reason, answer):
    result = evaluate(fields(spec, {"path": "id"}), answer, {**expected, "id": 1})
    assert result.status == "processed" and result.score == 0.0 and result.verdict == "fail"
    field = result.details["fields"][0]
    assert (field["path"], field["status"], field["reason"]) == (spec["path"], "could not score", reason)
    if answer != "not json at all":
        assert result.misses[0] == f"could not score: {spec['path']} ({reason})"


@pytest.mark.parametrize("spec, expected, message", [c[1:] for c in BAD_FIELDS], ids=[c[0] for c in BAD_FIELDS])
@pytest.mark.parametrize("answer", ["not json at all", {}, {"total": 5, "due": "2025-01-15", "vendor": "Acme"}])
def test_bad_expected_field_is_an_evaluator_error_whatever_the_answer(spec, expected, message, answer):
    result = evaluate(fields(spec, {"path": "id"}), answer, {**expected, "id": 1})
    assert result.status == "error" and result.score == 0.0 and result.verdict == "fail"
    assert result.reasoning == message and result.misses == [message]


def test_every_bad_field_is_named_once_in_one_message():
    config = fields(
        {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
        {"path": "due", "match": "date"},
        {"path": "ok"},
    )
    result = evaluate(config, {"total": 5, "due": "x", "ok": 1}, {"total": "five", "due": "someday", "ok": 1})
    assert result.reasoning == (
        "case 'inv-7', field 'total': cannot score: expected value is not numeric: string 'five'; "
        "case 'inv-7', field 'due': cannot score: unparseable expected date: 'someday'"
    )
    statuses = [(f["path"], f["status"]) for f in result.details["fields"]]
    assert statuses == [("total", "could not score"), ("due", "could not score"), ("ok", "hit")]


def test_usable_ground_truth_still_scores_the_answer():
    config = fields({"path": "total", "match": "numeric_tolerance", "tolerance": 1}, {"path": "due", "match": "date"})
    good = evaluate(config, {"total": "4.5", "due": "15-Jan-2025"}, {"total": "5", "due": "2025-01-15"})
    assert (good.status, good.score) == ("processed", 1.0)
    wrong = evaluate(config, {"total": "lots", "due": "someday"}, {"total": 5, "due": "2025-01-15"})
    assert (wrong.status, wrong.misses) == (
        "processed",
        [
            "total (non-numeric value)",
            "due (unparseable date)",
        ],
    )


def test_an_expected_null_asks_for_a_null_whatever_the_matcher():
    config = fields({"path": "due", "match": "date"}, {"path": "total", "match": "numeric_tolerance", "tolerance": 1})
    both = evaluate(config, {"due": None, "total": None}, {"due": None, "total": None})
    assert (both.status, both.score) == ("processed", 1.0)
    wrong = evaluate(config, {"due": "2025-01-15", "total": 5}, {"due": None, "total": None})
    assert wrong.misses == [
        "due (type mismatch: got string, expected null)",
        "total (type mismatch: got number, expected null)",
    ]


# ----------------------------------------------------------------------------- shapes and points


def iou(**kw) -> IouScoreConfig:
    return IouScoreConfig.model_validate({"type": "iou_score", **kw})


def dist(**kw) -> CoordinateDistanceConfig:
    return CoordinateDistanceConfig.model_validate({"type": "coordinate_distance", "threshold": 5, **kw})


SHAPES = [
    (
        "single-box",
        iou(path="box"),
        {"box": [5, 5, 0, 0]},
        "case 'inv-7', field 'box': cannot score: invalid expected box: x2 < x1 in [5, 5, 0, 0]",
    ),
    (
        "box-in-a-list",
        iou(path="box"),
        {"box": [[0, 0, 1, 1], [5, 5, 0, 0]]},
        "case 'inv-7', field 'box[1]': cannot score: invalid expected box: x2 < x1 in [5, 5, 0, 0]",
    ),
    (
        "expected-path",
        iou(path="det", expected_path="truth.box", format="xywh"),
        {"truth": {"box": [0, 0, -1, 1]}},
        "case 'inv-7', field 'truth.box': cannot score: invalid expected box: "
        "negative width or height in [0, 0, -1, 1]",
    ),
    (
        "polygon-in-a-list",
        iou(path="box", format="polygon"),
        {"box": [[[0, 0], [1, 0], [0, 1]], [[0, 0], [1, 1]]]},
        "case 'inv-7', field 'box[1]': cannot score: invalid expected polygon: "
        "a polygon needs at least 3 [x, y] points",
    ),
    (
        "whole-ground-truth",
        iou(),
        "a box",
        "case 'inv-7', field 'expected_output': cannot score: invalid expected box: a xyxy box needs 4 numbers, "
        "got a str",
    ),
    (
        "single-point",
        dist(path="box"),
        {"box": [1, True]},
        "case 'inv-7', field 'box': cannot score: invalid expected point: point [1, True] has a non-numeric or "
        "non-finite coordinate",
    ),
    (
        "point-in-a-list",
        dist(path="box"),
        {"box": [[1, 2], "here"]},
        "case 'inv-7', field 'box[1]': cannot score: invalid expected point: a point is a list of numbers, got str",
    ),
]


@pytest.mark.parametrize("config, expected, message", [c[1:] for c in SHAPES], ids=[c[0] for c in SHAPES])
@pytest.mark.parametrize("answer", ["not json", {"box": [0, 0, 1, 1], "det": [0, 0, 1, 1]}, [0, 0, 1, 1], {}])
def test_an_invalid_expected_shape_is_an_evaluator_error_alone_or_in_a_list(config, expected, message, answer):
    result = evaluate(config, answer, expected)
    assert result.status == "error" and result.reasoning == message and result.misses == [message]


def test_an_invalid_box_in_the_answer_is_still_the_answers_miss():
    result = evaluate(iou(path="box"), {"box": [5, 5, 0, 0]}, {"box": [0, 0, 1, 1]})
    assert result.status == "processed" and result.misses == ["box (invalid box: x2 < x1 in [5, 5, 0, 0])"]


# ----------------------------------------------------------------------------- a whole run


def test_a_run_reports_bad_ground_truth_as_an_evaluator_error(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(
        [("good", {"a": 5, "b": 2}, {"a": 5, "b": 2}), ("typo", {"a": 5, "b": 2}, {"a": "5 EUR", "b": 2})],
        fields="[{path: a, match: numeric_tolerance, tolerance: 0.5}, {path: b}]",
    )
    result = run_eval("dataset.yaml", out="out.jsonl")
    good, typo = result.rows
    assert good.evaluator_results[0].status == "processed"
    [evaluator] = typo.evaluator_results
    assert evaluator.status == "error"
    assert evaluator.reasoning == "case 'typo', field 'a': cannot score: expected value is not numeric: string '5 EUR'"
