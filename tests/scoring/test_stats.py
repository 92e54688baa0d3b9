"""`scoring.stats`: the McNemar tail in both of its forms against exact fractions, and the
bootstrap interval's coverage by simulation."""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

import pytest

from agentv_py.scoring import stats


def exact_tail(k: int, n: int) -> Fraction:
    return Fraction(sum(comb(n, i) for i in range(k + 1)), 2**n)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (3, 10), (40, 100), (499, 1000), (333, 1001), (1900, 4000)])
def test_both_forms_of_the_tail_agree_with_exact_fractions(monkeypatch, k, n):
    exact = float(exact_tail(k, n))
    assert stats.binomial_half_cdf(k, n) == exact  # integer sums: one rounding
    monkeypatch.setattr(stats, "_EXACT_UP_TO", 0)  # Loader's saddle point form
    assert stats.binomial_half_cdf(k, n) == pytest.approx(exact, rel=1e-12)


def test_the_bootstrap_interval_covers_the_mean_about_95_percent_of_the_time():
    """200 samples of 40 skewed deltas with a known mean: the percentile interval holds it in
    close to 95% of them (a percentile bootstrap runs a little under at this size)."""
    data = random.Random(5)
    covered = 0
    trials = 200
    for trial in range(trials):
        sample = [data.expovariate(1.0) - 1.0 for _ in range(40)]  # mean 0
        low, high = stats.bootstrap_ci(sample, resamples=500, seed=trial)
        covered += low <= 0.0 <= high
    assert 0.88 <= covered / trials <= 0.99, covered
