"""`agentv eval --stop-early`: the cases run in a random (seeded) order and the run stops taking
new ones as soon as the gate's outcome is settled (docs/statistics.md, "Stopping early"):

- with `--threshold X` (the mean score over *all* the selected cases >= X): by the confidence
  sequence of scoring/sequential.py, at level 1 - alpha (alpha = 1 - the run's --confidence), fed
  the scores in the random order (rows that finish out of order wait for the ones before them, so
  a slow case never changes what is seen first);
- with the default gate (every case passed): at the first case, in that order, that did not pass;
- at the first target or evaluator error either way (an error fails every gate).

Cases already started finish and are written; `--resume` runs the rest to the end."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentv_py.models.results import ResultRow
from agentv_py.prepared import CaseSelection, PreparedCase, case_ids
from agentv_py.scoring.sequential import MeanSequence

SEED = 20_260_227


@dataclass
class StopEarly:
    """The state of a stopping run: what was seen in the random order and what it decided."""

    cases: int
    threshold: float | None
    alpha: float
    order: dict[str, int]  # case id -> its place in the random order
    seed: int = SEED
    decided: str | None = None  # "above", "below", "a case did not pass", "an error"
    used: int = 0  # cases seen in order
    rows: int = 0  # cases that finished, in any order
    sequence: MeanSequence | None = None
    _waiting: dict[int, ResultRow] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.threshold is not None:
            self.sequence = MeanSequence(self.cases, self.alpha)

    @property
    def settled(self) -> bool:
        return self.decided is not None

    @property
    def stopped(self) -> bool:
        """Settled before every case ran: the run left some out."""
        return self.decided is not None and self.rows < self.cases

    def add(self, row: ResultRow) -> None:
        """A finished case's row; rows are read in the random order, each once the ones before it came."""
        place = self.order.get(row.eval_id)
        if place is None:
            return
        self.rows += 1
        if self.decided is not None:
            return
        self._waiting[place] = row
        while self.used in self._waiting:
            self._see(self._waiting.pop(self.used))
            if self.settled:
                break

    def _see(self, row: ResultRow) -> None:
        self.used += 1
        if row.status == "error" or any(r.status == "error" for r in row.evaluator_results):
            self.decided = "an error"
        elif self.sequence is None:
            if row.verdict != "pass" and row.expected_outcome is None:
                self.decided = "a case did not pass"
        else:
            self.sequence.add(min(1.0, max(0.0, row.score)))
            assert self.threshold is not None
            self.decided = self.sequence.decision(self.threshold)

    def said(self) -> str:
        """What the summary says of a run that stopped."""
        why = {
            "an error": "a case had an error, which fails the gate",
            "a case did not pass": "a case did not pass (the gate: every case passed)",
        }.get(self.decided or "")
        if why is None and self.sequence is not None:
            side = ">=" if self.decided == "above" else "<"
            why = (
                f"the mean score of all {self.cases} cases is {side} {self.threshold:g} at "
                f"{1 - self.alpha:.0%} (confidence sequence [{self.sequence.low:.3f}, {self.sequence.high:.3f}])"
            )
        return f"stopped early after {self.rows} of {self.cases} cases: {why}"

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "cases": self.cases,
            "run": self.rows,
            "seen_in_order": self.used,
            "decided": self.decided,
            "seed": self.seed,
        }
        if self.sequence is not None:
            record |= {"threshold": self.threshold, "level": 1 - self.alpha}
            record |= {"low": self.sequence.low, "high": self.sequence.high}
        return record


class StoppingCases(CaseSelection):
    """The cases in a random order, given out until the run's gate is settled."""

    def __init__(self, cases: Sequence[PreparedCase], indices: Sequence[int], stop: StopEarly) -> None:
        super().__init__(cases, indices)
        self.stop = stop

    def __iter__(self) -> Iterator[PreparedCase]:
        for case in super().__iter__():
            if self.stop.decided is not None:
                return
            yield case


def stopping(cases: Sequence[PreparedCase], threshold: float | None, confidence: float) -> StoppingCases:
    """`cases` in a random order (seeded: the same cases give the same order), with their stop."""
    order = list(range(len(cases)))
    random.Random(SEED).shuffle(order)
    ids = case_ids(cases)
    stop = StopEarly(len(cases), threshold, 1 - confidence, {ids[i]: place for place, i in enumerate(order)})
    return StoppingCases(cases, order, stop)
