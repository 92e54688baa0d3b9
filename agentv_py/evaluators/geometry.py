"""`iou_score` and `coordinate_distance` (SPEC §3.3): pick shapes out of the case, call the pure
geometry functions, report pairs and detection counts. An invalid shape in the answer is a miss;
an invalid shape in the ground truth (alone or in a list) is an evaluator error naming the case
and the field: the case cannot be scored, and that is not the answer's fault. Never crashes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.evaluators.field_accuracy import cannot_score
from agentv_py.models.evaluators import CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.field_results import DetectionDetails, GeometryPair, to_details
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.answer import NOT_JSON, parse_failure
from agentv_py.scoring.geometry import (
    Labelled,
    Shape,
    as_bbox,
    distance,
    distance_matrix,
    is_single,
    pair_indices,
    parse_labelled,
    parse_point,
    parse_shape,
)
from agentv_py.scoring.metrics import Counts
from agentv_py.scoring.paths import MISSING, resolve
from agentv_py.scoring.thresholds import at_most

Config = IouScoreConfig | CoordinateDistanceConfig


def scored(
    config: Config,
    score: float,
    reasoning: str,
    *,
    hits: list[str] | None = None,
    misses: list[str] | None = None,
    details: dict[str, Any] | None = None,
    passed: bool | None = None,
) -> EvaluatorResult:
    """A geometry evaluator's processed result, under its own name, type and weight."""
    return processed_result(
        name=config.display_name,
        type=config.type,
        weight=config.weight,
        score=score,
        hits=hits,
        misses=misses,
        reasoning=reasoning,
        details=details,
        passed=passed,
    )


def pick_values(config: Config, context: EvalContext) -> tuple[Any, Any, EvaluatorResult | None]:
    """(candidate value, expected value, early result when there is nothing to compare)."""
    name, kind, weight = config.display_name, config.type, config.weight
    expected_path = config.expected_path or config.path
    expected = resolve(context.expected, expected_path) if expected_path else context.expected
    if expected is MISSING or expected is None:
        where = f" at {expected_path}" if expected_path else ""
        return None, None, skipped_result(name=name, type=kind, weight=weight, reasoning=f"no expected value{where}")
    problems = _truth_problems(config, expected)
    if problems:
        field = expected_path or "expected_output"
        message = "; ".join(cannot_score(context.eval_id, f"{field}{at}", reason) for at, reason in problems)
        return None, None, error_result(name=name, type=kind, weight=weight, message=message)
    if context.candidate is NOT_JSON:
        failure = parse_failure(context.answer)
        details = _none_found(config, expected)
        return (
            None,
            None,
            processed_result(
                name=name, type=kind, weight=weight, score=0.0, misses=[failure], reasoning=failure, details=details
            ),
        )
    candidate = resolve(context.candidate, config.path) if config.path else context.candidate
    if candidate is MISSING or candidate is None:
        miss = f"{config.label} ({'missing' if candidate is MISSING else 'null value'})"
        details = _none_found(config, expected)
        return (
            None,
            None,
            processed_result(
                name=name, type=kind, weight=weight, score=0.0, misses=[miss], reasoning=miss, details=details
            ),
        )
    return candidate, expected, None


def _none_found(config: Config, expected: Any) -> dict[str, Any] | None:
    """An iou_score answer with no shape at all: every expected shape missed (FN), for `agentv
    metrics` (`scoring.metrics.iou_counts`)."""
    if not isinstance(config, IouScoreConfig):
        return None
    if config.label_key is not None:  # every true box missed, its class counted for COCO AP
        labels = [
            box.label
            for box, _ in map(expected_labelled(config), expected if isinstance(expected, list) else [expected])
            if box
        ]
        return counted(Counts(fn=len(labels)), threshold=config.threshold, ap=ap_record(labels, [], [], None))
    wanted = 1 if is_single(expected, config.expected_format or config.format) else len(expected)
    return counted(Counts(fn=wanted), threshold=config.threshold)


def expected_labelled(config: IouScoreConfig) -> Callable[[Any], tuple[Labelled | None, str | None]]:
    """The parser of the ground truth's labelled boxes (no score read)."""
    fmt, key = config.expected_format or config.format, config.label_key or ""
    return lambda value: _bboxed(config, parse_labelled(value, fmt, config.shape_key, key))


def answer_labelled(config: IouScoreConfig) -> Callable[[Any], tuple[Labelled | None, str | None]]:
    """The parser of the answer's labelled boxes (their score read at `score_key`, when given)."""
    key = config.label_key or ""
    return lambda value: _bboxed(config, parse_labelled(value, config.format, config.shape_key, key, config.score_key))


def _bboxed(config: IouScoreConfig, parsed: tuple[Labelled | None, str | None]) -> tuple[Labelled | None, str | None]:
    box, problem = parsed
    if box is not None and config.polygon_mode == "bbox":
        return Labelled(as_bbox(box.shape), box.label, box.score), None
    return box, problem


def ap_record(truths: Sequence[str], labels: Sequence[str], scores: Sequence[float], ious: Any) -> dict[str, Any]:
    """`details.ap`: the image's true boxes per class and its detections' COCO match bits
    (`scoring.coco.match_image`), for `agentv metrics`' AP."""
    from agentv_py.scoring.coco import match_image

    counts, detections = match_image(truths, labels, scores, ious)
    return {"truths": counts, "detections": [list(detection) for detection in detections]}


def shape_noun(fmt: str) -> str:
    return "polygon" if fmt == "polygon" else "box"


def _truth_problems(config: Config, expected: Any) -> list[tuple[str, str]]:
    """(`[index]` or "", reason) for each invalid expected shape or point, judged alone and the
    same way whether the ground truth holds one shape or a list of them."""
    parse: Callable[[Any], tuple[Any, str | None]]
    if isinstance(config, IouScoreConfig) and config.label_key is not None:
        noun, parse, single = "labelled box", expected_labelled(config), not isinstance(expected, list)
    elif isinstance(config, IouScoreConfig):
        fmt = config.expected_format or config.format
        noun = shape_noun(fmt)

        def parse_one(value: Any) -> tuple[Any, str | None]:
            return parse_shape(value, fmt)

        parse, single = parse_one, is_single(expected, fmt)
    else:
        noun, parse, single = "point", parse_point, _is_point(expected) or not isinstance(expected, list)
    items = [("", expected)] if single else [(f"[{i}]", value) for i, value in enumerate(expected)]
    problems = []
    for at, value in items:
        parsed, problem = parse(value)
        if parsed is None:
            problems.append((at, f"invalid expected {noun}: {problem}"))
    return problems


def valid_items(
    values: list[Any], parse: Callable[[Any], tuple[Any, str | None]], label: str, noun: str, misses: list[str]
) -> list[tuple[int, Any]]:
    """(index, parsed) for each value that parses; one miss per value that does not."""
    valid = []
    for index, value in enumerate(values):
        parsed, problem = parse(value)
        if parsed is None:
            misses.append(f"{label}[{index}] (invalid {noun}: {problem})")
        else:
            valid.append((index, parsed))
    return valid


def pair_items(
    matching: str,
    exp_ok: list[tuple[int, Any]],
    cand_ok: list[tuple[int, Any]],
    matrix: Any,
    maximize: bool,
    keep: Callable[[float], bool] = lambda value: True,
) -> list[tuple[int, int, float]]:
    """(expected index, candidate index, value) pairs over the valid shapes/points.

    `index` pairs equal positions of the original lists (an invalid item pairs with nothing);
    `optimal` takes the assignment with the best total, keeping pairs for which `keep` holds.
    """
    if matching == "index":
        exp_pos = {i: k for k, (i, _) in enumerate(exp_ok)}
        cand_pos = {j: k for k, (j, _) in enumerate(cand_ok)}
        return [(i, i, float(matrix[exp_pos[i], cand_pos[i]])) for i in sorted(exp_pos.keys() & cand_pos.keys())]
    return [
        (exp_ok[r][0], cand_ok[c][0], float(matrix[r, c]))
        for r, c in pair_indices(matrix, "optimal", maximize)
        if keep(float(matrix[r, c]))
    ]


def counted(counts: Counts, **notes: Any) -> dict[str, Any]:
    """Details of a result that counts detections: `tp`, `fp`, `fn` and their rates, with `notes`
    (`DetectionDetails`)."""
    return to_details(
        DetectionDetails(
            tp=counts.tp,
            fp=counts.fp,
            fn=counts.fn,
            precision=counts.precision,
            recall=counts.recall,
            f1=counts.f1,
            **notes,
        )
    )


def unpaired(
    pairs: Sequence[tuple[int, int, float]],
    expected: Sequence[tuple[int, Any]],
    found: Sequence[tuple[int, Any]],
    label: str,
    missing: str,
    extra: str,
) -> list[str]:
    """The misses of the shapes or points no pair took: `expected[i] (missing)`, `label[j] (extra)`."""
    paired_e = {i for i, _, _ in pairs}
    paired_c = {j for _, j, _ in pairs}
    return [f"expected[{i}] ({missing})" for i, _ in expected if i not in paired_e] + [
        f"{label}[{j}] ({extra})" for j, _ in found if j not in paired_c
    ]


DRAWN = 100  # shapes or points per side kept in `details` for the HTML report to draw


def drawn_shape(shape: Shape | None) -> Any:
    """A shape as the report draws it: `[x1, y1, x2, y2]`, or `[[x, y], ...]` for a polygon."""
    if shape is None:
        return None
    return [list(point) for point in shape.points] if shape.points is not None else list(shape.box)


def drawn_sides(
    expected: list[Any],
    candidate: list[Any],
    parse: Callable[[Any], Any],
    parse_candidate: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """`details.drawn`: the ground truth's and the answer's shapes or points in the form the
    report draws (`parse`; `parse_candidate` for the answer when its format differs; None where a
    value is unusable), by index, at most DRAWN per side."""
    return {
        "expected": [parse(value) for value in expected[:DRAWN]],
        "candidate": [(parse_candidate or parse)(value) for value in candidate[:DRAWN]],
        "truncated": max(len(expected), len(candidate)) > DRAWN,
    }


def _drawn_point(value: Any) -> list[float] | None:
    point, _ = parse_point(value)
    return None if point is None else [_finite(float(c)) for c in point]  # type: ignore[misc]


# ----------------------------------------------------------------------------- coordinate_distance


def _is_point(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and not isinstance(value[0], (list, tuple))


def evaluate_distance(config: CoordinateDistanceConfig, context: EvalContext) -> EvaluatorResult:
    """`type: coordinate_distance`. Options: `path` / `expected_path`, `metric` (euclidean,
    manhattan, cosine), `threshold` (the largest distance that passes, required), `matching`
    (optimal or index), `name`, `weight`. Lists score the fraction of points within threshold."""
    candidate, expected, early = pick_values(config, context)
    if early is not None:
        return early
    metric, limit = config.metric, config.threshold
    if _is_point(expected) and _is_point(candidate):
        want, _ = parse_point(expected)
        assert want is not None  # the ground truth was checked by pick_values
        got, problem = parse_point(candidate)
        if got is None or len(got) != len(want):
            reason = problem or f"dimension mismatch: {len(got)} vs {len(want)}"  # type: ignore[arg-type]
            miss = f"{config.label} ({reason})"
            return scored(config, 0.0, miss, misses=[miss])
        d = distance(got, want, metric)
        ok = at_most(d, limit)
        line = f"{config.label} ({metric} distance {_show_distance(d)} {'<=' if ok else '>'} {limit:g})"
        return scored(
            config,
            1.0 if ok else 0.0,
            line,
            hits=[line] if ok else [],
            misses=[] if ok else [line],
            details=to_details(
                DetectionDetails(
                    distance=_finite(d), threshold=limit, metric=metric, drawn=drawn_sides([want], [got], _drawn_point)
                )
            ),
        )
    wanted = [expected] if _is_point(expected) else list(expected) if isinstance(expected, list) else [expected]
    found = [candidate] if _is_point(candidate) else list(candidate) if isinstance(candidate, list) else [candidate]
    return _distance_lists(config, wanted, found)


def _distance_lists(config: CoordinateDistanceConfig, wanted: list[Any], found: list[Any]) -> EvaluatorResult:
    import numpy as np

    misses: list[str] = []
    exp_ok = valid_items(wanted, parse_point, "expected", "point", misses)
    cand_ok = valid_items(found, parse_point, config.label, "point", misses)
    dims_e = {len(p) for _, p in exp_ok}
    dims_c = {len(p) for _, p in cand_ok}
    if len(dims_e) > 1 or len(dims_c) > 1 or (dims_e and dims_c and dims_e != dims_c):
        reason = f"dimension mismatch: {', '.join(map(str, sorted(dims_c)))} vs {', '.join(map(str, sorted(dims_e)))}"
        miss = f"{config.label} ({reason})"
        return scored(config, 0.0, miss, misses=[*misses, miss])
    if exp_ok and cand_ok:
        matrix = distance_matrix([p for _, p in exp_ok], [p for _, p in cand_ok], config.metric)
        # Paired on distances clipped so that no sum of them overflows (an inf distance is
        # beyond any threshold anyway); each pair's own distance is reported.
        matrix = np.minimum(matrix, np.finfo(float).max / (2 * max(matrix.shape)))
    else:
        matrix = np.zeros((len(exp_ok), len(cand_ok)))
    want, got = dict(exp_ok), dict(cand_ok)
    pairs = [
        (i, j, distance(got[j], want[i], config.metric))
        for i, j, _ in pair_items(config.matching, exp_ok, cand_ok, matrix, maximize=False)
    ]
    hits, within = [], 0
    for i, j, d in pairs:
        line = f"expected[{i}] ~ {config.label}[{j}] ({config.metric} distance {_show_distance(d)}"
        if at_most(d, config.threshold):
            within += 1
            hits.append(line + f" <= {config.threshold:g})")
        else:
            misses.append(line + f" > {config.threshold:g})")
    misses += unpaired(pairs, exp_ok, cand_ok, config.label, "no point found", "extra point")
    longest = max(len(wanted), len(found))
    score = within / longest if longest else 1.0
    details = to_details(
        DetectionDetails(
            pairs=[GeometryPair(expected=i, candidate=j, distance=_finite(round(d, 6))) for i, j, d in pairs],
            within=within,
            threshold=config.threshold,
            metric=config.metric,
            matching=config.matching,
            drawn=drawn_sides(wanted, found, _drawn_point),
        )
    )
    reasoning = (
        f"{within}/{longest} points within {config.threshold:g} ({config.metric})"
        if longest
        else "no points expected and none found"
    )
    return scored(config, score, reasoning, hits=hits, misses=misses, details=details)


def _show_distance(d: float) -> str:
    return f"{d:.3g}" if math.isfinite(d) else "beyond the double range"


def _finite(d: float) -> float | None:
    """A distance for the row's details: None when it is beyond the double range (never inf)."""
    return d if math.isfinite(d) else None
