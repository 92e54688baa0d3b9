"""An anytime-valid confidence sequence for a dataset's mean score, for `agentv eval --stop-early`
(docs/statistics.md): the cases run in a random order and after each one the sequence says
whether the dataset's mean over *all* its cases is settled above or below the gate's threshold.
Peeking after every case does not inflate the error: the chance that the sequence ever excludes
the true mean is at most alpha, whenever the run stops.

The method is the betting confidence sequence for sampling without replacement of Waudby-Smith &
Ramdas ("Confidence sequences for sampling without replacement", NeurIPS 2020; "Estimating means
of bounded random variables by betting", JRSS-B 2024): for each candidate mean m of the N cases,
two gamblers bet that the next score is above (below) its conditional mean under m,
    mu_t(m) = (N m - sum of the scores so far) / (N - t + 1),
with predictable bets lambda_t (the "predictable plug-in" of the 2024 paper, clipped to keep the
capital positive); m leaves the sequence once the hedged capital (the mean of the two gamblers')
reaches 1/alpha (Ville's inequality). Candidates are a grid of GRID means in [0, 1]; the
sequence's bounds are its smallest and largest surviving candidate, intersected over time.
Scores must lie in [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

GRID = 2_001  # candidate means 0, 0.0005, ..., 1
CLIP = 0.5  # the largest bet, as a share of what keeps the capital positive
Decision = Literal["above", "below"]


@dataclass
class MeanSequence:
    """The confidence sequence of the mean of `population` scores, fed one score at a time in a
    random order (`add`)."""

    population: int
    alpha: float = 0.05
    seen: int = 0
    total: float = 0.0
    low: float = 0.0
    high: float = 1.0
    _sum_sq: float = 0.0  # of (score - running mean)^2, for the bets' variance estimate
    _mean: float = 0.5
    _grid: np.ndarray | None = field(default=None, repr=False)
    _step: float = 0.0
    _log_up: np.ndarray | None = field(default=None, repr=False)
    _log_down: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import numpy as np

        if self.population < 1:
            raise ValueError("a confidence sequence needs at least one case")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha is between 0 and 1, got {self.alpha!r}")
        points = max(GRID, 8 * self.population + 1)  # finer than the mean's own steps (1/N)
        self._grid = np.linspace(0.0, 1.0, points)
        self._step = 1.0 / (points - 1)
        self._log_up = np.zeros(points)
        self._log_down = np.zeros(points)

    def add(self, score: float) -> None:
        """One more case's score (in [0, 1]), drawn without replacement at random."""
        import numpy as np

        if not (math.isfinite(score) and 0.0 <= score <= 1.0):
            raise ValueError(f"a score for the confidence sequence is in [0, 1], got {score!r}")
        if self.seen >= self.population:
            raise ValueError("every case of the population has been seen")
        assert self._grid is not None and self._log_up is not None and self._log_down is not None
        t = self.seen + 1
        left = self.population - self.seen  # cases not yet seen, this one included
        # each candidate's conditional mean of this draw; outside [0, 1] the candidate is impossible
        mu = (self.population * self._grid - self.total) / left
        possible = (mu >= 0.0) & (mu <= 1.0)
        variance = (self._sum_sq + 0.25) / t  # a predictable estimate (prior 1/4 of one case)
        bet = math.sqrt(2 * math.log(2 / self.alpha) / (variance * t * math.log(t + 1)))
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.minimum(bet, CLIP / np.where(mu > 0, mu, np.inf))
            down = np.minimum(bet, CLIP / np.where(mu < 1, 1 - mu, np.inf))
            self._log_up += np.log1p(np.where(possible, up * (score - mu), 0.0))
            self._log_down += np.log1p(np.where(possible, -down * (score - mu), 0.0))
        # the hedged capital: the mean of the two gamblers', in logs
        hedged = np.logaddexp(self._log_up, self._log_down) - math.log(2)
        alive = possible & (hedged < math.log(1 / self.alpha))
        self.seen, self.total = t, self.total + score
        delta = score - self._mean
        self._mean += delta / t
        self._sum_sq += delta * (score - self._mean)
        if self.seen == self.population:  # every case seen: the mean is known
            exact = self.total / self.population
            self.low, self.high = exact, exact
            return
        # what the cases not yet seen could still make of the mean, whatever their scores
        least, most = self.total / self.population, (self.total + (self.population - t)) / self.population
        if alive.any():  # the surviving candidates, widened by a grid step (the mean lies between two)
            candidates = self._grid[alive]
            least = max(least, float(candidates.min()) - self._step)
            most = min(most, float(candidates.max()) + self._step)
        self.low = max(self.low, least)
        self.high = min(self.high, most)
        self.low = min(self.low, self.high)

    def decision(self, threshold: float) -> Decision | None:
        """ "above" once the whole sequence is at or above `threshold`, "below" once it is below
        it; None while it straddles it."""
        if self.low >= threshold:
            return "above"
        if self.high < threshold:
            return "below"
        return None
