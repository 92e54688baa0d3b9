"""Multiple-testing corrections (scoring/stats.adjusted) against statsmodels' multipletests."""

from __future__ import annotations

import random

import pytest
from statsmodels.stats.multitest import multipletests

from agentv_py.scoring.stats import adjusted, mcnemar_p

CASES = [
    pytest.param([0.01], id="one"),
    pytest.param([0.01, 0.04, 0.03, 0.005], id="four"),
    pytest.param([0.05, 0.05, 0.05], id="ties"),
    pytest.param([1.0, 0.0, 0.5, 0.2, 0.9], id="bounds"),
    pytest.param([random.Random(i).random() ** 3 for i in range(40)], id="forty-random"),
]


@pytest.mark.parametrize("p_values", CASES)
@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjusted_p_values_match_statsmodels(p_values, ours, theirs):
    expected = multipletests(p_values, method=theirs)[1]
    assert adjusted(p_values, ours) == pytest.approx(list(expected), abs=1e-12)


def test_nothing_to_adjust_and_an_unknown_method():
    assert adjusted([], "holm") == [] and adjusted([], "bh") == []
    with pytest.raises(ValueError, match="unknown correction 'bonferroni': holm or bh"):
        adjusted([0.1], "bonferroni")


@pytest.mark.parametrize(("hit_to_miss", "miss_to_hit"), [(0, 0), (5, 0), (7, 2), (30, 18), (0, 12)])
def test_field_mcnemar_matches_statsmodels_exact(hit_to_miss, miss_to_hit):
    from statsmodels.stats.contingency_tables import mcnemar

    if hit_to_miss + miss_to_hit == 0:
        assert mcnemar_p(0, 0) == 1.0
        return
    table = [[10, hit_to_miss], [miss_to_hit, 10]]
    assert mcnemar_p(hit_to_miss, miss_to_hit) == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
