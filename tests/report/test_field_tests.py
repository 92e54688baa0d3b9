"""`compare --significant-only` on fields: the McNemar p-values are adjusted across fields before
they are held against --alpha (Holm by default, Benjamini-Hochberg on request)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from agentv_py.report.regressions import Rules, regressions
from agentv_py.scoring.stats import adjusted, mcnemar_p


@dataclass
class Moved:
    hit_to_miss: int
    miss_to_hit: int
    p_adjusted: float | None = None
    f1_delta: float | None = -0.1


@dataclass
class Result:
    fields: dict[str, Any]
    pass_to_fail: int = 0
    fail_to_pass: int = 0
    p_value: float | None = 1.0
    ci95: tuple[float, float] | None = (-0.01, 0.01)
    mean_delta: float | None = 0.0
    flips: list[str] = field(default_factory=list)

    def flipped(self, limit: int = -1) -> list[str]:
        return []

    def new_errors(self, limit: int = -1) -> list[str]:
        return []

    def new_error_count(self) -> int:
        return 0


def result(moves: dict[str, tuple[int, int]], method: str) -> Result:
    names = sorted(moves)
    p_values = [mcnemar_p(*moves[name]) for name in names]
    return Result({name: Moved(*moves[name], p) for name, p in zip(names, adjusted(p_values, method), strict=True)})


# a falls 8 times and never comes back (p = 0.0078); ten other fields move a little (p = 1)
MOVES = {"a": (8, 0), **{f"f{i}": (1, 1) for i in range(10)}}


@pytest.mark.parametrize(
    ("method", "alpha", "flagged"), [("holm", 0.05, False), ("holm", 0.1, True), ("bh", 0.05, False)]
)
def test_field_p_values_are_adjusted_across_fields(method, alpha, flagged):
    found = regressions(result(MOVES, method), Rules(significant_only=True, alpha=alpha, correction=method))
    assert bool(found) is flagged
    if flagged:
        assert found == [
            f"field a: 8 hit->miss vs 0 back: McNemar p = 0.08594 ({method}-adjusted across fields) < --alpha {alpha:g}"
        ]


def test_alone_the_field_is_flagged_at_0_05():
    found = regressions(result({"a": (8, 0)}, "holm"), Rules(significant_only=True))
    assert found == [
        "field a: 8 hit->miss vs 0 back: McNemar p = 0.007812 (holm-adjusted across fields) < --alpha 0.05"
    ]


def test_the_f1_delta_interval_agrees_with_scipys_paired_bca_bootstrap():
    import numpy as np
    from scipy import stats

    from agentv_py.report.compare_fields import f1_delta_statistic
    from agentv_py.scoring.intervals import bootstrap_arrays

    rng = np.random.default_rng(30)
    outcomes = np.array([(1, 0, 0), (0, 1, 1), (0, 0, 1)])  # right, wrong, missed
    base = outcomes[rng.choice(3, size=80, p=[0.8, 0.1, 0.1])]
    new = outcomes[rng.choice(3, size=80, p=[0.7, 0.2, 0.1])]
    cases = np.concatenate([base, new], axis=1)
    groups: dict[tuple[int, ...], int] = {}
    for row in cases:
        groups[tuple(int(v) for v in row)] = groups.get(tuple(int(v) for v in row), 0) + 1
    ordered = sorted(groups)
    [ours], _ = bootstrap_arrays(
        np.array(ordered, dtype=float), np.array([groups[k] for k in ordered]), f1_delta_statistic, resamples=40_000
    )

    def delta(*columns, axis=-1):
        s = [c.sum(axis=axis) for c in columns]
        return 2 * s[3] / (2 * s[3] + s[4] + s[5]) - 2 * s[0] / (2 * s[0] + s[1] + s[2])

    theirs = stats.bootstrap(
        tuple(cases.T),
        delta,
        paired=True,
        vectorized=True,
        n_resamples=40_000,
        method="BCa",
        random_state=np.random.default_rng(3),
    ).confidence_interval
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, abs=0.01) and ours.high == pytest.approx(theirs.high, abs=0.01)
