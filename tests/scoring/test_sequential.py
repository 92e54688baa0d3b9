"""The confidence sequence of `--stop-early` (scoring/sequential.py): by simulation it decides the
wrong side of the threshold, and ever excludes the true mean, at most alpha of the time; it is
exact once every case is seen; bad scores are refused."""

from __future__ import annotations

import numpy as np
import pytest

from agentv_py.scoring.sequential import MeanSequence


def run(scores: np.ndarray, threshold: float, rng: np.random.Generator) -> tuple[str | None, int, bool]:
    sequence = MeanSequence(len(scores), 0.05)
    truth, excluded = float(scores.mean()), False
    for used, i in enumerate(rng.permutation(len(scores)), 1):
        sequence.add(float(scores[i]))
        excluded = excluded or not (sequence.low - 1e-12 <= truth <= sequence.high + 1e-12)
        if (decided := sequence.decision(threshold)) is not None:
            return decided, used, excluded
    return None, len(scores), excluded


@pytest.mark.parametrize("gap", [0.02, 0.0, -0.02], ids=["just-above", "at", "just-below"])
def test_wrong_decisions_and_exclusions_stay_under_alpha(gap):
    rng = np.random.default_rng(7)
    wrong = excluded = 0
    runs = 150
    for _ in range(runs):
        scores = rng.choice([0.0, 0.5, 1.0], size=120, p=[0.15, 0.15, 0.7])
        threshold = float(scores.mean()) - gap
        decided, _, missed = run(scores, threshold, rng)
        truth = "above" if scores.mean() >= threshold else "below"
        wrong += decided is not None and decided != truth
        excluded += missed
    assert wrong / runs <= 0.05 and excluded / runs <= 0.05, (wrong, excluded)


def test_a_clear_cut_gate_is_settled_on_few_cases():
    rng = np.random.default_rng(3)
    scores = rng.choice([0.0, 1.0], size=2_000, p=[0.05, 0.95])
    decided, used, _ = run(scores, 0.8, rng)
    assert decided == "above" and used < 100


def test_every_case_seen_gives_the_exact_mean():
    sequence = MeanSequence(3)
    for score in (1.0, 0.5, 0.0):
        sequence.add(score)
    assert (sequence.low, sequence.high) == (0.5, 0.5) and sequence.decision(0.5) == "above"
    with pytest.raises(ValueError, match="every case of the population has been seen"):
        sequence.add(1.0)


@pytest.mark.parametrize("score", [1.5, -0.1, float("nan")])
def test_a_score_outside_0_1_is_refused(score):
    with pytest.raises(ValueError, match="a score for the confidence sequence is in"):
        MeanSequence(5).add(score)
