"""`agentv plan-size RESULTS --detect DROP`: how many documents a comparison needs to detect a drop
of DROP in the mean score or in a field's F1 (scoring/sample_size.py), from the spread the run
shows: with `--against OTHER` (a second run of the same documents) the paired differences are
measured; from one run, the two runs of a comparison are taken as independent (the difference's
spread is sqrt(2) times one run's: conservative when runs agree on most documents). From a
repeated run (`--repeat K`), the paired differences of two runs of the same documents are
measured within each document: every ordered pair of a case's runs is one paired difference (the
run-to-run noise its flips show), as two runs of a comparison of an unchanged extractor differ."""

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
from agentv_py.scoring.repeats import MixedRows, RepeatTally
from agentv_py.scoring.sample_size import Plan, plan

PAIRED = "paired runs"
ONE_RUN = "one run (runs assumed independent)"
REPEATED = "repeated runs ({k} runs of each document: their run-to-run differences)"


class PlanError(Exception):
    """Input a plan cannot be made from (exit 2)."""


@dataclass
class _Run:
    scores: dict[str, float] = field(default_factory=dict)  # case id -> its last row's score
    counts: dict[str, dict[FieldKey, Counts]] = field(default_factory=dict)  # case id -> its fields' counts


def _read(path: Path) -> tuple[_Run, dict[str, list[tuple[float, dict[FieldKey, Counts]]]]]:
    """A single run's last row per case; or a repeated run's runs per case (each at its first scoring)."""
    run = _Run()
    runs: dict[str, list[tuple[float, dict[FieldKey, Counts]]]] = {}
    tally = RepeatTally()
    for line, row in read_lean_rows(path):
        if isinstance(row, str):
            continue
        try:
            tally.add(line, row.eval_id, row.repeat, row.rejudge, False)
        except MixedRows as exc:
            raise PlanError(f"{path}: {exc}") from None
        if row.status == "error" or row.rejudge not in (None, 1):
            continue
        if row.repeat is not None:
            runs.setdefault(row.eval_id, []).append((row.score, field_counts(row, [])))
            continue
        run.scores[row.eval_id] = row.score
        run.counts[row.eval_id] = field_counts(row, [])
    return run, runs


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
    first, repeated = _read(results)
    if repeated:
        if against is not None:
            raise PlanError(
                f"{results} is a repeated run: its own runs measure the run-to-run noise; plan from it alone "
                "(without --against)"
            )
        return _from_repeats(results, repeated, delta, alpha, power, fields, seed)
    second = None
    if against is not None:
        second, other_repeated = _read(against)
        if other_repeated:
            raise PlanError(f"{against} is a repeated run: plan from it alone (without --against)")
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
    for key in _planned(keys, labels, fields, results):
        groups: Counter[tuple[int, ...]] = Counter()
        for i in ids:
            before = first.counts[i].get(key) or Counts()
            row: tuple[int, ...] = (before.tp, before.fp, before.fn)
            if second is not None:
                after = second.counts[i].get(key) or Counts()
                row += (after.tp, after.fp, after.fn)
            groups[row] += 1
        spread, _ = _spread(groups, _f1 if second is None else _f1_delta, seed)
        if spread is None:
            continue  # F1 undefined: nothing to plan for
        per_document = spread * math.sqrt(n) * (math.sqrt(2) if second is None else 1.0)
        plans.append(plan(f"F1 {labels[key]}", per_document, measured, n, delta, alpha, power))
    return plans


def _from_repeats(
    results: Path,
    repeated: dict[str, list[tuple[float, dict[FieldKey, Counts]]]],
    delta: float,
    alpha: float,
    power: float,
    fields: list[str] | None,
    seed: int,
) -> list[Plan]:
    """Plans from a repeated run: each document's run-to-run differences (see the module)."""
    ids = sorted(i for i, runs in repeated.items() if len(runs) >= 2)
    if len(ids) < 2:
        raise PlanError(f"plan-size needs at least 2 cases with 2 scored runs each in {results}, found {len(ids)}")
    k = max(len(repeated[i]) for i in ids)
    measured = REPEATED.format(k=k)
    within = statistics.fmean(statistics.variance([score for score, _ in repeated[i]]) for i in ids)
    plans = [plan("mean score", math.sqrt(2 * within), measured, len(ids), delta, alpha, power)]
    keys = {key for i in ids for _, counts in repeated[i] for key in counts}
    labels = field_labels(keys)
    for key in _planned(keys, labels, fields, results):
        groups: Counter[tuple[int, ...]] = Counter()  # every ordered pair of a case's runs: one paired difference
        for i in ids:
            cells = [(c.tp, c.fp, c.fn) for c in ((counts.get(key) or Counts()) for _, counts in repeated[i])]
            for a, before in enumerate(cells):
                for b, after in enumerate(cells):
                    if a != b:
                        groups[(*before, *after)] += 1
        spread, units = _spread(groups, _f1_delta, seed)
        if spread is None:
            continue
        per_document = spread * math.sqrt(units)
        plans.append(plan(f"F1 {labels[key]}", per_document, measured, len(ids), delta, alpha, power))
    return plans


def _planned(
    keys: set[FieldKey], labels: dict[FieldKey, str], fields: list[str] | None, results: Path
) -> list[FieldKey]:
    """The fields to plan for, by name (every one without `fields`; PlanError for a name the run lacks)."""
    wanted = set(fields) if fields else None
    if wanted is not None and (unknown := sorted(wanted - set(labels.values()))):
        known = ", ".join(sorted(labels.values())) or "none"
        raise PlanError(f"no field named {', '.join(unknown)} in {results} (its fields: {known})")
    return [key for key in sorted(keys, key=lambda k: labels[k]) if wanted is None or labels[key] in wanted]


def _spread(groups: Counter[tuple[int, ...]], statistic: Any, seed: int) -> tuple[float | None, int]:
    """The bootstrap standard deviation of `statistic` over documents given as distinct count
    vectors and how many have each, and how many documents there are."""
    import numpy as np

    ordered = sorted(groups)
    vectors = np.array(ordered, dtype=np.float64)
    weights = np.array([groups[k] for k in ordered], dtype=np.int64)
    [spread] = bootstrap_sd(vectors, weights, statistic, seed)
    return spread, int(weights.sum())


def _f1(sums: Any) -> Any:
    return ratio(2 * sums[:, 0], 2 * sums[:, 0] + sums[:, 1] + sums[:, 2]).reshape(-1, 1)


def _f1_delta(sums: Any) -> Any:
    before = ratio(2 * sums[:, 0], 2 * sums[:, 0] + sums[:, 1] + sums[:, 2])
    after = ratio(2 * sums[:, 3], 2 * sums[:, 3] + sums[:, 4] + sums[:, 5])
    return (after - before).reshape(-1, 1)
