"""`agentv plan-size RESULTS --detect DROP`: how many documents a comparison needs to detect a drop
of DROP in the mean score or in a field's F1 (scoring/sample_size.py), from the spread the run
shows: with `--against OTHER` (a second run of the same documents) the paired differences are
measured; from one run, the two runs of a comparison are taken as independent (the difference's
spread is sqrt(2) times one run's: conservative when runs agree on most documents)."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.report.lean_rows import field_counts, read_lean_rows
from agentv_py.scoring.intervals import SEED, bootstrap_sd, ratio
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels
from agentv_py.scoring.sample_size import Plan, plan

PAIRED = "paired runs"
ONE_RUN = "one run (runs assumed independent)"


class PlanError(Exception):
    """Input a plan cannot be made from (exit 2)."""


@dataclass
class _Run:
    scores: dict[str, float] = field(default_factory=dict)  # case id -> its last row's score
    counts: dict[str, dict[FieldKey, Counts]] = field(default_factory=dict)  # case id -> its fields' counts


def _read(path: Path) -> _Run:
    run = _Run()
    for _, row in read_lean_rows(path):
        if isinstance(row, str) or row.status == "error":
            continue
        run.scores[row.eval_id] = row.score
        run.counts[row.eval_id] = field_counts(row, [])
    return run


def make_plans(
    results: Path,
    delta: float,
    *,
    against: Path | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    fields: list[str] | None = None,
    seed: int = SEED,
) -> list[Plan]:
    """A plan for the mean score and for each field (or those named), in that order."""
    first = _read(results)
    second = _read(against) if against is not None else None
    ids = sorted(first.scores if second is None else first.scores.keys() & second.scores.keys())
    if len(ids) < 2:
        where = "in both files" if second is not None else f"in {results}"
        raise PlanError(f"plan-size needs at least 2 scored cases {where} to measure their spread, found {len(ids)}")
    n = len(ids)
    if second is None:
        sd = math.sqrt(2) * statistics.stdev(first.scores[i] for i in ids)
    else:
        sd = statistics.stdev(second.scores[i] - first.scores[i] for i in ids)
    measured = ONE_RUN if second is None else PAIRED
    plans = [plan("mean score", sd, measured, n, delta, alpha, power)]
    keys = {key for i in ids for key in first.counts[i]}
    labels = field_labels(keys)
    wanted = set(fields) if fields else None
    if wanted is not None and (unknown := sorted(wanted - set(labels.values()))):
        known = ", ".join(sorted(labels.values())) or "none"
        raise PlanError(f"no field named {', '.join(unknown)} in {results} (its fields: {known})")
    import numpy as np

    for key in sorted(keys, key=lambda k: labels[k]):
        if wanted is not None and labels[key] not in wanted:
            continue
        groups: Counter[tuple[int, ...]] = Counter()
        for i in ids:
            before = first.counts[i].get(key) or Counts()
            row: tuple[int, ...] = (before.tp, before.fp, before.fn)
            if second is not None:
                after = second.counts[i].get(key) or Counts()
                row += (after.tp, after.fp, after.fn)
            groups[row] += 1
        ordered = sorted(groups)
        vectors = np.array(ordered, dtype=np.float64)
        weights = np.array([groups[k] for k in ordered], dtype=np.int64)
        statistic = _f1 if second is None else _f1_delta
        [spread] = bootstrap_sd(vectors, weights, statistic, seed)
        if spread is None:
            continue  # F1 undefined: nothing to plan for
        per_document = spread * math.sqrt(n) * (math.sqrt(2) if second is None else 1.0)
        plans.append(plan(f"F1 {labels[key]}", per_document, measured, n, delta, alpha, power))
    return plans


def _f1(sums: Any) -> Any:
    return ratio(2 * sums[:, 0], 2 * sums[:, 0] + sums[:, 1] + sums[:, 2]).reshape(-1, 1)


def _f1_delta(sums: Any) -> Any:
    before = ratio(2 * sums[:, 0], 2 * sums[:, 0] + sums[:, 1] + sums[:, 2])
    after = ratio(2 * sums[:, 3], 2 * sums[:, 3] + sums[:, 4] + sums[:, 5])
    return (after - before).reshape(-1, 1)
