"""`iou_score` and `coordinate_distance` (SPEC §3.3): pick shapes out of the case, call the pure
geometry functions, report pairs and detection counts. An invalid shape in the answer is a miss;
an invalid shape in the ground truth (alone or in a list) is an evaluator error naming the case
and the field: the case cannot be scored, and that is not the answer's fault. Never crashes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.evaluators.field_accuracy import cannot_score
from agentv_py.models.evaluators import CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.answer import NOT_JSON, parse_failure
from agentv_py.scoring.geometry import (
    Shape,
    as_bbox,
    distance,
    distance_matrix,
    iou,
    iou_matrix,
    is_single,
    pair_indices,
    parse_point,
    parse_shape,
)
from agentv_py.scoring.metrics import Counts
from agentv_py.scoring.paths import MISSING, resolve
from agentv_py.scoring.thresholds import at_least, at_most

Config = IouScoreConfig | CoordinateDistanceConfig


def _pick(config: Config, context: EvalContext) -> tuple[Any, Any, EvaluatorResult | None]:
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
    wanted = 1 if is_single(expected, config.expected_format or config.format) else len(expected)
    return {"threshold": config.threshold, **_rates(Counts(fn=wanted))}


def _noun(fmt: str) -> str:
    return "polygon" if fmt == "polygon" else "box"


def _truth_problems(config: Config, expected: Any) -> list[tuple[str, str]]:
    """(`[index]` or "", reason) for each invalid expected shape or point, judged alone and the
    same way whether the ground truth holds one shape or a list of them."""
    if isinstance(config, IouScoreConfig):
        fmt = config.expected_format or config.format
        noun = _noun(fmt)

        def parse(value: Any) -> tuple[Any, str | None]:
            return parse_shape(value, fmt)

        single = is_single(expected, fmt)
    else:
        noun, parse, single = "point", parse_point, _is_point(expected) or not isinstance(expected, list)
    items = [("", expected)] if single else [(f"[{i}]", value) for i, value in enumerate(expected)]
    problems = []
    for at, value in items:
        parsed, problem = parse(value)
        if parsed is None:
            problems.append((at, f"invalid expected {noun}: {problem}"))
    return problems


def _valid(
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


def _pair(
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


def _rates(counts: Counts) -> dict[str, Any]:
    return {
        "tp": counts.tp,
        "fp": counts.fp,
        "fn": counts.fn,
        "precision": counts.precision,
        "recall": counts.recall,
        "f1": counts.f1,
    }


DRAWN = 100  # shapes or points per side kept in `details` for the HTML report to draw


def _drawn_shape(shape: Shape | None) -> Any:
    """A shape as the report draws it: `[x1, y1, x2, y2]`, or `[[x, y], ...]` for a polygon."""
    if shape is None:
        return None
    return [list(point) for point in shape.points] if shape.points is not None else list(shape.box)


def _drawn(
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


# ----------------------------------------------------------------------------- iou_score


def evaluate_iou(config: IouScoreConfig, context: EvalContext) -> EvaluatorResult:
    """`type: iou_score`. Options: `path` / `expected_path` (where the shapes are; default the
    whole answer), `format` / `expected_format` (xyxy, xywh, polygon), `threshold` (IoU that
    counts as a match, default 0.5), `matching` (optimal or index), `polygon_mode` (exact or
    bbox), `name`, `weight`. One box scores its IoU; lists score total pair IoU / max(len)."""
    candidate, expected, early = _pick(config, context)
    if early is not None:
        return early
    name, weight = config.display_name, config.weight
    cand_fmt, exp_fmt = config.format, config.expected_format or config.format
    if is_single(expected, exp_fmt) and is_single(candidate, cand_fmt):
        want, _ = parse_shape(expected, exp_fmt)
        assert want is not None  # the ground truth was checked by _pick
        got, problem = parse_shape(candidate, cand_fmt)
        if got is None:  # a shape given but unusable: a wrong answer (FP and FN), as one in the wrong place
            miss = f"{config.label} (invalid {_noun(cand_fmt)}: {problem})"
            return processed_result(
                name=name,
                type=config.type,
                weight=weight,
                score=0.0,
                misses=[miss],
                reasoning=miss,
                passed=False,
                details={"threshold": config.threshold, **_rates(Counts(fp=1, fn=1))},
            )
        if config.polygon_mode == "bbox":
            want, got = as_bbox(want), as_bbox(got)
        value = iou(want, got)
        ok = at_least(value, config.threshold)
        line = f"{config.label} (IoU {value:.2f}{'' if ok else f' < {config.threshold:.2f}'})"
        return processed_result(
            name=name,
            type=config.type,
            weight=weight,
            score=value,
            passed=ok,
            hits=[line] if ok else [],
            misses=[] if ok else [line],
            reasoning=f"IoU {value:.3f} (threshold {config.threshold:g})",
            details={
                "iou": value,
                "threshold": config.threshold,
                "format": cand_fmt,
                "expected_format": exp_fmt,
                "drawn": _drawn([want], [got], _drawn_shape),  # both parsed already
            },
        )
    wanted = [expected] if is_single(expected, exp_fmt) else list(expected)
    found = [candidate] if is_single(candidate, cand_fmt) else list(candidate)
    return _iou_lists(config, wanted, found, exp_fmt, cand_fmt)


def _iou_lists(
    config: IouScoreConfig, wanted: list[Any], found: list[Any], exp_fmt: str, cand_fmt: str
) -> EvaluatorResult:
    def parse(fmt: str) -> Callable[[Any], tuple[Any, str | None]]:
        def one(value: Any) -> tuple[Any, str | None]:
            shape, problem = parse_shape(value, fmt)
            return (as_bbox(shape) if shape is not None and config.polygon_mode == "bbox" else shape), problem

        return one

    misses: list[str] = []
    exp_ok = _valid(wanted, parse(exp_fmt), "expected", "box", misses)
    cand_ok = _valid(found, parse(cand_fmt), config.label, "box", misses)
    matrix = iou_matrix([s for _, s in exp_ok], [s for _, s in cand_ok])
    # With optimal matching a zero-overlap "pair" means nothing: a missed and a spurious box.
    pairs = _pair(config.matching, exp_ok, cand_ok, matrix, maximize=True, keep=lambda v: v > 0)
    hits = []
    tp = 0
    matched_ious = []
    for i, j, value in pairs:
        line = f"expected[{i}] ~ {config.label}[{j}] (IoU {value:.2f}"
        if at_least(value, config.threshold):
            tp += 1
            matched_ious.append(value)
            hits.append(line + ")")
        else:
            misses.append(line + f" < {config.threshold:.2f})")
    paired_e = {i for i, _, _ in pairs}
    paired_c = {j for _, j, _ in pairs}
    misses += [f"expected[{i}] (no box found)" for i, _ in exp_ok if i not in paired_e]
    misses += [f"{config.label}[{j}] (spurious box)" for j, _ in cand_ok if j not in paired_c]
    counts = Counts(tp=tp, fp=len(found) - tp, fn=len(wanted) - tp)
    longest = max(len(wanted), len(found))
    score = sum(v for _, _, v in pairs) / longest if longest else 1.0
    details = {
        "pairs": [{"expected": i, "candidate": j, "iou": round(v, 6)} for i, j, v in pairs],
        **_rates(counts),
        "mean_iou_matched": sum(matched_ious) / len(matched_ious) if matched_ious else None,
        "threshold": config.threshold,
        "matching": config.matching,
        "drawn": _drawn(
            wanted,
            found,
            lambda value: _drawn_shape(parse(exp_fmt)(value)[0]),
            lambda value: _drawn_shape(parse(cand_fmt)(value)[0]),
        ),
    }
    reasoning = (
        f"{tp}/{len(wanted)} expected boxes found at IoU >= {config.threshold:g}, {counts.fp} spurious"
        if longest
        else "no boxes expected and none found"
    )
    return processed_result(
        name=config.display_name,
        type=config.type,
        weight=config.weight,
        score=score,
        hits=hits,
        misses=misses,
        reasoning=reasoning,
        details=details,
    )


# ----------------------------------------------------------------------------- coordinate_distance


def _is_point(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and not isinstance(value[0], (list, tuple))


def evaluate_distance(config: CoordinateDistanceConfig, context: EvalContext) -> EvaluatorResult:
    """`type: coordinate_distance`. Options: `path` / `expected_path`, `metric` (euclidean,
    manhattan, cosine), `threshold` (the largest distance that passes, required), `matching`
    (optimal or index), `name`, `weight`. Lists score the fraction of points within threshold."""
    candidate, expected, early = _pick(config, context)
    if early is not None:
        return early
    name, weight, metric, limit = config.display_name, config.weight, config.metric, config.threshold
    if _is_point(expected) and _is_point(candidate):
        want, _ = parse_point(expected)
        assert want is not None  # the ground truth was checked by _pick
        got, problem = parse_point(candidate)
        if got is None or len(got) != len(want):
            reason = problem or f"dimension mismatch: {len(got)} vs {len(want)}"  # type: ignore[arg-type]
            miss = f"{config.label} ({reason})"
            return processed_result(
                name=name, type=config.type, weight=weight, score=0.0, misses=[miss], reasoning=miss
            )
        d = distance(got, want, metric)
        ok = at_most(d, limit)
        line = f"{config.label} ({metric} distance {_show_distance(d)} {'<=' if ok else '>'} {limit:g})"
        return processed_result(
            name=name,
            type=config.type,
            weight=weight,
            score=1.0 if ok else 0.0,
            hits=[line] if ok else [],
            misses=[] if ok else [line],
            reasoning=line,
            details={
                "distance": _finite(d),
                "threshold": limit,
                "metric": metric,
                "drawn": _drawn([want], [got], _drawn_point),
            },
        )
    wanted = [expected] if _is_point(expected) else list(expected) if isinstance(expected, list) else [expected]
    found = [candidate] if _is_point(candidate) else list(candidate) if isinstance(candidate, list) else [candidate]
    return _distance_lists(config, wanted, found)


def _distance_lists(config: CoordinateDistanceConfig, wanted: list[Any], found: list[Any]) -> EvaluatorResult:
    import numpy as np

    misses: list[str] = []
    exp_ok = _valid(wanted, parse_point, "expected", "point", misses)
    cand_ok = _valid(found, parse_point, config.label, "point", misses)
    dims_e = {len(p) for _, p in exp_ok}
    dims_c = {len(p) for _, p in cand_ok}
    if len(dims_e) > 1 or len(dims_c) > 1 or (dims_e and dims_c and dims_e != dims_c):
        reason = f"dimension mismatch: {', '.join(map(str, sorted(dims_c)))} vs {', '.join(map(str, sorted(dims_e)))}"
        miss = f"{config.label} ({reason})"
        return processed_result(
            name=config.display_name,
            type=config.type,
            weight=config.weight,
            score=0.0,
            misses=[*misses, miss],
            reasoning=miss,
        )
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
        for i, j, _ in _pair(config.matching, exp_ok, cand_ok, matrix, maximize=False)
    ]
    hits, within = [], 0
    for i, j, d in pairs:
        line = f"expected[{i}] ~ {config.label}[{j}] ({config.metric} distance {_show_distance(d)}"
        if at_most(d, config.threshold):
            within += 1
            hits.append(line + f" <= {config.threshold:g})")
        else:
            misses.append(line + f" > {config.threshold:g})")
    paired_e = {i for i, _, _ in pairs}
    paired_c = {j for _, j, _ in pairs}
    misses += [f"expected[{i}] (no point found)" for i, _ in exp_ok if i not in paired_e]
    misses += [f"{config.label}[{j}] (extra point)" for j, _ in cand_ok if j not in paired_c]
    longest = max(len(wanted), len(found))
    score = within / longest if longest else 1.0
    details = {
        "pairs": [{"expected": i, "candidate": j, "distance": _finite(round(d, 6))} for i, j, d in pairs],
        "within": within,
        "threshold": config.threshold,
        "metric": config.metric,
        "matching": config.matching,
        "drawn": _drawn(wanted, found, _drawn_point),
    }
    return processed_result(
        name=config.display_name,
        type=config.type,
        weight=config.weight,
        score=score,
        hits=hits,
        misses=misses,
        reasoning=f"{within}/{longest} points within {config.threshold:g} ({config.metric})"
        if longest
        else "no points expected and none found",
        details=details,
    )


def _show_distance(d: float) -> str:
    return f"{d:.3g}" if math.isfinite(d) else "beyond the double range"


def _finite(d: float) -> float | None:
    """A distance for the row's details: None when it is beyond the double range (never inf)."""
    return d if math.isfinite(d) else None
