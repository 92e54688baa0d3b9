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


@pytest.mark.parametrize(
    ("size", "draw"),
    [
        (40, lambda data: data.expovariate(1.0) - 1.0),  # skewed, continuous: per-case resampling
        (200, lambda data: data.choice([0.0, 0.0, 0.0, 1 / 3, -1 / 3, -2 / 3, 2 / 3])),  # discrete: multinomial
    ],
    ids=["continuous", "few-values"],
)
def test_the_bootstrap_interval_covers_the_mean_about_95_percent_of_the_time(size, draw):
    """200 samples with a known mean (0): the percentile interval holds it in close to 95% of
    them (a percentile bootstrap runs a little under at small sizes)."""
    data = random.Random(5)
    covered = 0
    trials = 200
    for trial in range(trials):
        sample = [draw(data) for _ in range(size)]
        interval = stats.bootstrap_ci(sample, resamples=500, seed=trial)
        assert interval is not None
        covered += interval[0] <= 0.0 <= interval[1]
    assert 0.88 <= covered / trials <= 0.99, covered


@pytest.mark.parametrize(("n", "p"), [(20, 0.1), (9, 0.5), (1000, 0.3), (100_000, 0.63), (50, 0.97)])
def test_binomial_variates_follow_the_binomial_distribution(n, p):
    """Chi-square goodness of fit against scipy's pmf over 20,000 variates (cells of expected
    count >= 5 merged into the tails), at the 0.1% level: a wrong sampler fails, a right one passes."""
    from scipy.stats import binom, chisquare

    rng = random.Random(11)
    draws = [stats.binomial(rng, n, p) for _ in range(20_000)]
    assert all(0 <= k <= n for k in draws)
    low, high = int(binom.ppf(0.001, n, p)), int(binom.ppf(0.999, n, p))
    observed = [sum(k <= low for k in draws)] + [draws.count(k) for k in range(low + 1, high)]
    observed.append(sum(k >= high for k in draws))
    expected = [binom.cdf(low, n, p)] + [binom.pmf(k, n, p) for k in range(low + 1, high)]
    expected.append(binom.sf(high - 1, n, p))
    expected = [e * len(draws) / sum(expected) for e in expected]
    assert chisquare(observed, expected).pvalue > 0.001


def test_the_multinomial_and_the_per_case_resampling_give_the_same_interval():
    """Deltas with few distinct values go through the multinomial; the same deltas with one value
    nudged per case go through per-case draws: the intervals agree within Monte Carlo error."""
    deltas = [0.0] * 700 + [-1 / 9] * 150 + [1 / 9] * 100 + [-2 / 9] * 50
    grouped = stats.bootstrap_ci(deltas, resamples=4000)
    nudged = stats.bootstrap_ci([d + i * 1e-12 for i, d in enumerate(deltas)], resamples=4000)
    assert grouped is not None and nudged is not None
    assert grouped == pytest.approx(nudged, abs=0.002)
    mean = sum(deltas) / len(deltas)
    assert grouped[0] < mean < grouped[1]
