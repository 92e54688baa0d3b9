#!/usr/bin/env python3
"""Geometry benchmark: IoU latency, IoU matrix + optimal assignment, point distances.

Prints, from one run:
  1. one IoU (box vs box, polygon vs polygon, and through the iou_score evaluator), median
     latency (seed bar: < 5 ms; ours should be microseconds);
  2. a 1000 x 1000 IoU matrix plus optimal assignment (bar: < 0.5 s);
  3. 100,000 point distances for each metric (bar: < 0.1 s).

Usage: python scripts/bench_geometry.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import print_calibration  # noqa: E402

from agentv_py.evaluators import EvalContext, run_evaluator  # noqa: E402
from agentv_py.models.evaluators import IouScoreConfig  # noqa: E402
from agentv_py.scoring.geometry import box_iou_matrix, distance_matrix, iou, pair_indices, parse_shape  # noqa: E402


def median_us(fn, repeat: int) -> float:
    fn()  # warm (imports, caches)
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def main() -> int:
    print_calibration()
    box_a, _ = parse_shape([0, 0, 20, 20], "xyxy")
    box_b, _ = parse_shape([5, 5, 25, 25], "xyxy")
    poly_a, _ = parse_shape([[0, 0], [20, 0], [20, 20], [0, 20]], "polygon")
    poly_b, _ = parse_shape([[10, -4], [24, 10], [10, 24], [-4, 10]], "polygon")
    config = IouScoreConfig.model_validate({"type": "iou_score", "path": "box"})
    context = EvalContext("c", "d", Path("."), json.dumps({"box": [5, 5, 25, 25]}), {"box": [0, 0, 20, 20]})
    print("single IoU, median latency:")
    print(f"  box vs box                 : {median_us(lambda: iou(box_a, box_b), 20000):8.2f} us")
    print(f"  polygon vs polygon (shapely): {median_us(lambda: iou(poly_a, poly_b), 5000):8.2f} us")
    print(f"  iou_score evaluator, 1 box : {median_us(lambda: run_evaluator(config, context), 5000):8.2f} us")

    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 1000, size=(1000, 2))
    wh = rng.uniform(5, 60, size=(1000, 2))
    expected = np.hstack([xy, xy + wh])
    candidate = expected[rng.permutation(1000)] + rng.normal(0, 2, size=(1000, 4))
    candidate[:, 2:] = np.maximum(candidate[:, 2:], candidate[:, :2])
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        matrix = box_iou_matrix(expected, candidate)
        pairs = pair_indices(matrix, "optimal", True)
        runs.append(time.perf_counter() - started)
    assert len(pairs) == 1000
    print(f"1000 x 1000 IoU matrix + optimal assignment: {statistics.median(runs):.3f} s (median of 5)")

    print("100,000 point distances (a 1000 x 100 matrix of 2-D points), median of 5:")
    a, b = rng.uniform(0, 1000, size=(1000, 2)), rng.uniform(0, 1000, size=(100, 2))
    for metric in ("euclidean", "manhattan", "cosine"):
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            distances = distance_matrix(a, b, metric)
            runs.append(time.perf_counter() - started)
        assert distances.size == 100_000
        print(f"  {metric:<9}: {statistics.median(runs) * 1000:7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
