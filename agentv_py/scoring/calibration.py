"""How well an extractor's own confidence in a field predicts that the field is right (`agentv
metrics --calibration`; docs/metrics.md#calibration). Each observation is one document's field:
the confidence the extractor reported (in [0, 1]) and whether the field was a hit.

- **ECE**, expected calibration error (Naeini et al. 2015; Guo et al. 2017): the confidences cut
  into `bins` equal-width bins over [0, 1] (the last closed), the mean |accuracy - mean confidence|
  of each bin weighted by its share of the observations.
- **AUROC** of confidence against correctness: the chance that a right field has a higher
  confidence than a wrong one, ties counted half (the Mann-Whitney U over n_right * n_wrong).
  None when all are right or all wrong.
- **Coverage at precision P**: the largest share of the documents whose field could be accepted
  without review — those at or above a confidence threshold — while the accepted ones are right
  at least P of the time; and that threshold. Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

BINS = 10


def ece(confidences: Sequence[float], hits: Sequence[bool], bins: int = BINS) -> float | None:
    """Expected calibration error over equal-width bins; None without observations."""
    if not confidences:
        return None
    sums = [[0.0, 0.0, 0] for _ in range(bins)]  # confidence sum, hits, count
    for confidence, hit in zip(confidences, hits, strict=True):
        cell = sums[min(int(confidence * bins), bins - 1)]
        cell[0] += confidence
        cell[1] += hit
        cell[2] += 1
    total = len(confidences)
    return math.fsum(abs(right / count - summed / count) * count / total for summed, right, count in sums if count)


def auroc(confidences: Sequence[float], hits: Sequence[bool]) -> float | None:
    """AUROC of confidence for telling right fields from wrong ones (ties half); None unless both occur."""
    right = sum(1 for hit in hits if hit)
    wrong = len(hits) - right
    if not right or not wrong:
        return None
    ordered = sorted(zip(confidences, hits, strict=True), key=lambda pair: pair[0])
    rank_sum = 0.0  # of the right ones, average ranks for ties (from 1)
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            j += 1
        average = (i + 1 + j) / 2
        rank_sum += average * sum(1 for k in range(i, j) if ordered[k][1])
        i = j
    return (rank_sum - right * (right + 1) / 2) / (right * wrong)


@dataclass(frozen=True)
class Coverage:
    precision: float  # the target
    coverage: float  # share of the observations accepted (0: none can be, at that precision)
    threshold: float | None  # accept at this confidence or above (None: none accepted)
    achieved: float | None  # the accepted ones' precision

    def to_json(self) -> dict[str, Any]:
        return {
            "precision": self.precision,
            "coverage": self.coverage,
            "threshold": self.threshold,
            "achieved_precision": self.achieved,
        }


def coverage_at(confidences: Sequence[float], hits: Sequence[bool], precision: float) -> Coverage:
    """The most observations accepted at one confidence threshold with precision >= `precision`."""
    ordered = sorted(zip(confidences, hits, strict=True), key=lambda pair: -pair[0])
    best = Coverage(precision, 0.0, None, None)
    accepted = right = 0
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:  # a threshold takes all of a tie
            right += ordered[j][1]
            j += 1
        accepted = j
        if right / accepted >= precision - 1e-12:
            best = Coverage(precision, accepted / len(ordered), ordered[i][0], right / accepted)
        i = j
    return best


def read_confidence(value: Any) -> tuple[float | None, str | None]:
    """(a confidence in [0, 1], None) or (None, why it is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"confidence {repr(value)[:40]} is not a number"
    if not math.isfinite(value) or not 0 <= value <= 1:
        return None, f"confidence {repr(value)[:40]} is outside [0, 1]"
    return float(value), None
