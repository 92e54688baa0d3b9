"""`agentv plan-size`'s formula (scoring/sample_size.py) against statsmodels' power solver, and by
simulation: at the planned number of documents a paired test detects the drop at the planned power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower

from agentv_py.scoring.sample_size import FLOORED, detectable, documents_needed, floor, plan


@pytest.mark.parametrize(
    ("sd", "delta", "alpha", "power"),
    [(0.3, 0.05, 0.05, 0.8), (0.1, 0.02, 0.05, 0.9), (0.5, 0.1, 0.01, 0.8), (0.2, 0.01, 0.1, 0.5)],
)
def test_documents_needed_matches_statsmodels_one_sample_z_power(sd, delta, alpha, power):
    expected = NormalIndPower().solve_power(effect_size=delta / sd, alpha=alpha, power=power, ratio=0)
    assert documents_needed(sd, delta, alpha, power) == math.ceil(expected)
    # and solved the other way: that many documents detect about that drop
    assert detectable(sd, math.ceil(expected), alpha, power) == pytest.approx(delta, rel=0.02)


def test_a_paired_test_at_the_planned_size_detects_the_drop_at_the_planned_power():
    sd, delta = 0.3, 0.05
    n = documents_needed(sd, delta)
    rng = np.random.default_rng(30)
    differences = rng.normal(-delta, sd, size=(4000, n))
    z = differences.mean(axis=1) / (differences.std(axis=1, ddof=1) / math.sqrt(n))
    detected = float(np.mean(np.abs(z) > 1.959964))
    assert 0.78 <= detected <= 0.82, detected


def test_a_spread_below_what_the_drop_brings_is_taken_at_it():
    assert floor(0.05) == pytest.approx(math.sqrt(0.05 * 0.95))
    planned = plan("F1 a", 0.0, "one run", 7, 0.05, 0.05, 0.8)
    assert planned.sd == floor(0.05) and FLOORED in planned.measured and planned.needed == 150 and not planned.enough


def test_a_drop_must_be_positive():
    with pytest.raises(ValueError, match="the drop to detect is above 0"):
        documents_needed(0.3, 0.0)
