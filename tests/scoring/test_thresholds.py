"""One rule for every threshold (`scoring.thresholds`): a computed value within float noise of
its limit is at the limit. Each place a threshold is compared is tested at its boundary with a value
that is exact in decimal and not in binary (0.1 + 0.7 is 0.7999999999999999)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from agentv_py.report.compare import Comparison
from agentv_py.report.gates import GateCheck
from agentv_py.report.regressions import Rules, regressions
from agentv_py.report.summary import RunSummary, gate
from agentv_py.scoring.alignment import align_items, item_similarity
from agentv_py.scoring.case import verdict_for
from agentv_py.scoring.match import match_fuzzy, match_numeric
from agentv_py.scoring.thresholds import NOISE, at_least, at_most
from agentv_py.scoring.trajectory import check_cost
from tests.conftest import make_row

BELOW_08 = 0.1 + 0.7  # 0.7999999999999999
ABOVE_03 = 0.1 + 0.2  # 0.30000000000000004


@pytest.mark.parametrize(
    ("value", "limit", "at_least_", "at_most_"),
    [
        (BELOW_08, 0.8, True, True),
        (ABOVE_03, 0.3, True, True),
        (0.8 - 1e-6, 0.8, False, True),  # a real difference is never noise
        (0.3 + 1e-6, 0.3, True, False),
        (1e6 * (1 - NOISE / 2), 1e6, True, True),  # relative to the limit
        (0.0, 0.0, True, True),
    ],
    ids=["sum-below", "sum-above", "really-below", "really-above", "relative", "zero"],
)
def test_the_rule(value, limit, at_least_, at_most_):
    assert (at_least(value, limit), at_most(value, limit)) == (at_least_, at_most_)


def test_the_case_verdict():
    assert verdict_for(BELOW_08) == "pass"


def test_the_threshold_gate_and_a_dataset_gate_agree():
    """--threshold 0.8 and `gates: {min_mean_score: 0.8}` on a mean of 0.7999999999999999."""
    summary = RunSummary()
    summary.add(make_row("c1", score=BELOW_08, verdict="pass"))
    assert gate(summary, 0.8).outcome == "ok"
    assert GateCheck("mean score", BELOW_08, ">=", 0.8).passed
    assert GateCheck("drop", ABOVE_03, "<=", 0.3).passed


def test_item_pairing():
    expected = {"a": "same", "b": "abcdefghij", "c": "abcdefghij"}
    answer = {"a": "same", "b": "abcdefgxyz", "c": "abcdefgxyz"}  # similarities 1, 0.7, 0.7
    assert item_similarity(expected, answer, ["a", "b", "c"]) == BELOW_08
    for assignment in ("greedy", "optimal"):
        assert len(align_items([expected], [answer], ["a", "b", "c"], 0.8, assignment).pairs) == 1  # type: ignore[arg-type]


def test_fuzzy_and_numeric_tolerance():
    assert match_fuzzy("abcdefgxyz", "abcdefghij", threshold=0.7).passed  # 7/10 similar
    assert match_numeric(1.1, 1.0, 0.1).passed  # 1.1 - 1.0 = 0.10000000000000009
    assert match_numeric(1889.3, 1889.0, 0.3).passed
    assert not match_numeric(1889.31, 1889.0, 0.3).passed


def test_geometry_and_trace_limits():
    assert check_cost(ABOVE_03, 0.3).score == 1.0  # $0.1 + $0.2 within a $0.3 budget


def test_compare_max_drop():
    result = SimpleNamespace(  # a drop of 0.30000000000000004
        mean_delta=-ABOVE_03, fields={}, pass_to_fail=0, new_error_count=lambda: 0
    )
    assert regressions(cast(Comparison, result), Rules(max_drop=0.3)) == []
