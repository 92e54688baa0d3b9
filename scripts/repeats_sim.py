#!/usr/bin/env python3
"""Repeated runs by simulation (issue 30, docs/statistics.md#repeats): synthetic extractors whose
documents each pass with a probability of their own (Beta-distributed over documents, so runs of
one document agree more than runs of two), K runs of each.

1. Coverage of the pass-rate interval with a case's runs resampled together (`clustered_rate`)
   against the true expected pass rate, beside Wilson's interval over every run taken as
   independent (what ignoring the repeats would give). Goal: 93-97%.
2. `agentv compare` of two repeated runs of the same extractor (nothing changed): how often a case
   is called a regression (one-sided Fisher exact p <= 0.05: case by case, compare's default, and
   Holm-adjusted across the cases, its --significant-only), and how often the whole gate fails on such a case;
   and with one real regression (a document's pass probability 0.95 -> 0.2), how often it is caught.

Usage: python scripts/repeats_sim.py [--runs 400] [--sizes 20 50 100] [--repeats 3 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentv_py.scoring.intervals import wilson
from agentv_py.scoring.repeats import clustered_pass_rate, clustered_rate
from agentv_py.scoring.stats import adjusted, fisher_fell_p

A, B = 2.0, 0.6  # documents' pass probabilities ~ Beta(2, 0.6): mean 0.77, many near 1, some hard


def coverage(rng: np.random.Generator, runs: int, size: int, k: int) -> tuple[float, float, float]:
    truth = A / (A + B)
    clustered = naive = bootstrapped = 0
    for seed in range(runs):
        p = rng.beta(A, B, size)
        passed = rng.binomial(k, p)
        _, interval = clustered_pass_rate((float(c), k) for c in passed)
        clustered += interval is not None and interval.low <= truth <= interval.high
        _, booted = clustered_rate(((float(c), k) for c in passed), seed=seed)
        bootstrapped += booted is not None and booted.low <= truth <= booted.high
        flat = wilson(int(passed.sum()), size * k)
        naive += flat is not None and flat.low <= truth <= flat.high
    return clustered / runs, bootstrapped / runs, naive / runs


def false_regressions(
    rng: np.random.Generator, runs: int, size: int, k: int, correction: str
) -> tuple[float, float, float]:
    """Nothing changed: the share of cases called regressed and of gates failed; then one document
    made worse (0.95 -> 0.2) among the others unchanged: the share of runs that call it regressed."""
    flagged_cases = failed_gates = caught = 0
    for _ in range(runs):
        p = rng.beta(A, B, size)
        flags = _regressed(rng.binomial(k, p), rng.binomial(k, p), k, correction)
        flagged_cases += sum(flags)
        failed_gates += any(flags)
        base_p, new_p = p.copy(), p.copy()
        base_p[0], new_p[0] = 0.95, 0.2
        caught += _regressed(rng.binomial(k, base_p), rng.binomial(k, new_p), k, correction)[0]
    return flagged_cases / (runs * size), failed_gates / runs, caught / runs


def _regressed(base: np.ndarray, new: np.ndarray, k: int, correction: str) -> list[bool]:
    """`agentv compare`'s rule: a fall with a one-sided Fisher p <= 0.05, adjusted across cases."""
    p_values = [fisher_fell_p(int(b), k, int(n), k) for b, n in zip(base, new, strict=True)]
    if correction != "none":
        p_values = adjusted(p_values, correction)
    return [p <= 0.05 and n < b for p, b, n in zip(p_values, base, new, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--repeats", type=int, nargs="+", default=[3, 5, 10])
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    print(f"documents' pass probability ~ Beta({A}, {B}): true pass rate {A / (A + B):.4f}; {args.runs} datasets each")
    print(f"Monte-Carlo error of a coverage share: about {100 * (0.95 * 0.05 / args.runs) ** 0.5:.1f} points")
    for k in args.repeats:
        for size in args.sizes:
            clustered, bootstrapped, naive = coverage(rng, args.runs, size, k)
            print(
                f"K={k} runs, {size:>3} documents: pass-rate interval coverage, Wilson at the design effect "
                f"{100 * clustered:.1f}%, bootstrap by case {100 * bootstrapped:.1f}%, rows taken as independent "
                f"(Wilson) {100 * naive:.1f}%"
            )
    for correction in ("none", "holm"):
        for k in args.repeats:
            for size in args.sizes:
                per_case, gate, caught = false_regressions(rng, args.runs, size, k, correction)
                mode = "default" if correction == "none" else "--significant-only"
                print(
                    f"{mode}: K={k} runs, {size:>3} documents, nothing changed: cases called regressed "
                    f"{100 * per_case:.2f}%, gates failed {100 * gate:.1f}%; one real regression (0.95 -> 0.2) "
                    f"caught {100 * caught:.1f}%"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
