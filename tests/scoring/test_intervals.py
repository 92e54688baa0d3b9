"""Confidence intervals (scoring/intervals.py) checked against independent implementations
(statsmodels' Wilson interval, scipy's BCa bootstrap) and by simulation: nominal 95% intervals
cover the true value 93-97% of the time on synthetic data with a known answer."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from agentv_py.scoring.intervals import (
    MIN_RESAMPLES,
    bootstrap,
    check_level,
    mean_interval,
    prf_statistic,
    wilson,
)


@pytest.mark.parametrize(
    ("successes", "trials", "level"),
    [(0, 1, 0.95), (1, 1, 0.95), (7, 12, 0.95), (50, 200, 0.9), (199, 200, 0.99), (0, 40, 0.8), (3, 1000, 0.95)],
)
def test_wilson_matches_statsmodels(successes, trials, level):
    low, high = proportion_confint(successes, trials, alpha=1 - level, method="wilson")
    interval = wilson(successes, trials, level)
    assert interval is not None and interval.method == "wilson"
    assert interval.low == pytest.approx(low, abs=1e-12) and interval.high == pytest.approx(high, abs=1e-12)


def test_wilson_without_trials_is_none():
    assert wilson(0, 0) is None


@pytest.mark.parametrize("level", [0.0, 1.0, -0.5, 1.5, float("nan"), float("inf")])
def test_a_level_outside_0_1_is_refused(level):
    with pytest.raises(ValueError, match="the confidence level is between 0 and 1"):
        check_level(level)


OUTCOMES = [(1, 0, 0), (0, 1, 1), (0, 0, 1), (0, 1, 0), (0, 0, 0)]  # right, wrong, missed, invented, empty
PROBS = [0.7, 0.1, 0.1, 0.05, 0.05]


def documents(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.array(OUTCOMES)[rng.choice(len(OUTCOMES), size=n, p=PROBS)]


def grouped(rows: np.ndarray) -> dict[tuple[float, ...], int]:
    found: dict[tuple[float, ...], int] = {}
    for row in rows:
        key = tuple(float(v) for v in row)
        found[key] = found.get(key, 0) + 1
    return found


def f1_of(tp, fp, fn, axis=-1):
    tp, fp, fn = tp.sum(axis=axis), fp.sum(axis=axis), fn.sum(axis=axis)
    return 2 * tp / (2 * tp + fp + fn)


@pytest.mark.parametrize("n", [30, 60, 120])
def test_f1_interval_agrees_with_scipys_bca_bootstrap(n):
    rows = documents(n, np.random.default_rng(n))
    intervals, run = bootstrap(grouped(rows), prf_statistic(1), resamples=40_000)
    ours = intervals[2]
    theirs = stats.bootstrap(
        (rows[:, 0], rows[:, 1], rows[:, 2]),
        f1_of,
        paired=True,
        vectorized=True,
        n_resamples=40_000,
        method="BCa",
        random_state=np.random.default_rng(7),
    ).confidence_interval
    assert ours is not None and run.resamples == 40_000 and run.documents == n
    assert ours.low == pytest.approx(theirs.low, abs=0.012) and ours.high == pytest.approx(theirs.high, abs=0.012)


def test_mean_interval_agrees_with_scipys_bca_bootstrap():
    scores = np.random.default_rng(3).choice([0.0, 0.5, 0.75, 1.0], size=60, p=[0.1, 0.2, 0.3, 0.4])
    ours, _ = mean_interval(list(scores))
    theirs = stats.bootstrap(
        (scores,), np.mean, n_resamples=40_000, method="BCa", random_state=np.random.default_rng(1)
    ).confidence_interval
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, abs=0.01) and ours.high == pytest.approx(theirs.high, abs=0.01)


def test_the_same_seed_gives_the_same_interval_and_another_seed_agrees_to_0_005():
    groups = grouped(documents(300, np.random.default_rng(11)))
    first, run = bootstrap(groups, prf_statistic(1))
    again, _ = bootstrap(groups, prf_statistic(1))
    other, _ = bootstrap(groups, prf_statistic(1), seed=run.seed + 1)
    assert first == again
    for mine, theirs in zip(first, other, strict=True):
        assert mine is not None and theirs is not None
        assert abs(mine.low - theirs.low) <= 0.005 and abs(mine.high - theirs.high) <= 0.005


def test_resamples_adapt_to_the_spread():
    _, small = bootstrap(grouped(documents(20, np.random.default_rng(1))), prf_statistic(1))
    _, large = bootstrap(grouped(documents(5_000, np.random.default_rng(1))), prf_statistic(1))
    assert small.resamples > 5 * MIN_RESAMPLES and large.resamples == MIN_RESAMPLES


def test_fields_move_with_their_document_micro_and_macro():
    # two fields always right or wrong together: micro F1's interval is as wide as one field's
    rows = documents(30, np.random.default_rng(5))
    both = np.concatenate([rows, rows], axis=1)
    intervals, _ = bootstrap(grouped(both), prf_statistic(2))
    one, micro, macro = intervals[2], intervals[8], intervals[9]
    assert one is not None and micro is not None and macro is not None
    assert micro.low == pytest.approx(one.low, abs=1e-9) and macro.high == pytest.approx(one.high, abs=1e-9)


def test_an_undefined_metric_has_no_interval():
    # nothing expected and nothing answered: precision, recall and F1 are undefined
    intervals, _ = bootstrap({(0.0, 0.0, 0.0): 10}, prf_statistic(1))
    assert intervals[:3] == [None, None, None]


def test_coverage_of_nominal_95_intervals_is_93_to_97_percent():
    """Synthetic documents with a known population precision, recall and F1: 400 datasets of 40
    documents each (seeded: the figure is reproducible), each interval checked for the truth."""
    expected = np.array(PROBS) @ np.array(OUTCOMES)
    truth = {
        "precision": expected[0] / (expected[0] + expected[1]),
        "recall": expected[0] / (expected[0] + expected[2]),
        "f1": 2 * expected[0] / (2 * expected[0] + expected[1] + expected[2]),
    }
    rng = np.random.default_rng(2026)
    covered = {"precision": 0, "recall": 0, "f1": 0, "wilson_precision": 0}
    runs = 400
    for run in range(runs):
        rows = documents(40, rng)
        intervals, _ = bootstrap(grouped(rows), prf_statistic(1), seed=run, resamples=2_000)
        for name, interval in zip(("precision", "recall", "f1"), intervals, strict=False):
            covered[name] += interval is not None and interval.low <= truth[name] <= interval.high
        tp, fp = int(rows[:, 0].sum()), int(rows[:, 1].sum())
        closed = wilson(tp, tp + fp)
        covered["wilson_precision"] += closed is not None and closed.low <= truth["precision"] <= closed.high
    shares = {name: count / runs for name, count in covered.items()}
    assert all(0.93 <= share <= 0.97 for share in shares.values()), shares
