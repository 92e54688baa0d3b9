"""scoring/repeats.py: pass@k and pass^k against brute-force enumeration, flip rates and flaky
cases against a direct count, the clustered interval's invariances, and the mixed-file refusal."""

from __future__ import annotations

import itertools
import random

import pytest

from agentv_py.scoring.intervals import mean_interval
from agentv_py.scoring.repeats import MixedRows, RepeatTally, clustered_rate, pass_at_k, pass_hat_k


def _brute(runs: int, passed: int, k: int) -> tuple[float, float]:
    """Over every k-subset of the runs: the share with some pass, and with every one a pass."""
    outcomes = [True] * passed + [False] * (runs - passed)
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(
    ("runs", "passed", "k"),
    [(n, c, k) for n in range(1, 8) for c in range(n + 1) for k in range(1, n + 1)],
    ids=lambda v: str(v),
)
def test_pass_at_k_and_pass_hat_k_match_enumeration(runs, passed, k):
    some, every = _brute(runs, passed, k)
    assert pass_at_k(runs, passed, k) == pytest.approx(some, abs=1e-12)
    assert pass_hat_k(runs, passed, k) == pytest.approx(every, abs=1e-12)


@pytest.mark.parametrize(("runs", "passed", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1), (3, -1, 1)])
def test_impossible_counts_are_refused(runs, passed, k):
    with pytest.raises(ValueError, match="need 0 <= passed <= runs and 1 <= k <= runs"):
        pass_at_k(runs, passed, k)


def test_flips_and_flaky_cases_match_a_direct_count():
    rng = random.Random(7)
    tally = RepeatTally()
    truth: dict[str, list[tuple[bool, dict[str, int]]]] = {}
    line = 0
    for case in range(40):
        eval_id = f"c{case}"
        for repeat in range(1, 5):
            passed = rng.random() < 0.7
            fields = {name: rng.choice([0, 0, 0, 1]) for name in ("a", "b", "c") if rng.random() < 0.9}
            line += 1
            tally.add(line, eval_id, repeat, None, passed, {k: (v,) for k, v in fields.items()})
            truth.setdefault(eval_id, []).append((passed, fields))
    report = tally.report()
    assert report is not None and report.repeats == 4 and report.rejudges == 1 and report.judge is None
    flaky = {eval_id for eval_id, runs in truth.items() if 0 < sum(p for p, _ in runs) < len(runs)}
    assert {case.eval_id for case in report.extractor.flaky} == flaky
    assert report.extractor.flipped == len(flaky) and report.extractor.units == 40
    every = sum(all(p for p, _ in runs) for runs in truth.values())
    some = sum(any(p for p, _ in runs) for runs in truth.values())
    assert (report.pass_all, report.pass_any) == (every / 40, some / 40)
    for name in ("a", "b", "c"):
        seen = [[fields[name] for _, fields in runs if name in fields] for runs in truth.values()]
        seen = [values for values in seen if len(values) >= 2]
        flips = report.extractor.fields[name]
        assert (flips.documents, flips.flipped) == (len(seen), sum(len(set(v)) > 1 for v in seen))
    assert report.extractor.flaky_fields() == sorted(
        (n for n in ("a", "b", "c") if report.extractor.fields[n].flipped),
        key=lambda n: (-(report.extractor.fields[n].rate or 0), n),
    )


def test_judge_noise_is_counted_within_one_answer_and_runs_read_at_their_first_scoring():
    tally = RepeatTally()
    # c1: both runs pass at the first scoring; run 2's second scoring fails (the judge flipped)
    for line, (repeat, rejudge, passed) in enumerate([(1, 1, True), (1, 2, True), (2, 1, True), (2, 2, False)]):
        tally.add(line, "c1", repeat, rejudge, passed)
    report = tally.report()
    assert report is not None and report.rejudges == 2 and report.judge is not None
    assert report.extractor.flipped == 0 and report.per_case["c1"] == (2, 2)
    assert (report.judge.units, report.judge.flipped) == (2, 1)
    assert [case.eval_id for case in report.judge.flaky] == ["c1 (repeat 2)"]


def test_a_file_with_repeated_and_single_rows_is_refused_naming_both_lines():
    tally = RepeatTally()
    tally.add(1, "c1", None, None, True)
    with pytest.raises(MixedRows) as caught:
        tally.add(2, "c1", 1, None, True)
    assert str(caught.value) == (
        "line 2 is a row of a repeated run (it has `repeat` or `rejudge`) and line 1 is not: "
        "a results file holds one run's rows, all repeated or none"
    )


def test_the_clustered_interval_of_k_identical_runs_is_that_of_one_run():
    rng = random.Random(3)
    scores = [rng.random() for _ in range(30)]
    one, one_interval = clustered_rate([(s, 1) for s in scores])
    three, three_interval = clustered_rate([(3 * s, 3) for s in scores])
    assert one == pytest.approx(three) and one_interval == three_interval
    plain, _ = mean_interval(scores)  # one run per case: the document bootstrap of the mean
    assert one_interval == plain


def test_the_clustered_interval_is_wider_than_rows_taken_as_independent_when_runs_agree():
    rng = random.Random(5)
    cases = [1.0 if rng.random() < 0.6 else 0.0 for _ in range(25)]
    _, clustered = clustered_rate([(5 * v, 5) for v in cases])
    rows = [v for v in cases for _ in range(5)]
    naive, _ = mean_interval(rows)
    assert clustered is not None and naive is not None
    assert clustered.high - clustered.low > 1.8 * (naive.high - naive.low)  # sqrt(5) wider, about


@pytest.mark.parametrize(
    ("base_passed", "base_runs", "new_passed", "new_runs"),
    [(a, n1, b, n2) for n1 in (1, 2, 3, 5) for n2 in (1, 3, 4) for a in range(n1 + 1) for b in range(n2 + 1)],
    ids=lambda v: str(v),
)
def test_the_one_sided_fisher_test_matches_scipy(base_passed, base_runs, new_passed, new_runs):
    from scipy.stats import fisher_exact

    from agentv_py.scoring.stats import fisher_fell_p

    table = [[base_passed, base_runs - base_passed], [new_passed, new_runs - new_passed]]
    expected = fisher_exact(table, alternative="greater").pvalue
    assert fisher_fell_p(base_passed, base_runs, new_passed, new_runs) == pytest.approx(expected, abs=1e-12)


def test_the_design_effect_is_statsmodels_cluster_robust_variance_over_the_binomial():
    import numpy as np
    import statsmodels.api as sm

    from agentv_py.scoring.repeats import design_effect

    rng = np.random.default_rng(11)
    p = rng.beta(2, 0.6, 30)
    passed = rng.binomial(4, p)
    rows = np.repeat((np.arange(4)[None, :] < passed[:, None]).astype(float), 1, axis=0).ravel()
    groups = np.repeat(np.arange(30), 4)
    fit = sm.OLS(rows, np.ones_like(rows)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    share = rows.mean()
    expected = fit.bse[0] ** 2 / (share * (1 - share) / rows.size)
    assert design_effect([(float(c), 4.0) for c in passed]) == pytest.approx(min(max(expected, 1), 4), rel=1e-9)


def test_runs_that_always_agree_give_the_single_run_wilson_interval():
    from agentv_py.scoring.intervals import wilson
    from agentv_py.scoring.repeats import clustered_pass_rate

    cases = [(3.0, 3.0)] * 5 + [(0.0, 3.0)] * 2  # five cases pass every run, two fail every run
    rate, interval = clustered_pass_rate(cases)
    single = wilson(5, 7)
    assert rate == pytest.approx(5 / 7) and interval is not None and single is not None
    assert (interval.low, interval.high) == pytest.approx((single.low, single.high))
