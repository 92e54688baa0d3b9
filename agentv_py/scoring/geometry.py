"""Boxes, polygons and points (SPEC §3.3): parsing, IoU, distances, pairing. Never raises on data.

Canonical box form is XYXY (x1, y1, x2, y2) with x1 <= x2 and y1 <= y2. Formats:
  xyxy     [x1, y1, x2, y2]
  xywh     [x, y, width, height]           (width, height >= 0)
  polygon  [[x, y], [x, y], [x, y], ...]   (>= 3 points, simple: no self-intersection)

IoU = intersection area / union area, 0 when the union is 0. Boxes are computed with numpy in
bulk; polygons are intersected exactly with shapely (or, with polygon_mode "bbox", replaced by
their bounding rectangles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

BoxFormat = Literal["xyxy", "xywh", "polygon"]
Metric = Literal["euclidean", "manhattan", "cosine"]
BOX_FORMATS: tuple[str, ...] = ("xyxy", "xywh", "polygon")
METRICS: tuple[str, ...] = ("euclidean", "manhattan", "cosine")


@dataclass(frozen=True, slots=True)
class Shape:
    """A parsed box (`box` = xyxy) or polygon (`points`); `points` is None for boxes."""

    box: tuple[float, float, float, float]
    points: tuple[tuple[float, float], ...] | None = None

    @property
    def is_polygon(self) -> bool:
        return self.points is not None

    @property
    def area(self) -> float:
        if self.points is None:
            x1, y1, x2, y2 = self.box
            return (x2 - x1) * (y2 - y1)
        return abs(_shoelace(self.points))


# Coordinates are divided by their largest magnitude before IoU or distances are computed when
# it is above this (IoU is scale-invariant, distances scale linearly), so that no width, area or
# squared difference of huge but finite coordinates (1e308) overflows to inf or NaN.
_RESCALE_ABOVE = 1e150


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the double range
        return None
    return number if math.isfinite(number) else None


def show(value: Any, limit: int = 80) -> str:
    """`repr(value)`, shortened to `limit` characters (never fails, even on huge integers)."""
    try:
        text = repr(list(value) if isinstance(value, tuple) else value)
    except ValueError:  # an integer over Python's int-string limit somewhere inside
        return f"<a {type(value).__name__} holding a number too long to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rescale(*groups: Sequence[float]) -> float:
    """The factor to divide coordinates by (1.0 unless one is above 1e150 in magnitude)."""
    largest = max((abs(x) for group in groups for x in group), default=0.0)
    return largest if largest > _RESCALE_ABOVE else 1.0


def _shoelace(points: Sequence[tuple[float, float]]) -> float:
    return 0.5 * sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in zip(points, [*points[1:], points[0]], strict=False))


def parse_shape(value: Any, fmt: str) -> tuple[Shape | None, str | None]:
    """(shape, None) or (None, reason) for one box or polygon in the given format."""
    if fmt == "polygon":
        if not isinstance(value, (list, tuple)) or len(value) < 3:
            return None, "a polygon needs at least 3 [x, y] points"
        points = []
        for point in value:
            if not isinstance(point, (list, tuple)) or len(point) != 2:
                return None, f"polygon point {show(point)} is not [x, y]"
            x, y = _number(point[0]), _number(point[1])
            if x is None or y is None:
                return None, f"polygon point {show(point)} has a non-numeric or non-finite coordinate"
            points.append((x, y))
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        shape = Shape((min(xs), min(ys), max(xs), max(ys)), tuple(points))
        problem = _polygon_problem(shape)
        return (None, problem) if problem else (shape, None)
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        arity = f"{len(value)} values" if isinstance(value, (list, tuple)) else f"a {type(value).__name__}"
        return None, f"a {fmt} box needs 4 numbers, got {arity}"
    numbers = [n for n in (_number(v) for v in value) if n is not None]
    if len(numbers) != 4:
        return None, f"box {show(value)} has a non-numeric or non-finite value"
    a, b, c, d = numbers
    if fmt == "xywh":
        if c < 0 or d < 0:
            return None, f"negative width or height in {show(value)}"
        if not (math.isfinite(a + c) and math.isfinite(b + d)):
            return None, f"box {show(value)} reaches beyond the double range (x + width or y + height)"
        return Shape((a, b, a + c, b + d)), None
    if c < a:
        return None, f"x2 < x1 in {show(value)}"
    if d < b:
        return None, f"y2 < y1 in {show(value)}"
    return Shape((a, b, c, d)), None


@dataclass(frozen=True, slots=True)
class Labelled:
    """A labelled box (`iou_score` with `label_key`): its shape, class and detector score."""

    shape: Shape
    label: str
    score: float = 1.0


def parse_labelled(
    value: Any, fmt: str, shape_key: str, label_key: str, score_key: str | None = None
) -> tuple[Labelled | None, str | None]:
    """(labelled box, None) or (None, reason) for one object holding a shape at `shape_key`, a
    class (a text or a whole number) at `label_key` and, with `score_key`, a finite score there."""
    if not isinstance(value, dict):
        return None, f"a labelled box is an object with '{shape_key}' and '{label_key}', got {_kind(value)}"
    if shape_key not in value:
        return None, f"no '{shape_key}'"
    shape, problem = parse_shape(value[shape_key], fmt)
    if shape is None:
        return None, problem
    label = value.get(label_key)
    if label_key not in value or label is None:
        return None, f"no class: '{label_key}' is missing"
    if isinstance(label, bool) or not isinstance(label, (str, int)):
        return None, f"the class at '{label_key}' is {_kind(label)}, not a text or a whole number"
    score = 1.0
    if score_key is not None:
        raw = value.get(score_key)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            what = "missing" if score_key not in value else f"{show(raw)}, not a finite number"
            return None, f"the score at '{score_key}' is {what}"
        score = float(raw)
    return Labelled(shape, str(label), score), None


def _kind(value: Any) -> str:
    return "a list" if isinstance(value, (list, tuple)) else "null" if value is None else f"a {type(value).__name__}"


def _polygon_problem(shape: Shape) -> str | None:
    try:
        from shapely.geometry import Polygon
        from shapely.validation import explain_validity
    except ImportError:  # pragma: no cover - shapely is a dependency
        return None
    assert shape.points is not None
    scale = rescale(shape.box)
    polygon = Polygon([(x / scale, y / scale) for x, y in shape.points])
    if not polygon.is_valid:
        return f"invalid polygon ({explain_validity(polygon)})"
    return None


def is_single(value: Any, fmt: str) -> bool:
    """Does `value` hold one shape (rather than a list of shapes) in this format?"""
    if not isinstance(value, (list, tuple)):
        return True  # not a list at all: reported as an invalid single shape
    if not value:
        return False  # an empty list of shapes
    if fmt == "polygon":
        first = value[0]
        return isinstance(first, (list, tuple)) and bool(first) and not isinstance(first[0], (list, tuple))
    return not isinstance(value[0], (list, tuple))


def as_bbox(shape: Shape) -> Shape:
    """The polygon's bounding rectangle (boxes are returned as they are)."""
    return Shape(shape.box)


def _scaled(shape: Shape, scale: float) -> Shape:
    if scale == 1.0:
        return shape
    x1, y1, x2, y2 = (v / scale for v in shape.box)
    points = None if shape.points is None else tuple((x / scale, y / scale) for x, y in shape.points)
    return Shape((x1, y1, x2, y2), points)


def iou(a: Shape, b: Shape) -> float:
    """Intersection over union of two shapes (exact for polygons), 0 when the union is 0.
    Always in [0, 1], however large the (finite) coordinates: they are rescaled first."""
    scale = rescale(a.box, b.box)
    a, b = _scaled(a, scale), _scaled(b, scale)
    if a.points is None and b.points is None:
        ax1, ay1, ax2, ay2 = a.box
        bx1, by1, bx2, by2 = b.box
        inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
        union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
        return min(inter / union, 1.0) if union > 0 else 0.0
    from shapely.geometry import Polygon
    from shapely.geometry import box as shapely_box

    pa = Polygon(a.points) if a.points is not None else shapely_box(*a.box)
    pb = Polygon(b.points) if b.points is not None else shapely_box(*b.box)
    union = pa.union(pb).area
    value = pa.intersection(pb).area / union if union > 0 else 0.0
    return min(max(value, 0.0), 1.0) if math.isfinite(value) else 0.0


def iou_matrix(expected: Sequence[Shape], candidate: Sequence[Shape]) -> Any:
    """IoU of every (expected, candidate) pair as a numpy array, vectorised for boxes."""
    import numpy as np

    if not expected or not candidate:
        return np.zeros((len(expected), len(candidate)))
    if all(s.points is None for s in (*expected, *candidate)):
        scale = rescale(*(s.box for s in (*expected, *candidate)))
        a = np.array([s.box for s in expected]) / scale
        b = np.array([s.box for s in candidate]) / scale
        return box_iou_matrix(a, b)
    return np.array([[iou(e, c) for c in candidate] for e in expected])


def box_iou_matrix(a: Any, b: Any) -> Any:
    """IoU matrix of XYXY boxes: a (n, 4), b (m, 4) -> (n, m)."""
    import numpy as np

    ix1 = np.maximum(a[:, None, 0], b[None, :, 0])
    iy1 = np.maximum(a[:, None, 1], b[None, :, 1])
    ix2 = np.minimum(a[:, None, 2], b[None, :, 2])
    iy2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(ix2 - ix1, 0, None) * np.clip(iy2 - iy1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.clip(np.divide(inter, union, out=np.zeros_like(inter, dtype=float), where=union > 0), 0.0, 1.0)


# ----------------------------------------------------------------------------- points


def parse_point(value: Any) -> tuple[tuple[float, ...] | None, str | None]:
    if not isinstance(value, (list, tuple)) or not value:
        return (
            None,
            "a point is a list of numbers, got "
            + (type(value).__name__ if not isinstance(value, (list, tuple)) else "an empty list"),
        )
    numbers = [_number(v) for v in value]
    if any(n is None for n in numbers):
        return None, f"point {show(value)} has a non-numeric or non-finite coordinate"
    return tuple(numbers), None  # type: ignore[arg-type]


def distance(a: Sequence[float], b: Sequence[float], metric: str = "euclidean") -> float:
    """Distance of two points of equal dimension; cosine distance is 1.0 when a vector is zero.
    Never NaN; inf only when the true distance is beyond the double range (1e308 to -1e308)."""
    scale = rescale(a, b) if metric != "cosine" else 1.0
    if scale != 1.0:
        return scale * distance([x / scale for x in a], [y / scale for y in b], metric)
    if metric == "manhattan":
        return float(sum(abs(x - y) for x, y in zip(a, b, strict=False)))
    if metric == "cosine":
        # Scale each vector by its largest |coordinate| first (cosine is scale-invariant), so
        # tiny or huge coordinates neither underflow nor overflow.
        scale_a, scale_b = max(map(abs, a), default=0.0), max(map(abs, b), default=0.0)
        if scale_a == 0 or scale_b == 0:
            return 1.0
        a = [x / scale_a for x in a]
        b = [y / scale_b for y in b]
        similarity = sum(x * y for x, y in zip(a, b, strict=False)) / (math.hypot(*a) * math.hypot(*b))
        return 1.0 - max(-1.0, min(1.0, similarity))
    return math.dist(a, b)


def distance_matrix(a: Any, b: Any, metric: str = "euclidean") -> Any:
    """Distances of every pair: a (n, d), b (m, d) -> (n, m), vectorised. Never NaN: a distance
    beyond the double range (1e308 to -1e308) is inf; each euclidean distance is computed on
    its pair's own scale, so neither huge nor tiny coordinates lose it."""
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if metric != "cosine":
        with np.errstate(over="ignore", invalid="ignore"):
            diff = np.abs(a[:, None, :] - b[None, :, :])  # inf only beyond the double range
            if metric == "manhattan":
                return diff.sum(axis=2)
            scale = diff.max(axis=2, initial=0.0)
            finite = np.isfinite(scale) & (scale > 0)
            safe = np.where(finite, scale, 1.0)
            norm = scale * np.sqrt(((diff / safe[:, :, None]) ** 2).sum(axis=2))
            return np.where(finite, norm, np.where(scale > 0, np.inf, 0.0))
    if metric == "cosine":
        scale_a = np.abs(a).max(axis=1, keepdims=True)
        scale_b = np.abs(b).max(axis=1, keepdims=True)
        a = np.divide(a, scale_a, out=np.zeros_like(a), where=scale_a > 0)
        b = np.divide(b, scale_b, out=np.zeros_like(b), where=scale_b > 0)
        norm_a = np.linalg.norm(a, axis=1)
        norm_b = np.linalg.norm(b, axis=1)
        denominator = norm_a[:, None] * norm_b[None, :]
        similarity = np.divide(a @ b.T, denominator, out=np.zeros((len(a), len(b))), where=denominator > 0)
    return np.where(denominator > 0, 1.0 - np.clip(similarity, -1.0, 1.0), 1.0)


def pair_indices(score: Any, matching: str, maximize: bool) -> list[tuple[int, int]]:
    """Pairs (row, column) of a score matrix: `index` pairs i with i; `optimal` is the assignment
    with the best total (maximum IoU, or minimum distance)."""
    rows, cols = score.shape
    if matching == "index":
        return [(i, i) for i in range(min(rows, cols))]
    if rows == 0 or cols == 0:
        return []
    from scipy.optimize import linear_sum_assignment

    r, c = linear_sum_assignment(score, maximize=maximize)
    return sorted(zip(r.tolist(), c.tolist(), strict=False))
