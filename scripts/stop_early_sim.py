#!/usr/bin/env python3
"""`--stop-early`'s error rate, by simulation (issue 30): synthetic datasets of N cases whose mean
score sits near the gate's threshold (the hard case) or far from it; the cases are drawn in a
random order and fed to the confidence sequence (scoring/sequential.py) one by one, as the run
does. Prints how often the run decided the wrong side of the threshold (goal: <= alpha), how often
the sequence ever excluded the true mean (<= alpha by Ville's inequality), and the cases used.

Usage: python scripts/stop_early_sim.py [--runs 500] [--cases 300] [--alpha 0.05]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentv_py.scoring.sequential import MeanSequence


def one_run(
    scores: np.ndarray, threshold: float, alpha: float, rng: np.random.Generator
) -> tuple[str | None, int, bool]:
    sequence = MeanSequence(len(scores), alpha)
    truth = float(scores.mean())
    excluded = False
    for used, i in enumerate(rng.permutation(len(scores)), 1):
        sequence.add(float(scores[i]))
        excluded = excluded or not (sequence.low - 1e-12 <= truth <= sequence.high + 1e-12)
        decided = sequence.decision(threshold)
        if decided is not None:
            return decided, used, excluded
    return None, len(scores), excluded


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    print(f"{args.runs} runs per setting, {args.cases} cases, alpha {args.alpha}")
    for label, gap in (
        ("threshold 0.02 under the mean", 0.02),
        ("threshold at the mean", 0.0),
        ("threshold 0.02 over the mean", -0.02),
        ("threshold 0.15 under the mean", 0.15),
    ):
        wrong = excluded = 0
        used = []
        for _ in range(args.runs):
            scores = rng.choice([0.0, 0.5, 0.75, 1.0], size=args.cases, p=[0.1, 0.1, 0.2, 0.6])
            threshold = float(scores.mean()) - gap
            truth = "above" if scores.mean() >= threshold else "below"
            decided, cases, missed = one_run(scores, threshold, args.alpha, rng)
            wrong += decided is not None and decided != truth
            excluded += missed
            used.append(cases)
        print(
            f"{label}: wrong decisions {100 * wrong / args.runs:.1f}%, true mean ever excluded "
            f"{100 * excluded / args.runs:.1f}%, cases run: median {int(np.median(used))} of {args.cases}"
        )
    scores = rng.choice([0.0, 1.0], size=10_000, p=[0.05, 0.95])
    decided, cases, _ = one_run(scores, 0.8, args.alpha, rng)
    print(f"10,000 cases, mean {scores.mean():.3f}, threshold 0.8: decided {decided} after {cases} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
