"""Confidence intervals for dataset metrics (docs/statistics.md).

- A share of cases (the pass rate; a scalar field's precision or recall, where each document adds
  at most one to the denominator) gets the **Wilson score interval** (Wilson 1927), a closed form.
- Anything else (F1, micro and macro F1, a mean score, precision and recall of list fields) gets a
  **document-level bootstrap** with Efron's BCa bounds (bias-corrected and accelerated: plain
  percentiles cover too little on a few dozen documents): documents are resampled with
  replacement, every field's counts moving with their document (fields of one document are not
  independent). The generator is numpy's PCG64 with a fixed, recorded seed: the same results
  give the same interval.

A resample depends only on how many times each distinct document (its vector of counts, its
`signature`) is drawn, so documents are grouped by signature and a resample is one multinomial
draw over the groups: the same distribution as drawing documents one by one, at the cost of the
number of distinct signatures. The number of resamples adapts to the spread: a pilot of
`PILOT_RESAMPLES` estimates each metric's bootstrap standard deviation s, and the run takes
B = (2.67 s / BOUND_SE)^2 resamples, within [MIN_RESAMPLES, MAX_RESAMPLES]: the Monte-Carlo
standard error of a 2.5% percentile of a normal is about 2.67 s / sqrt(B), so each bound is stable
to about 2 * BOUND_SE = 0.005 between seeds. A resample where a metric is undefined (its
denominator is 0) is left out of that metric's percentiles.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

LEVEL = 0.95
SEED = 20_260_227  # recorded with every interval: `--seed` changes it
PILOT_RESAMPLES = 200
MIN_RESAMPLES = 500
MAX_RESAMPLES = 50_000
BOUND_SE = 0.001  # target Monte-Carlo standard error of each bound (by the normal formula; BCa doubles it)
_CHUNK_CELLS = 1_000_000  # resamples x distinct signatures drawn at once (memory: 8 MB of counts)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str  # "wilson" or "bootstrap"

    def shown(self, value: float | None, digits: int = 2) -> str:
        """`0.80 [0.62, 0.93]`."""
        point = "-" if value is None else f"{value:.{digits}f}"
        return f"{point} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def to_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "method": self.method}


def check_level(level: float) -> float:
    """A confidence level strictly between 0 and 1 (ValueError otherwise)."""
    if not (math.isfinite(level) and 0 < level < 1):
        raise ValueError(f"the confidence level is between 0 and 1 (exclusive), got {level!r}")
    return float(level)


def wilson(successes: float, trials: float, level: float = LEVEL) -> Interval | None:
    """The Wilson score interval of successes / trials (None without trials)."""
    if trials <= 0:
        return None
    z = NormalDist().inv_cdf(0.5 + check_level(level) / 2)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials)) / (1 + z2n)
    return Interval(max(0.0, centre - half), min(1.0, centre + half), "wilson")


Statistic = Callable[["np.ndarray"], "np.ndarray"]


@dataclass(frozen=True)
class Bootstrap:
    """What a bootstrap did, recorded beside its intervals."""

    seed: int
    resamples: int
    documents: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "document bootstrap (BCa)",
            "seed": self.seed,
            "resamples": self.resamples,
            "documents": self.documents,
            "level": self.level,
        }


def bootstrap(
    signatures: Mapping[tuple[float, ...], int],
    statistic: Statistic,
    level: float = LEVEL,
    seed: int = SEED,
    resamples: int | None = None,
) -> tuple[list[Interval | None], Bootstrap]:
    """Percentile intervals of each metric `statistic` computes from summed document vectors.

    `signatures`: each distinct document vector (its counts, or its score) and how many documents
    have it. `statistic` maps a (b, d) array of summed vectors, one row per resample, to a (b, q)
    array of q metrics (NaN where undefined). `resamples`: fixed instead of adaptive."""
    import numpy as np

    vectors = np.array(list(signatures), dtype=np.float64)
    weights = np.array(list(signatures.values()), dtype=np.int64)
    return bootstrap_arrays(vectors, weights, statistic, level, seed, resamples)


def bootstrap_arrays(
    vectors: np.ndarray,
    weights: np.ndarray,
    statistic: Statistic,
    level: float = LEVEL,
    seed: int = SEED,
    resamples: int | None = None,
) -> tuple[list[Interval | None], Bootstrap]:
    """`bootstrap` of distinct document vectors (a (k, d) array) and their counts (k)."""
    import numpy as np

    level = check_level(level)
    documents = int(weights.sum())
    if documents == 0:
        raise ValueError("no documents to resample")
    if vectors.ndim == 1:
        vectors = vectors.reshape(-1, 1)
    rng = np.random.Generator(np.random.PCG64(seed))
    shares = weights / documents

    def draw(count: int) -> np.ndarray:
        rows = max(1, _CHUNK_CELLS // len(weights))
        parts = []
        while count > 0:
            take = min(rows, count)
            counts = rng.multinomial(documents, shares, size=take)
            parts.append(statistic(counts @ vectors))
            count -= take
        return np.concatenate(parts)

    if resamples is None:
        values = draw(PILOT_RESAMPLES)
        with warnings.catch_warnings():  # a metric undefined in every resample has no spread
            warnings.simplefilter("ignore", RuntimeWarning)
            spread = np.nanstd(values, axis=0)
        widest = float(np.nanmax(spread)) if not np.all(np.isnan(spread)) else 0.0
        wanted = math.ceil((2.67 * widest / BOUND_SE) ** 2)
        total = min(MAX_RESAMPLES, max(MIN_RESAMPLES, wanted))
        values = np.concatenate([values, draw(total - PILOT_RESAMPLES)])
    else:
        total = resamples
        values = draw(resamples)
    summed = weights @ vectors
    point = statistic(summed.reshape(1, -1))[0]
    left_out = statistic(summed - vectors)  # the jackknife: each distinct document left out once
    intervals: list[Interval | None] = []
    for q, column in enumerate(values.T):
        defined = column[~np.isnan(column)]
        if np.isnan(point[q]) or defined.size < total / 2:  # undefined here or in most resamples
            intervals.append(None)
            continue
        low, high = _bca(defined, float(point[q]), left_out[:, q], weights, level)
        intervals.append(Interval(low, high, "bootstrap"))
    return intervals, Bootstrap(seed, total, documents, level)


def _bca(
    values: np.ndarray, point: float, left_out: np.ndarray, weights: np.ndarray, level: float
) -> tuple[float, float]:
    """Efron's bias-corrected and accelerated (BCa) percentile bounds (Efron 1987; Efron &
    Tibshirani 1993, ch. 14): the bias correction z0 from the share of resamples below the
    estimate, the acceleration from the jackknife (documents grouped by signature, `weights`)."""
    import numpy as np

    normal = NormalDist()
    # Efron's #{theta* < theta} / B, ties counted half (mid-p): F1 on a few dozen documents takes
    # few values, a third of the resamples can equal the estimate, and counting them all on one
    # side pushes both bounds past it
    below = (np.count_nonzero(values < point) + 0.5 * np.count_nonzero(values == point)) / values.size
    if below <= 0 or below >= 1:  # every resample on one side: the plain percentiles
        z0 = 0.0
    else:
        z0 = normal.inv_cdf(below)
    keep = ~np.isnan(left_out)
    acceleration = 0.0
    if keep.any():
        jack, counts = left_out[keep], weights[keep]
        centred = (jack * counts).sum() / counts.sum() - jack
        spread = (counts * centred**2).sum()
        if spread > 0:
            acceleration = float((counts * centred**3).sum() / (6 * spread**1.5))
    bounds = []
    for tail in ((1 - level) / 2, (1 + level) / 2):
        z = normal.inv_cdf(tail)
        adjusted = z0 + (z0 + z) / (1 - acceleration * (z0 + z))
        bounds.append(min(1.0, max(0.0, normal.cdf(adjusted))))
    low, high = np.quantile(values, bounds)
    return float(low), float(high)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def prf_statistic(fields: int) -> Statistic:
    """For document vectors laid out as (tp, fp, fn) per field: per field precision, recall, F1
    (3 columns each, in field order), then micro P, R, F1 (the summed counts) and macro F1 (the
    mean of the fields' F1 that are defined)."""
    import numpy as np

    def statistic(sums: np.ndarray) -> np.ndarray:
        tp, fp, fn = sums[:, 0::3], sums[:, 1::3], sums[:, 2::3]
        precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
        f1 = ratio(2 * tp, 2 * tp + fp + fn)
        ttp, tfp, tfn = tp.sum(axis=1), fp.sum(axis=1), fn.sum(axis=1)
        with warnings.catch_warnings():  # a resample where no field's F1 is defined: NaN, said once here
            warnings.simplefilter("ignore", RuntimeWarning)
            macro = np.nanmean(f1, axis=1)
        columns = [precision, recall, f1]
        per_field = np.stack(columns, axis=2).reshape(sums.shape[0], 3 * fields)
        micro = np.stack(
            [ratio(ttp, ttp + tfp), ratio(ttp, ttp + tfn), ratio(2 * ttp, 2 * ttp + tfp + tfn), macro], axis=1
        )
        return np.concatenate([per_field, micro], axis=1)

    return statistic


def mean_statistic(sums: np.ndarray) -> np.ndarray:
    """For document vectors (score, 1): the mean score."""
    return ratio(sums[:, 0:1], sums[:, 1:2])


def mean_interval(scores: Sequence[float], level: float = LEVEL, seed: int = SEED) -> tuple[Interval | None, Bootstrap]:
    """The bootstrap interval of the mean of `scores` (one per document)."""
    groups: dict[tuple[float, ...], int] = {}
    for score in scores:
        key = (float(score), 1.0)
        groups[key] = groups.get(key, 0) + 1
    [interval], run = bootstrap(groups, mean_statistic, level, seed)
    return interval, run


@dataclass(frozen=True)
class Headline:
    """A run's pass rate and mean score, each with its interval (`headline`)."""

    cases: int
    pass_rate: float
    pass_rate_interval: Interval | None
    mean: float
    mean_interval: Interval | None
    level: float

    def parts(self) -> list[str]:
        """`pass rate 0.71 [0.36, 0.92]`, `mean score 0.89 [0.75, 0.97]`, `(95% intervals, 7 cases)`."""
        rate = self.pass_rate_interval.shown(self.pass_rate) if self.pass_rate_interval else f"{self.pass_rate:.2f}"
        mean = self.mean_interval.shown(self.mean) if self.mean_interval else f"{self.mean:.2f}"
        cases = "1 case" if self.cases == 1 else f"{self.cases} cases"
        return [f"pass rate {rate}", f"mean score {mean}", f"({self.level:.0%} intervals, {cases})"]

    def shown(self) -> str:
        rate, mean, how = self.parts()
        return f"{rate}, {mean} {how}"


def headline(passed: int, scores: Sequence[float], level: float = LEVEL, seed: int = SEED) -> Headline | None:
    """The pass rate (`passed` of `len(scores)` cases: Wilson) and the mean score (the bootstrap,
    BCa) of a run; None without cases."""
    if not scores:
        return None
    mean, interval = math.fsum(scores) / len(scores), None
    if len(scores) > 1:
        interval, _ = mean_interval(scores, level, seed)
    return Headline(len(scores), passed / len(scores), wilson(passed, len(scores), level), mean, interval, level)


def bootstrap_sd(
    vectors: np.ndarray, weights: np.ndarray, statistic: Statistic, seed: int = SEED, resamples: int = 2_000
) -> list[float | None]:
    """The bootstrap standard deviation (standard error) of each metric `statistic` computes, over
    `resamples` document resamples (as `bootstrap_arrays` draws them); None where undefined."""
    import numpy as np

    documents = int(weights.sum())
    rng = np.random.Generator(np.random.PCG64(seed))
    counts = rng.multinomial(documents, weights / documents, size=resamples)
    values = statistic(counts @ vectors)
    out: list[float | None] = []
    for column in values.T:
        defined = column[~np.isnan(column)]
        out.append(float(np.std(defined, ddof=1)) if defined.size >= resamples / 2 else None)
    return out
