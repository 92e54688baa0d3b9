#!/usr/bin/env python3
"""Coverage of the confidence intervals (issue 30): synthetic datasets whose population precision,
recall and F1 are known (one scalar field; each document right, wrong, missed, invented or empty
with fixed probabilities), many datasets per size; prints how often each nominal 95% interval
holds the truth (goal: 93-97%): Wilson's (precision, recall) and the document bootstrap's (BCa;
precision, recall, F1).

Usage: python scripts/interval_coverage.py [--sizes 20 40 100 300] [--runs 500] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentv_py.scoring.intervals import bootstrap, prf_statistic, wilson

OUTCOMES = np.array([(1, 0, 0), (0, 1, 1), (0, 0, 1), (0, 1, 0), (0, 0, 0)])  # right, wrong, missed, invented, empty
PROBS = [0.7, 0.1, 0.1, 0.05, 0.05]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 100, 300])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=2000, help="fixed per interval (0: adaptive, slower)")
    args = parser.parse_args()
    tp, fp, fn = np.array(PROBS) @ OUTCOMES
    truth = {"precision": tp / (tp + fp), "recall": tp / (tp + fn), "f1": 2 * tp / (2 * tp + fp + fn)}
    print(f"truth: precision {truth['precision']:.4f}, recall {truth['recall']:.4f}, F1 {truth['f1']:.4f}")
    print(
        f"{args.runs} datasets per size, nominal 95%; each share's Monte-Carlo error is about "
        f"{100 * (0.95 * 0.05 / args.runs) ** 0.5:.1f} points"
    )
    rng = np.random.default_rng(2026)
    for size in args.sizes:
        hits = dict.fromkeys(
            ("wilson precision", "wilson recall", "bootstrap precision", "bootstrap recall", "bootstrap F1"), 0
        )
        for run in range(args.runs):
            rows = OUTCOMES[rng.choice(len(OUTCOMES), size=size, p=PROBS)]
            groups: dict[tuple[float, ...], int] = {}
            for row in rows:
                key = tuple(float(v) for v in row)
                groups[key] = groups.get(key, 0) + 1
            intervals, _ = bootstrap(groups, prf_statistic(1), seed=run, resamples=args.resamples or None)
            for name, interval, true in zip(("precision", "recall", "F1"), intervals, truth.values(), strict=False):
                hits[f"bootstrap {name}"] += interval is not None and interval.low <= true <= interval.high
            s_tp, s_fp, s_fn = (int(v) for v in rows.sum(axis=0))
            for name, interval, true in (
                ("precision", wilson(s_tp, s_tp + s_fp), truth["precision"]),
                ("recall", wilson(s_tp, s_tp + s_fn), truth["recall"]),
            ):
                hits[f"wilson {name}"] += interval is not None and interval.low <= true <= interval.high
        shown = ", ".join(f"{name} {100 * count / args.runs:.1f}%" for name, count in hits.items())
        print(f"{size} documents: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
