"""iou_score and coordinate_distance as evaluators: single, lists, pairing, details, bad data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import CoordinateDistanceConfig, IouScoreConfig


def iou_cfg(**kw) -> IouScoreConfig:
    return IouScoreConfig.model_validate({"type": "iou_score", **kw})


def dist_cfg(**kw) -> CoordinateDistanceConfig:
    return CoordinateDistanceConfig.model_validate({"type": "coordinate_distance", "threshold": 5, **kw})


def run(cfg, answer, expected):
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return run_evaluator(cfg, EvalContext("c", "d", Path("."), text, expected))


def test_single_box_scores_its_iou():
    result = run(iou_cfg(path="box"), {"box": [1, 1, 3, 3]}, {"box": [0, 0, 2, 2]})
    assert result.score == pytest.approx(1 / 7)
    assert (result.passed, result.misses) == (False, ["box (IoU 0.14 < 0.50)"])
    assert run(iou_cfg(path="box", threshold=0.1), {"box": [1, 1, 3, 3]}, {"box": [0, 0, 2, 2]}).passed is True


def test_formats_and_expected_path():
    result = run(
        iou_cfg(path="det", format="xywh", expected_path="truth.box", expected_format="xyxy"),
        {"det": [0, 0, 2, 2]},
        {"truth": {"box": [0, 0, 2, 2]}},
    )
    assert result.score == 1.0 and result.hits == ["det (IoU 1.00)"]


def test_polygon_exact_and_bbox_mode():
    diamond = [[2, 0], [4, 2], [2, 4], [0, 2]]
    exact = run(iou_cfg(path="p", format="polygon", expected_format="xyxy"), {"p": diamond}, {"p": [0, 0, 4, 4]})
    bbox = run(
        iou_cfg(path="p", format="polygon", expected_format="xyxy", polygon_mode="bbox"),
        {"p": diamond},
        {"p": [0, 0, 4, 4]},
    )
    assert (exact.score, bbox.score) == (pytest.approx(0.5), 1.0)


BOXES = [[0, 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50]]


def test_lists_with_a_missed_and_a_spurious_box():
    found = [[21, 21, 31, 31], [0, 0, 10, 10], [100, 100, 110, 110]]  # shuffled, one missed, one spurious
    result = run(iou_cfg(path="boxes"), {"boxes": found}, {"boxes": BOXES})
    pair = 81 / 119  # IoU of [20,20,30,30] and [21,21,31,31]
    assert result.score == pytest.approx((1 + pair) / 3)
    details = result.details
    assert [(p["expected"], p["candidate"]) for p in details["pairs"]] == [(0, 1), (1, 0)]
    assert (details["tp"], details["fp"], details["fn"]) == (2, 1, 1)
    assert details["precision"] == pytest.approx(2 / 3) and details["recall"] == pytest.approx(2 / 3)
    assert details["mean_iou_matched"] == pytest.approx((1 + pair) / 2)
    assert result.misses == ["expected[2] (no box found)", "boxes[2] (spurious box)"]


def test_optimal_and_index_pairing_differ():
    found = [BOXES[1], BOXES[0]]
    optimal = run(iou_cfg(path="b"), {"b": found}, {"b": BOXES[:2]})
    index = run(iou_cfg(path="b", matching="index"), {"b": found}, {"b": BOXES[:2]})
    assert (optimal.score, index.score) == (1.0, 0.0)


@pytest.mark.parametrize(
    "found, expected, score, counts",
    [
        ([], BOXES, 0.0, (0, 0, 3)),
        (BOXES, [], 0.0, (0, 3, 0)),
        ([], [], 1.0, (0, 0, 0)),
        (BOXES[:1], BOXES, 1 / 3, (1, 0, 2)),
    ],
    ids=["nothing-found", "nothing-expected", "both-empty", "unequal-lengths"],
)
def test_empty_and_unequal_lists(found, expected, score, counts):
    result = run(iou_cfg(path="b"), {"b": found}, {"b": expected})
    assert result.score == pytest.approx(score)
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == counts


def test_invalid_candidate_boxes_are_misses_not_crashes():
    result = run(iou_cfg(path="b"), {"b": [[10, 0, 0, 10], "nope", BOXES[0]]}, {"b": [BOXES[0]]})
    assert result.status == "processed" and result.score == pytest.approx(1 / 3)
    assert result.misses == [
        "b[0] (invalid box: x2 < x1 in [10, 0, 0, 10])",
        "b[1] (invalid box: a xyxy box needs 4 numbers, got a str)",
    ]
    single = run(iou_cfg(path="b"), {"b": [0, 0, "x", 1]}, {"b": BOXES[0]})
    assert single.misses == ["b (invalid box: box [0, 0, 'x', 1] has a non-numeric or non-finite value)"]


def test_invalid_ground_truth_is_an_error():
    result = run(iou_cfg(path="b"), {"b": BOXES[0]}, {"b": [5, 5, 0, 0]})
    assert result.status == "error" and result.misses == [
        "case 'c', field 'b': cannot score: invalid expected box: x2 < x1 in [5, 5, 0, 0]"
    ]


def test_an_invalid_expected_box_in_a_list_is_an_error_too():
    result = run(iou_cfg(path="b"), {"b": [BOXES[0]]}, {"b": [BOXES[0], [5, 5, 0, 0], "x"]})
    assert result.status == "error" and result.reasoning == (
        "case 'c', field 'b[1]': cannot score: invalid expected box: x2 < x1 in [5, 5, 0, 0]; "
        "case 'c', field 'b[2]': cannot score: invalid expected box: a xyxy box needs 4 numbers, got a str"
    )


def test_an_invalid_expected_box_is_an_error_whatever_the_answer():
    for answer in ("not json", {"x": 1}, {"b": "nope"}):
        result = run(iou_cfg(), answer, [5, 5, 0, 0])
        assert result.status == "error" and result.reasoning == (
            "case 'c', field 'expected_output': cannot score: invalid expected box: x2 < x1 in [5, 5, 0, 0]"
        )


def test_an_invalid_expected_point_is_an_error_alone_or_in_a_list():
    single = run(dist_cfg(path="p"), {"p": [1, 2]}, {"p": [1, "y"]})
    assert single.status == "error" and single.reasoning == (
        "case 'c', field 'p': cannot score: invalid expected point: point [1, 'y'] has a non-numeric or "
        "non-finite coordinate"
    )
    listed = run(dist_cfg(path="p"), {"p": [[1, 2]]}, {"p": [[1, 2], []]})
    assert listed.status == "error" and listed.reasoning == (
        "case 'c', field 'p[1]': cannot score: invalid expected point: a point is a list of numbers, got an empty list"
    )


def test_missing_things():
    assert run(iou_cfg(path="b"), {"x": 1}, {"b": BOXES[0]}).misses == ["b (missing)"]
    assert run(iou_cfg(path="b"), {"b": BOXES[0]}, {"x": 1}).status == "skipped"
    assert run(iou_cfg(path="b"), "no json", {"b": BOXES[0]}).misses == ["Failed to parse candidate answer as JSON"]


def test_single_point_within_and_outside():
    assert run(dist_cfg(path="p"), {"p": [3, 4]}, {"p": [0, 0]}).hits == ["p (euclidean distance 5 <= 5)"]
    outside = run(dist_cfg(path="p", metric="manhattan"), {"p": [3, 4]}, {"p": [0, 0]})
    assert (outside.score, outside.misses) == (0.0, ["p (manhattan distance 7 > 5)"])


def test_dimension_mismatch():
    result = run(dist_cfg(path="p"), {"p": [1, 2]}, {"p": [1, 2, 3]})
    assert (result.score, result.misses) == (0.0, ["p (dimension mismatch: 2 vs 3)"])
    lists = run(dist_cfg(path="p"), {"p": [[1, 2]]}, {"p": [[1, 2, 3]]})
    assert lists.misses == ["p (dimension mismatch: 2 vs 3)"]


def test_cosine_with_a_zero_vector_is_distance_one():
    result = run(dist_cfg(path="v", metric="cosine", threshold=0.5), {"v": [0, 0]}, {"v": [1, 1]})
    assert result.details["distance"] == 1.0 and result.score == 0.0


def test_point_lists_fraction_within_threshold():
    expected = [[0, 0], [100, 100], [200, 200]]
    found = [[101, 101], [1, 1], [500, 500], [900, 900]]
    result = run(dist_cfg(path="p"), {"p": found}, {"p": expected})
    assert result.score == pytest.approx(2 / 4)  # 2 within, over max(len) = 4
    assert [(p["expected"], p["candidate"]) for p in result.details["pairs"]] == [(0, 1), (1, 0), (2, 2)]
    assert "p[3] (extra point)" in result.misses


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=True) | st.text(max_size=3),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.sampled_from("bp"), children, max_size=2),
    max_leaves=25,
)
CONFIGS = [
    iou_cfg(path="b"),
    iou_cfg(path="b", format="polygon"),
    iou_cfg(path="b", format="xywh", matching="index"),
    dist_cfg(path="b"),
    dist_cfg(path="b", metric="cosine", matching="index"),
]


@settings(max_examples=300, deadline=None)
@given(candidate=json_values, expected=json_values, which=st.integers(0, len(CONFIGS) - 1))
def test_geometry_evaluators_never_raise(candidate, expected, which):
    result = run_evaluator(
        CONFIGS[which], EvalContext("c", "d", Path("."), json.dumps({"b": candidate}), {"b": expected})
    )
    assert result.status in {"processed", "skipped", "error"}
    assert "internal error" not in result.reasoning
    if result.status == "processed":
        assert 0.0 <= result.score <= 1.0


@pytest.mark.parametrize(
    ("answer", "expected", "counts"),
    [
        ({"other": 1}, {"box": [0, 0, 2, 2]}, (0, 0, 1)),  # no box: the expected one missed
        ({"box": None}, {"box": [[0, 0, 2, 2], [5, 5, 6, 6]]}, (0, 0, 2)),  # no list: both missed
        ("not json", {"box": [0, 0, 2, 2]}, (0, 0, 1)),
        ({"box": [3, 3, 1, 1]}, {"box": [0, 0, 2, 2]}, (0, 1, 1)),  # a box, but unusable: wrong (FP and FN)
    ],
    ids=["missing", "null-list", "not-json", "invalid-box"],
)
def test_an_answer_without_a_usable_box_still_counts_for_metrics(answer, expected, counts):
    from agentv_py.scoring.metrics import row_field_counts

    result = run(iou_cfg(path="box", name="box"), answer, expected)
    assert (result.status, result.score, result.passed) == ("processed", 0.0, False)
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == counts
    assert row_field_counts([result])[("box", "box")].as_tuple() == (counts[0], 0, counts[1], counts[2])
