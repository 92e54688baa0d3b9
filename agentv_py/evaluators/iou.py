"""`iou_score`: how well the answer's shapes (boxes, polygons) overlap the expected ones, one shape
or lists of shapes paired by index or optimally, with TP/FP/FN at the IoU threshold."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.geometry import (
    answer_labelled,
    ap_record,
    counted,
    drawn_shape,
    drawn_sides,
    expected_labelled,
    pair_items,
    pick_values,
    scored,
    shape_noun,
    unpaired,
    valid_items,
)
from agentv_py.models.evaluators import IouScoreConfig
from agentv_py.models.field_results import DetectionDetails, GeometryPair, to_details
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.geometry import (
    as_bbox,
    iou,
    iou_matrix,
    is_single,
    parse_shape,
)
from agentv_py.scoring.metrics import Counts
from agentv_py.scoring.thresholds import at_least

# ----------------------------------------------------------------------------- iou_score


def evaluate_iou(config: IouScoreConfig, context: EvalContext) -> EvaluatorResult:
    """`type: iou_score`. Options: `path` / `expected_path` (where the shapes are; default the
    whole answer), `format` / `expected_format` (xyxy, xywh, polygon), `threshold` (IoU that
    counts as a match, default 0.5), `matching` (optimal or index), `polygon_mode` (exact or
    bbox), `name`, `weight`. One box scores its IoU; lists score total pair IoU / max(len)."""
    candidate, expected, early = pick_values(config, context)
    if early is not None:
        return early
    cand_fmt, exp_fmt = config.format, config.expected_format or config.format
    if config.label_key is not None:
        return _labelled_lists(config, expected, candidate)
    if is_single(expected, exp_fmt) and is_single(candidate, cand_fmt):
        want, _ = parse_shape(expected, exp_fmt)
        assert want is not None  # the ground truth was checked by pick_values
        got, problem = parse_shape(candidate, cand_fmt)
        if got is None:  # a shape given but unusable: a wrong answer (FP and FN), as one in the wrong place
            miss = f"{config.label} (invalid {shape_noun(cand_fmt)}: {problem})"
            details = counted(Counts(fp=1, fn=1), threshold=config.threshold)
            return scored(config, 0.0, miss, misses=[miss], passed=False, details=details)
        if config.polygon_mode == "bbox":
            want, got = as_bbox(want), as_bbox(got)
        value = iou(want, got)
        ok = at_least(value, config.threshold)
        line = f"{config.label} (IoU {value:.2f}{'' if ok else f' < {config.threshold:.2f}'})"
        return scored(
            config,
            value,
            f"IoU {value:.3f} (threshold {config.threshold:g})",
            passed=ok,
            hits=[line] if ok else [],
            misses=[] if ok else [line],
            details=to_details(
                DetectionDetails(
                    iou=value,
                    threshold=config.threshold,
                    format=cand_fmt,
                    expected_format=exp_fmt,
                    drawn=drawn_sides([want], [got], drawn_shape),  # both parsed already
                )
            ),
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
    exp_ok = valid_items(wanted, parse(exp_fmt), "expected", "box", misses)
    cand_ok = valid_items(found, parse(cand_fmt), config.label, "box", misses)
    matrix = iou_matrix([s for _, s in exp_ok], [s for _, s in cand_ok])
    drawn = drawn_sides(
        wanted,
        found,
        lambda value: drawn_shape(parse(exp_fmt)(value)[0]),
        lambda value: drawn_shape(parse(cand_fmt)(value)[0]),
    )
    return _scored_lists(config, len(wanted), len(found), exp_ok, cand_ok, matrix, misses, drawn)


def _labelled_lists(config: IouScoreConfig, expected: Any, candidate: Any) -> EvaluatorResult:
    """Labelled boxes: a pair only within a class (so a box of the wrong class is a miss and a
    spurious box), and the image's COCO record (`details.ap`) for `agentv metrics`."""
    wanted = list(expected) if isinstance(expected, list) else [expected]
    found = list(candidate) if isinstance(candidate, list) else [candidate]
    misses: list[str] = []
    exp_ok = valid_items(wanted, expected_labelled(config), "expected", "labelled box", misses)
    cand_ok = valid_items(found, answer_labelled(config), config.label, "labelled box", misses)
    ious = iou_matrix([box.shape for _, box in exp_ok], [box.shape for _, box in cand_ok])
    same = [[want.label == got.label for _, got in cand_ok] for _, want in exp_ok]
    paired = ious * _mask(same).reshape(ious.shape)
    record = ap_record(
        [box.label for _, box in exp_ok], [box.label for _, box in cand_ok], [box.score for _, box in cand_ok], ious.T
    )
    drawn = drawn_sides(
        wanted,
        found,
        lambda value: drawn_shape(box.shape if (box := expected_labelled(config)(value)[0]) else None),
        lambda value: drawn_shape(box.shape if (box := answer_labelled(config)(value)[0]) else None),
    )
    return _scored_lists(config, len(wanted), len(found), exp_ok, cand_ok, paired, misses, drawn, ap=record)


def _mask(same: list[list[bool]]) -> Any:
    import numpy as np

    return np.array(same, dtype=float)


def _scored_lists(
    config: IouScoreConfig,
    n_wanted: int,
    n_found: int,
    exp_ok: list[tuple[int, Any]],
    cand_ok: list[tuple[int, Any]],
    matrix: Any,
    misses: list[str],
    drawn: dict[str, Any],
    ap: dict[str, Any] | None = None,
) -> EvaluatorResult:
    # With optimal matching a zero-overlap "pair" means nothing: a missed and a spurious box.
    pairs = pair_items(config.matching, exp_ok, cand_ok, matrix, maximize=True, keep=lambda v: v > 0)
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
    misses += unpaired(pairs, exp_ok, cand_ok, config.label, "no box found", "spurious box")
    counts = Counts(tp=tp, fp=n_found - tp, fn=n_wanted - tp)
    longest = max(n_wanted, n_found)
    score = sum(v for _, _, v in pairs) / longest if longest else 1.0
    notes = {"ap": ap} if ap is not None else {}
    details = counted(
        counts,
        pairs=[GeometryPair(expected=i, candidate=j, iou=round(v, 6)) for i, j, v in pairs],
        mean_iou_matched=sum(matched_ious) / len(matched_ious) if matched_ious else None,
        threshold=config.threshold,
        matching=config.matching,
        drawn=drawn,
        **notes,
    )
    reasoning = (
        f"{tp}/{n_wanted} expected boxes found at IoU >= {config.threshold:g}, {counts.fp} spurious"
        if longest
        else "no boxes expected and none found"
    )
    return scored(config, score, reasoning, hits=hits, misses=misses, details=details)
