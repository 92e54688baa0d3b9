"""Statistics over paired results, in the standard library: the exact McNemar test and a
percentile bootstrap interval. Pure and deterministic (a fixed seed): the same inputs give the same
numbers on every install (tests check them against scipy and by simulation).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 14  # fixed: the same two files always give the same interval

_EXACT_UP_TO = 20_000  # discordant pairs summed in exact integers; beyond, Loader's saddle point form


def mcnemar_p(pass_to_fail: int, fail_to_pass: int) -> float:
    """The exact (binomial) two-sided McNemar p-value on the discordant pairs; 1.0 without any.

    Under H0 each discordant pair goes either way with p = 1/2: the distribution is symmetric, so
    the two-sided p-value is twice the smaller tail, capped at 1 (as scipy's binomtest gives)."""
    n = pass_to_fail + fail_to_pass
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_half_cdf(min(pass_to_fail, fail_to_pass), n))


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
    deltas: Iterable[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED, level: float = 0.95
) -> tuple[float, float] | None:
    """A percentile bootstrap interval on the mean of paired deltas: cases resampled with
    replacement (`random.Random(seed)`, so the same deltas always give the same interval), the
    percentiles interpolated linearly between order statistics (numpy's default). None without
    any case."""
    values = [float(d) for d in deltas]
    n = len(values)
    if n == 0:
        return None
    if min(values) == max(values):
        return values[0], values[0]  # no spread: the interval is the point (no rounding in the means)
    choices = random.Random(seed).choices
    means = sorted(sum(choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def _quantile(ordered: list[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
