"""Numbers never poison a row (issue 11, point 10): an answer holding 1e309 or a huge integer is
still read and only its field misses, with a clear reason; matchers and geometry never overflow
into an exception or NaN; every processed score is finite and in [0, 1]."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.answer import parse_answer_json
from agentv_py.scoring.geometry import Shape, distance, iou, parse_shape
from agentv_py.scoring.jsontext import OutOfRangeNumber, dumps
from agentv_py.scoring.match import match_exact, match_fuzzy, match_numeric
from agentv_py.session import run_eval

HUGE_INT = "9" * 5000  # over Python's 4300-digit int-string limit
BIG_INT = 10**400  # within the limit, beyond the double range


def fields(*specs: dict) -> FieldAccuracyConfig:
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": list(specs)})


def evaluate(config, answer: str, expected, eval_id: str = "c1"):
    return run_evaluator(config, EvalContext(eval_id, "d", Path("."), answer, expected))


# ----------------------------------------------------------------------------- parsing


def test_an_answer_with_1e309_and_a_5000_digit_integer_still_parses():
    value = parse_answer_json('{"a": 1e309, "b": -2.5E+400, "c": ' + HUGE_INT + ', "d": 7}')
    assert value == {"a": "1e309", "b": "-2.5E+400", "c": HUGE_INT, "d": 7}
    assert all(isinstance(value[k], OutOfRangeNumber) for k in "abc")
    assert dumps(value).startswith('{"a":"1e309","b":"-2.5E+400","c":"999')  # written as its text


def test_only_the_affected_fields_miss_with_a_clear_reason():
    config = fields(
        {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
        {"path": "count", "match": "exact"},
        {"path": "name", "match": "fuzzy"},
        {"path": "ok"},
    )
    answer = '{"total": 1e309, "count": ' + HUGE_INT + ', "name": 1e999, "ok": 1}'
    result = evaluate(config, answer, {"total": 5, "count": 3, "name": "Acme", "ok": 1})
    assert result.status == "processed" and result.score == pytest.approx(0.25)
    assert result.misses == [
        "total (number beyond the double range (1e309))",
        "count (number beyond the double range (999999999999...(5000 digits)))",
        "name (type mismatch: got number, expected string)",
    ]
    assert result.hits == ["ok"]
    json.dumps(result.model_dump())  # the row is writable


NUMERIC = [
    ("big-ints-within", BIG_INT, BIG_INT + 1, 1, False, True, None),
    ("big-ints-outside", BIG_INT + 5, BIG_INT, 1, False, False, "outside tolerance: diff=5.00, tolerance=1"),
    (
        "big-int-vs-float",
        2.0,
        BIG_INT,
        0.5,
        True,
        False,
        "outside tolerance: relative diff=1.0000, tolerance=0.5",  # exact: |2 - e| / |e| rounds to 1
    ),
    ("big-relative-within", BIG_INT + 10**398, BIG_INT, 0.05, True, True, None),
    (
        "int-over-the-str-limit",
        10**5000,
        3,
        1,
        False,
        False,
        "outside tolerance: diff=an integer of about 5001 digits, tolerance=1",
    ),
    (
        "difference-overflows",
        1e308,
        -1e308,
        1,
        False,
        False,
        "outside tolerance: diff beyond the double range, tolerance=1",
    ),
    ("out-of-range-literal", OutOfRangeNumber("1e309"), 5, 1, False, False, "number beyond the double range (1e309)"),
    ("out-of-range-string", "1e999", 5, 1, False, False, "number beyond the double range ('1e999')"),
    ("infinity-string", "-Infinity", 5, 1, False, False, "invalid numeric value"),
]


@pytest.mark.parametrize(
    "candidate, expected, tolerance, relative, passed, reason", [c[1:] for c in NUMERIC], ids=[c[0] for c in NUMERIC]
)
def test_numeric_tolerance_with_huge_numbers(candidate, expected, tolerance, relative, passed, reason):
    result = match_numeric(candidate, expected, tolerance, relative)
    assert (result.passed, result.reason) == (passed, reason)
    assert result.score in (0.0, 1.0)


def test_exact_and_fuzzy_with_huge_numbers():
    assert match_exact(10**5000, 10**5000).passed
    assert match_exact(10**5000, 10**5000 + 1).reason == "value mismatch"
    assert match_exact(OutOfRangeNumber("1e309"), 1).reason == "number beyond the double range (1e309)"
    assert match_exact(OutOfRangeNumber("1e309"), "1e309").reason == "type mismatch: got number, expected string"
    assert match_fuzzy(10**5000, "x").reason == "type mismatch: got number, expected string"
    assert match_fuzzy(OutOfRangeNumber("1e309"), "1e309").reason == "type mismatch: got number, expected string"


def test_deeply_nested_answers_give_a_clear_reason():
    config = fields({"path": "a"})
    result = evaluate(config, '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", {"a": 1})
    assert result.misses == ["Failed to parse candidate answer as JSON (nested too deeply)"]
    deep_but_readable = '{"a": ' + "[" * 500 + "]" * 500 + "}"
    assert evaluate(config, deep_but_readable, {"a": 1}).misses == ["a (type mismatch: got array, expected number)"]


# ----------------------------------------------------------------------------- geometry


def test_iou_with_huge_finite_coordinates_is_never_nan():
    whole = Shape((-1e308, -1e308, 1e308, 1e308))  # its area overflows to inf
    half = Shape((0.0, -1e308, 1e308, 1e308))
    assert iou(whole, half) == pytest.approx(0.5)
    assert iou(whole, whole) == 1.0
    polygon, _ = parse_shape([[-1e308, -1e308], [1e308, -1e308], [1e308, 1e308], [-1e308, 1e308]], "polygon")
    assert polygon is not None and iou(polygon, half) == pytest.approx(0.5)


def test_an_xywh_box_reaching_beyond_the_double_range_is_a_per_item_reason():
    config = IouScoreConfig.model_validate({"type": "iou_score", "path": "b", "format": "xywh"})
    result = evaluate(config, json.dumps({"b": [[1e308, 0, 1e308, 1], [0, 0, 1, 1]]}), {"b": [[0, 0, 1, 1]]})
    assert result.status == "processed" and result.score == pytest.approx(0.5)
    assert result.misses == [
        "b[0] (invalid box: box [1e+308, 0, 1e+308, 1] reaches beyond the double range (x + width or y + height))"
    ]


def test_distances_beyond_the_double_range_are_reported_not_inf_or_nan():
    assert distance([1e308, 1e308], [-1e308, -1e308]) == math.inf
    assert distance([1e308, 0], [-1e308, 0], "manhattan") == math.inf
    assert distance([1e308, 1e308], [1e308, -1e308], "cosine") == pytest.approx(1.0)
    config = CoordinateDistanceConfig.model_validate({"type": "coordinate_distance", "path": "p", "threshold": 5})
    single = evaluate(config, json.dumps({"p": [1e308, 1e308]}), {"p": [-1e308, -1e308]})
    assert (single.score, single.misses) == (0.0, ["p (euclidean distance beyond the double range > 5)"])
    assert single.details["distance"] is None
    config = CoordinateDistanceConfig.model_validate(
        {"type": "coordinate_distance", "path": "p", "threshold": 5, "matching": "index"}
    )
    listed = evaluate(config, json.dumps({"p": [[1e308, 1e308], [1, 1]]}), {"p": [[-1e308, -1e308], [1, 2]]})
    assert listed.score == pytest.approx(0.5)
    assert listed.misses == ["expected[0] ~ p[0] (euclidean distance beyond the double range > 5)"]
    assert [pair["distance"] for pair in listed.details["pairs"]] == [None, 1.0]
    json.dumps(listed.model_dump(), allow_nan=False)


# ----------------------------------------------------------------------------- properties

extreme_floats = st.sampled_from([1e308, -1e308, 1.7976931348623157e308, 5e-324, -0.0, 1e-300]) | st.floats(
    allow_nan=False, allow_infinity=False
)
extreme_ints = st.sampled_from([2**63, -(2**64), 10**400, -(10**400)]) | st.integers()
numbers = extreme_floats | extreme_ints
literals = st.sampled_from(["1e309", "-1e309", HUGE_INT, "NaN", "Infinity"])


def _answer_text(values: list, raw: list[str]) -> str:
    return "[" + ", ".join([json.dumps(v) for v in values] + raw) + "]"


def _check(result) -> None:
    assert result.status in {"processed", "skipped", "error"}
    if result.status != "skipped":
        assert result.score is not None and math.isfinite(result.score) and 0.0 <= result.score <= 1.0
    json.dumps(result.model_dump(), allow_nan=False, default=str)  # no NaN anywhere in the row


FA = fields(
    {"path": "[0]", "match": "numeric_tolerance", "tolerance": 0.5},
    {"path": "[1]", "match": "numeric_tolerance", "tolerance": 0.1, "relative": True},
    {"path": "[2]", "match": "exact"},
    {"path": "[3]", "match": "fuzzy"},
)


@settings(max_examples=300, deadline=None)
@given(
    answer=st.lists(numbers, max_size=4),
    raw=st.lists(literals, max_size=2),
    expected=st.lists(numbers, min_size=4, max_size=4),
)
def test_field_accuracy_score_is_always_finite(answer, raw, expected):
    result = evaluate(FA, _answer_text(answer, raw), expected)
    _check(result)
    assert result.status != "error" or "cannot score" in result.reasoning


coordinates = st.lists(numbers, min_size=4, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    found=st.lists(coordinates, max_size=3),
    wanted=st.lists(coordinates, min_size=1, max_size=3),
    fmt=st.sampled_from(["xyxy", "xywh"]),
)
def test_iou_score_is_always_finite(found, wanted, fmt):
    config = IouScoreConfig.model_validate({"type": "iou_score", "format": fmt})
    _check(evaluate(config, json.dumps(found), wanted))
    if found and wanted:
        _check(evaluate(config, json.dumps(found[0]), wanted[0]))


@settings(max_examples=300, deadline=None)
@given(
    found=st.lists(st.lists(numbers, min_size=2, max_size=2), max_size=3),
    wanted=st.lists(st.lists(numbers, min_size=2, max_size=2), min_size=1, max_size=3),
    metric=st.sampled_from(["euclidean", "manhattan", "cosine"]),
    matching=st.sampled_from(["optimal", "index"]),
)
def test_coordinate_distance_score_is_always_finite(found, wanted, metric, matching):
    config = CoordinateDistanceConfig.model_validate(
        {"type": "coordinate_distance", "threshold": 1e300, "metric": metric, "matching": matching}
    )
    _check(evaluate(config, json.dumps(found), wanted))
    _check(evaluate(config, json.dumps(found[0] if found else [1, 2]), wanted[0]))


# ----------------------------------------------------------------------------- a whole run


def test_a_run_with_out_of_range_numbers_writes_finite_scores(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(
        [
            ("c1", '{"a": 1e309, "b": 2}', {"a": 1, "b": 2}),
            ("c2", '{"a": ' + HUGE_INT + ', "b": 2}', {"a": 1, "b": 2}),
        ]
    )
    result = run_eval("dataset.yaml", out="out.jsonl")
    rows = [json.loads(line) for line in Path("out.jsonl").read_text().splitlines()]
    assert [row["score"] for row in rows] == [0.5, 0.5]
    assert [r.evaluator_results[0].misses for r in result.rows] == [
        ["a (number beyond the double range (1e309))"],
        ["a (number beyond the double range (999999999999...(5000 digits)))"],
    ]
