"""scoring/calibration.py: ECE, AUROC and coverage at a precision against brute-force versions
(and scipy's Mann-Whitney U for AUROC), on random confidences with ties."""

from __future__ import annotations

import random

import pytest

from agentv_py.scoring.calibration import auroc, coverage_at, ece, read_confidence


def _data(seed: int, n: int) -> tuple[list[float], list[bool]]:
    rng = random.Random(seed)
    confidences = [round(rng.random(), 1) for _ in range(n)]  # rounded: many ties, values on bin edges
    hits = [rng.random() < c for c in confidences]
    return confidences, hits


def _ece_brute(confidences, hits, bins=10):
    total = 0.0
    for b in range(bins):
        members = [i for i, c in enumerate(confidences) if min(int(c * bins), bins - 1) == b]
        if members:
            accuracy = sum(hits[i] for i in members) / len(members)
            confidence = sum(confidences[i] for i in members) / len(members)
            total += abs(accuracy - confidence) * len(members) / len(confidences)
    return total


def _auroc_brute(confidences, hits):
    right = [c for c, h in zip(confidences, hits, strict=True) if h]
    wrong = [c for c, h in zip(confidences, hits, strict=True) if not h]
    wins = sum(1.0 if r > w else 0.5 if r == w else 0.0 for r in right for w in wrong)
    return wins / (len(right) * len(wrong))


def _coverage_brute(confidences, hits, precision):
    best = (0.0, None)
    for threshold in sorted(set(confidences)):
        accepted = [h for c, h in zip(confidences, hits, strict=True) if c >= threshold]
        if accepted and sum(accepted) / len(accepted) >= precision and len(accepted) / len(hits) > best[0]:
            best = (len(accepted) / len(hits), threshold)
    return best


@pytest.mark.parametrize("seed", range(20), ids=lambda s: f"seed-{s}")
def test_against_brute_force(seed):
    from scipy.stats import mannwhitneyu

    confidences, hits = _data(seed, 60)
    assert ece(confidences, hits) == pytest.approx(_ece_brute(confidences, hits), abs=1e-12)
    value = auroc(confidences, hits)
    assert value == pytest.approx(_auroc_brute(confidences, hits), abs=1e-12)
    right = [c for c, h in zip(confidences, hits, strict=True) if h]
    wrong = [c for c, h in zip(confidences, hits, strict=True) if not h]
    u = mannwhitneyu(right, wrong).statistic
    assert value == pytest.approx(u / (len(right) * len(wrong)), abs=1e-12)
    for precision in (0.6, 0.8, 0.95):
        found = coverage_at(confidences, hits, precision)
        assert (found.coverage, found.threshold) == pytest.approx(_coverage_brute(confidences, hits, precision))


def test_edges():
    assert ece([], []) is None
    assert auroc([0.9, 0.8], [True, True]) is None  # nothing wrong to tell apart
    assert ece([1.0, 1.0], [True, True]) == 0.0  # 1.0 falls in the last bin
    nobody = coverage_at([0.9, 0.8], [False, True], 0.99)
    assert (nobody.coverage, nobody.threshold, nobody.achieved) == (0.0, None, None)


@pytest.mark.parametrize(
    ("value", "read"),
    [
        (0.5, (0.5, None)),
        (1, (1.0, None)),
        (1.5, (None, "confidence 1.5 is outside [0, 1]")),
        (-0.1, (None, "confidence -0.1 is outside [0, 1]")),
        (True, (None, "confidence True is not a number")),
        ("0.9", (None, "confidence '0.9' is not a number")),
        (float("nan"), (None, "confidence nan is outside [0, 1]")),
        ("x" * 100, (None, "confidence '" + "x" * 39 + " is not a number")),
    ],
    ids=["half", "one", "over", "negative", "bool", "text", "nan", "long-text"],
)
def test_reading_a_confidence(value, read):
    assert read_confidence(value) == read
