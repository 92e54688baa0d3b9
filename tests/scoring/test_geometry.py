"""Pure geometry (SPEC §3.3): parsing, IoU, distances; table-driven plus properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.scoring.geometry import (
    as_bbox,
    box_iou_matrix,
    distance,
    distance_matrix,
    iou,
    is_single,
    pair_indices,
    parse_shape,
)

DIAMOND = [[2, 0], [4, 2], [2, 4], [0, 2]]


def shape(value, fmt="xyxy"):
    parsed, problem = parse_shape(value, fmt)
    assert parsed is not None, problem
    return parsed


IOU = [
    ("perfect", [0, 0, 2, 2], "xyxy", [0, 0, 2, 2], "xyxy", 1.0),
    ("partial", [0, 0, 2, 2], "xyxy", [1, 1, 3, 3], "xyxy", 1 / 7),
    ("no-overlap", [0, 0, 1, 1], "xyxy", [5, 5, 6, 6], "xyxy", 0.0),
    ("containment", [0, 0, 4, 4], "xyxy", [1, 1, 2, 2], "xyxy", 1 / 16),
    ("touching-edges", [0, 0, 1, 1], "xyxy", [1, 0, 2, 1], "xyxy", 0.0),
    ("zero-area-both", [1, 1, 1, 1], "xyxy", [1, 1, 1, 1], "xyxy", 0.0),
    ("xywh-vs-xyxy", [1, 1, 2, 2], "xywh", [1, 1, 3, 3], "xyxy", 1.0),
    ("polygon-square-vs-box", [[0, 0], [2, 0], [2, 2], [0, 2]], "polygon", [0, 0, 2, 2], "xyxy", 1.0),
    ("rotated-polygon-vs-its-bounding-box", DIAMOND, "polygon", [0, 0, 4, 4], "xyxy", 0.5),
    (
        "polygons-partial",
        [[0, 0], [2, 0], [2, 2], [0, 2]],
        "polygon",
        [[1, 1], [3, 1], [3, 3], [1, 3]],
        "polygon",
        1 / 7,
    ),
]


@pytest.mark.parametrize("a, fa, b, fb, expected", [c[1:] for c in IOU], ids=[c[0] for c in IOU])
def test_iou(a, fa, b, fb, expected):
    assert iou(shape(a, fa), shape(b, fb)) == pytest.approx(expected)


def test_polygon_bbox_mode_uses_the_bounding_rectangle():
    assert iou(as_bbox(shape(DIAMOND, "polygon")), shape([0, 0, 4, 4])) == 1.0


INVALID = [
    ("x2-before-x1", [2, 0, 1, 1], "xyxy", "x2 < x1 in [2, 0, 1, 1]"),
    ("y2-before-y1", [0, 2, 1, 1], "xyxy", "y2 < y1 in [0, 2, 1, 1]"),
    ("wrong-arity", [1, 2, 3], "xyxy", "a xyxy box needs 4 numbers, got 3 values"),
    ("not-a-list", "0,0,1,1", "xywh", "a xywh box needs 4 numbers, got a str"),
    ("string-value", [0, "a", 1, 1], "xyxy", "box [0, 'a', 1, 1] has a non-numeric or non-finite value"),
    ("nan", [0, 0, float("nan"), 1], "xyxy", "box [0, 0, nan, 1] has a non-numeric or non-finite value"),
    ("bool-is-not-a-number", [0, 0, True, 1], "xyxy", "box [0, 0, True, 1] has a non-numeric or non-finite value"),
    ("negative-width", [0, 0, -1, 1], "xywh", "negative width or height in [0, 0, -1, 1]"),
    ("two-point-polygon", [[0, 0], [1, 1]], "polygon", "a polygon needs at least 3 [x, y] points"),
    ("bad-polygon-point", [[0, 0], [1, 1], [1]], "polygon", "polygon point [1] is not [x, y]"),
    ("self-intersecting", [[0, 0], [2, 2], [2, 0], [0, 2]], "polygon", "invalid polygon (Self-intersection[1 1])"),
]


@pytest.mark.parametrize("value, fmt, reason", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_shapes_give_a_reason(value, fmt, reason):
    assert parse_shape(value, fmt) == (None, reason)


@pytest.mark.parametrize(
    "value, fmt, single",
    [
        ([0, 0, 1, 1], "xyxy", True),
        ([[0, 0, 1, 1]], "xyxy", False),
        ([], "xyxy", False),
        (DIAMOND, "polygon", True),
        ([DIAMOND], "polygon", False),
    ],
)
def test_is_single(value, fmt, single):
    assert is_single(value, fmt) is single


DISTANCES = [
    ("euclidean-3-4-5", [0, 0], [3, 4], "euclidean", 5.0),
    ("manhattan", [0, 0], [3, 4], "manhattan", 7.0),
    ("cosine-orthogonal", [1, 0], [0, 1], "cosine", 1.0),
    ("cosine-parallel", [1, 1], [2, 2], "cosine", 0.0),
    ("cosine-zero-vector", [0, 0], [1, 1], "cosine", 1.0),
    ("three-d", [1, 2, 3], [1, 2, 3], "euclidean", 0.0),
]


@pytest.mark.parametrize("a, b, metric, expected", [c[1:] for c in DISTANCES], ids=[c[0] for c in DISTANCES])
def test_distance_and_matrix_agree(a, b, metric, expected):
    assert distance(a, b, metric) == pytest.approx(expected, abs=1e-12)
    assert distance_matrix([a], [b], metric)[0, 0] == pytest.approx(expected, abs=1e-12)


def test_optimal_and_index_pairing():
    score = np.array([[0.1, 0.9], [0.8, 0.2]])
    assert pair_indices(score, "index", True) == [(0, 0), (1, 1)]
    assert pair_indices(score, "optimal", True) == [(0, 1), (1, 0)]
    assert pair_indices(np.zeros((0, 3)), "optimal", True) == []


coordinate = st.floats(-100, 100, allow_nan=False)
boxes = st.tuples(coordinate, coordinate, st.floats(0, 50), st.floats(0, 50)).map(
    lambda t: [t[0], t[1], t[0] + t[2], t[1] + t[3]]
)


@settings(max_examples=300, deadline=None)
@given(a=boxes, b=boxes)
def test_iou_is_symmetric_bounded_and_matches_the_matrix(a, b):
    sa, sb = shape(a), shape(b)
    value = iou(sa, sb)
    assert 0.0 <= value <= 1.0 + 1e-12
    assert value == pytest.approx(iou(sb, sa))
    assert box_iou_matrix(np.array([sa.box]), np.array([sb.box]))[0, 0] == pytest.approx(value)


@settings(max_examples=200, deadline=None)
@given(a=boxes)
def test_identical_boxes_have_iou_one(a):
    box = shape(a)
    if box.area > 1e-9:
        assert iou(box, box) == pytest.approx(1.0)


points = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(a=points, b=points, metric=st.sampled_from(["euclidean", "manhattan", "cosine"]))
def test_distances_are_non_negative_and_zero_for_identical_points(a, b, metric):
    b = (b + a)[: len(a)]
    assert distance(a, b, metric) >= -1e-9
    if metric != "cosine" or any(a):
        assert distance(a, a, metric) == pytest.approx(0.0, abs=1e-9)
