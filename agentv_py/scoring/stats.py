"""Statistics over paired results, in the standard library: the exact McNemar test and a
percentile bootstrap interval. Pure and deterministic (a fixed seed): the same inputs give the same
numbers on every install (tests check them against scipy and by simulation).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 14  # fixed: the same two files always give the same interval

_DRAWS_PER_BINOMIAL = 16  # distinct values x this <= cases: resampled as a multinomial
_EXACT_UP_TO = 20_000  # discordant pairs summed in exact integers; beyond, Loader's saddle point form


def mcnemar_p(pass_to_fail: int, fail_to_pass: int) -> float:
    """The exact (binomial) two-sided McNemar p-value on the discordant pairs; 1.0 without any.

    Under H0 each discordant pair goes either way with p = 1/2: the distribution is symmetric, so
    the two-sided p-value is twice the smaller tail, capped at 1 (as scipy's binomtest gives)."""
    n = pass_to_fail + fail_to_pass
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_half_cdf(min(pass_to_fail, fail_to_pass), n))


def fisher_fell_p(base_passed: int, base_runs: int, new_passed: int, new_runs: int) -> float:
    """One-sided Fisher exact test that NEW's pass probability is below BASE's: the chance, when
    both have the same, that NEW gets `new_passed` passes or fewer of the runs' pooled passes, the
    runs of both fixed (the hypergeometric lower tail; scipy's `fisher_exact(..., "greater")` on
    [[base passed, failed], [new passed, failed]]). 1.0 without runs on either side."""
    if base_runs <= 0 or new_runs <= 0:
        return 1.0
    passes, total = base_passed + new_passed, base_runs + new_runs
    whole = math.comb(total, new_runs)
    low = max(0, passes - base_runs)
    tail = sum(math.comb(passes, k) * math.comb(total - passes, new_runs - k) for k in range(low, new_passed + 1))
    return min(1.0, tail / whole)


def binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), k <= n / 2: exact integer sums up to `_EXACT_UP_TO`
    trials (one rounding, at the end), else the largest term from Loader's saddle point formula
    and the smaller ones by their ratios (relative error ~1e-13)."""
    if n <= _EXACT_UP_TO:
        term = total = 1
        for i in range(1, k + 1):
            term = term * (n - i + 1) // i
            total += term
        return total / (1 << n)  # correctly rounded, however big
    largest = _binomial_half_pmf(k, n)
    tail, ratio = 1.0, 1.0
    for i in range(k, 0, -1):  # P(X = i - 1) / P(X = i) = i / (n - i + 1)
        ratio *= i / (n - i + 1)
        tail += ratio
        if ratio < tail * 1e-17:
            break
    return largest * tail


def _binomial_half_pmf(k: int, n: int) -> float:
    """P(X = k) for X ~ Binomial(n, 1/2), accurate for any n (Loader 2000, "Fast and accurate
    computation of binomial probabilities": Stirling-series remainders and the deviance term)."""
    if k == 0 or k == n:
        return math.exp(-n * math.log(2))
    half = n / 2
    stirling = _stirling_error(n) - _stirling_error(k) - _stirling_error(n - k)
    log_core = stirling - _deviance(k, half) - _deviance(n - k, half)
    log_factor = math.log(2 * math.pi) + math.log(k) + math.log1p(-k / n)
    return math.exp(log_core - 0.5 * log_factor)


def _stirling_error(n: int) -> float:
    """log(n!) - log(sqrt(2 pi n) (n/e)^n)."""
    if n <= 15:
        return math.lgamma(n + 1) - (n + 0.5) * math.log(n) + n - 0.5 * math.log(2 * math.pi)
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    nn = float(n) * n
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _deviance(x: float, mean: float) -> float:
    """x log(x / mean) + mean - x, without the cancellation when x is near mean."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        total = (x - mean) * v
        term = 2 * x * v
        v *= v
        j = 1
        while True:
            term *= v
            following = total + term / (2 * j + 1)
            if following == total:
                return following
            total = following
            j += 1
    return x * math.log(x / mean) + mean - x


def bootstrap_ci(
    deltas: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED, level: float = 0.95
) -> tuple[float, float] | None:
    """A percentile bootstrap interval on the mean of paired deltas: cases resampled with
    replacement (`random.Random(seed)`, so the same deltas always give the same interval), the
    percentiles interpolated linearly between order statistics (numpy's default). None without
    any case.

    A resample's mean depends only on how many draws fall on each distinct value: with few
    distinct values (score deltas are mostly 0, and multiples of a field's weight) those counts
    are drawn as one multinomial (a binomial per value), not one draw per case; the two ways
    sample the same distribution, and the choice depends on the deltas alone."""
    values = deltas  # a list, or compare's array of doubles (not copied)
    n = len(values)
    if n == 0:
        return None
    if min(values) == max(values):
        return float(values[0]), float(values[0])  # no spread: the interval is the point (no rounding in the means)
    rng = random.Random(seed)
    counts = Counter(values)
    if len(counts) * _DRAWS_PER_BINOMIAL <= n:
        distinct = sorted(counts)
        weights = [counts[v] for v in distinct]
        means = sorted(_multinomial_mean(rng, distinct, weights, n) for _ in range(resamples))
    else:
        means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def _multinomial_mean(rng: random.Random, distinct: list[float], weights: list[int], n: int) -> float:
    """The mean of n draws with replacement from a list holding each of `distinct` `weights` times."""
    total, left, weight_left = 0.0, n, n
    for value, weight in zip(distinct[:-1], weights[:-1], strict=True):
        drawn = binomial(rng, left, weight / weight_left)
        total += value * drawn
        left -= drawn
        weight_left -= weight
    return (total + distinct[-1] * left) / n


def binomial(rng: random.Random, n: int, p: float) -> int:
    """A Binomial(n, p) variate: Devroye's geometric method when n p < 10, else Hormann's
    transformed rejection with squeeze (BTRS, 1993); O(1) expected uniforms for large n."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - binomial(rng, n, 1.0 - p)
    random_ = rng.random
    if n * p < 10.0:
        successes = trials = 0
        c = math.log(1.0 - p)
        while True:
            trials += math.floor(math.log(1.0 - random_()) / c) + 1  # the wait to the next success
            if trials > n:
                return successes
            successes += 1
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    log_odds = math.log(p / (1.0 - p))
    mode = math.floor((n + 1) * p)
    h = math.lgamma(mode + 1) + math.lgamma(n - mode + 1)
    while True:
        u = random_() - 0.5
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        v = random_()
        if us >= 0.07 and v <= v_r:
            return k  # the squeeze: accepted without the density
        v *= alpha / (a / (us * us) + b)
        if v > 0.0 and math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - mode) * log_odds:
            return k


def _quantile(ordered: list[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


CORRECTIONS = ("holm", "bh")


def adjusted(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """p-values adjusted for testing them together, in their order: Holm's step-down (1979; the
    family-wise error rate) or Benjamini-Hochberg's step-up (1995; the false discovery rate), as
    statsmodels' `multipletests(method="holm" | "fdr_bh")` computes them."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    if method == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[i]))
            out[i] = running
        return out
    if method == "bh":
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, m * p_values[i] / (rank + 1))
            out[i] = min(1.0, running)
        return out
    raise ValueError(f"unknown correction {method!r}: holm or bh")
