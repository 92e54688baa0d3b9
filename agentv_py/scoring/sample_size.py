"""How many documents a comparison needs (`agentv plan-size`, docs/statistics.md): for a paired
comparison of two runs on the same documents, the documents n at which a two-sided z-test at
level alpha detects a drop of `delta` with probability `power`:

    n = ((z_{1 - alpha/2} + z_{power}) * sd / delta)^2

where sd is the standard deviation of one document's contribution to the difference between the
runs: for the mean score, the per-document score difference; for a field's F1, the paired
bootstrap standard error of the F1 difference times sqrt(n) (F1 is not a mean of documents; its
standard error shrinks as 1/sqrt(n) all the same). The smallest drop the current n detects is
the same formula solved for delta; n is then lowered while the test's exact two-sided power
(both tails) still reaches `power`, as statsmodels' solver counts it. Pure functions; the normal
approximation (a paired t-test needs a few more documents below about 30).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist


def z_sum(alpha: float, power: float) -> float:
    """z_{1 - alpha/2} + z_{power}."""
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


def documents_needed(sd: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The documents a paired two-sided z-test needs to detect a change of `delta` (sd: one
    document's standard deviation of the difference); at least 2."""
    if delta <= 0:
        raise ValueError(f"the drop to detect is above 0, got {delta!r}")
    if sd <= 0:
        return 2  # no spread: any change shows on the first documents
    n = max(2, math.ceil((z_sum(alpha, power) * sd / delta) ** 2))
    while n > 2 and power_at(n - 1, sd, delta, alpha) >= power:  # the far tail's share of the power
        n -= 1
    return n


def power_at(documents: int, sd: float, delta: float, alpha: float = 0.05) -> float:
    """The two-sided z-test's power on `documents` documents: both tails (as statsmodels' solver)."""
    normal = NormalDist()
    shift = delta * math.sqrt(documents) / sd
    critical = normal.inv_cdf(1 - alpha / 2)
    return normal.cdf(shift - critical) + normal.cdf(-shift - critical)


def detectable(sd: float, documents: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest change `documents` documents detect at `power` (the formula solved for delta)."""
    return z_sum(alpha, power) * sd / math.sqrt(documents)


@dataclass(frozen=True)
class Plan:
    """One metric's plan: what it is, its per-document sd and how it was measured, the documents
    the run has and needs, the smallest drop the run can detect."""

    metric: str
    sd: float
    measured: str  # "paired runs" or "one run (assumed independent)": how sd was obtained
    documents: int
    needed: int
    detectable: float
    delta: float

    @property
    def enough(self) -> bool:
        return self.documents >= self.needed

    def to_json(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "sd": self.sd,
            "measured": self.measured,
            "documents": self.documents,
            "needed": self.needed,
            "enough": self.enough,
            "detectable_drop": self.detectable,
            "drop": self.delta,
        }


def floor(delta: float) -> float:
    """The least spread a drop of `delta` brings to a 0-1 metric: `delta` of the documents turning
    from right to wrong, a per-document difference of sqrt(delta (1 - delta))."""
    return math.sqrt(delta * (1 - delta))


FLOORED = "below the least the drop brings: taken at it"


def plan(metric: str, sd: float, measured: str, documents: int, delta: float, alpha: float, power: float) -> Plan:
    """The plan for one metric. A measured spread below `floor(delta)` (a field right on every
    document shows none) is taken at the floor, and `measured` says so."""
    if sd < floor(delta):
        sd, measured = floor(delta), f"{measured}; {FLOORED}"
    return Plan(
        metric,
        sd,
        measured,
        documents,
        documents_needed(sd, delta, alpha, power),
        detectable(sd, documents, alpha, power),
        delta,
    )
