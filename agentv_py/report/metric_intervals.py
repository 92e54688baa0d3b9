"""Confidence intervals of `agentv metrics`' numbers (docs/statistics.md): per field precision,
recall and F1, micro precision, recall and F1, and macro F1, from the rows' own counts
(`MetricsReport.signatures`) by `scoring.intervals`: Wilson for a precision or recall whose
every document adds at most one to the denominator (a scalar field), the document bootstrap
(BCa) for everything else."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentv_py.report.metrics import MetricsReport
from agentv_py.scoring.intervals import LEVEL, SEED, Bootstrap, Interval, bootstrap_arrays, prf_statistic, wilson
from agentv_py.scoring.metrics import Counts

RATES = ("precision", "recall", "f1")


@dataclass
class MetricIntervals:
    fields: dict[str, dict[str, Interval | None]] = field(default_factory=dict)  # name -> rate -> interval
    micro: dict[str, Interval | None] = field(default_factory=dict)
    macro_f1: Interval | None = None
    run: Bootstrap | None = None

    def to_json(self) -> dict[str, Any]:
        def shown(interval: Interval | None) -> dict[str, Any] | None:
            return interval.to_dict() if interval is not None else None

        return {
            **(self.run.to_dict() if self.run is not None else {}),
            "fields": {name: {rate: shown(i) for rate, i in rates.items()} for name, rates in self.fields.items()},
            "micro": {rate: shown(i) for rate, i in self.micro.items()},
            "macro_f1": shown(self.macro_f1),
        }


def metric_intervals(report: MetricsReport, level: float = LEVEL, seed: int = SEED) -> MetricIntervals:
    """The intervals of every rate `report` shows (its `signatures` kept: `aggregate(documents=True)`)."""
    import numpy as np

    fields = len(report.counts)
    found = MetricIntervals()
    if not report.signatures:
        return found
    # In whatever order the file has its rows (and so its fields), the same documents must give
    # the same intervals: fields laid out by name, documents sorted by their counts.
    keys = list(report.counts)
    canonical = {j: c for c, j in enumerate(sorted(range(fields), key=lambda j: keys[j]))}
    vectors = np.zeros((len(report.signatures), 3 * fields))
    weights = np.fromiter(report.signatures.values(), dtype=np.int64, count=len(report.signatures))
    for row, key in enumerate(report.signatures):
        cells = np.frombuffer(key, dtype=np.int64).reshape(-1, 4)
        for position, tp, fp, fn in cells:
            at = 3 * canonical[int(position)]
            vectors[row, at : at + 3] = (tp, fp, fn)
    report.signatures.clear()  # held as arrays from here: the keys' memory goes before the bootstrap
    order = np.lexsort(vectors.T[::-1])
    vectors, weights = vectors[order], weights[order]
    per_field = vectors.reshape(len(weights), fields, 3)
    # per field: does every document add at most one to tp + fp (to tp + fn)? Then Wilson's interval
    single_precision = [bool(v) for v in np.all(per_field[:, :, 0] + per_field[:, :, 1] <= 1, axis=0)]
    single_recall = [bool(v) for v in np.all(per_field[:, :, 0] + per_field[:, :, 2] <= 1, axis=0)]
    intervals, found.run = bootstrap_arrays(vectors, weights, prf_statistic(fields), level, seed)
    names = list(report.per_field)
    for j, (name, counts) in enumerate(zip(names, report.counts.values(), strict=True)):
        c = canonical[j]
        rates = dict(zip(RATES, intervals[3 * c : 3 * c + 3], strict=True))
        if single_precision[c]:
            rates["precision"] = wilson(counts.tp, counts.tp + counts.fp, level)
        if single_recall[c]:
            rates["recall"] = wilson(counts.tp, counts.tp + counts.fn, level)
        found.fields[name] = _spread(rates, counts, level)
    micro = intervals[3 * fields :]
    found.micro = _spread(dict(zip(RATES, micro[:3], strict=True)), report.total, level)
    found.macro_f1 = micro[3]
    return found


def _spread(rates: dict[str, Interval | None], counts: Counts, level: float) -> dict[str, Interval | None]:
    """A bootstrap interval with no width (every resample alike: a rate of 0 or 1 on few
    documents) says nothing of the noise: Wilson's interval takes its place, F1 read as the share
    TP / (TP + (FP + FN) / 2)."""
    shares = {
        "precision": (counts.tp, counts.tp + counts.fp),
        "recall": (counts.tp, counts.tp + counts.fn),
        "f1": (counts.tp, counts.tp + (counts.fp + counts.fn) / 2),
    }
    out = dict(rates)
    for rate, interval in rates.items():
        if interval is not None and interval.method == "bootstrap" and interval.high - interval.low < 1e-12:
            out[rate] = wilson(*shares[rate], level)
    return out


def shown_field_intervals(counts: dict[Any, Counts], signatures: Mapping[bytes, int]) -> dict[str, dict[str, str]]:
    """Each field's precision, recall and F1 as `0.80 [0.62, 0.93]`, for the HTML report."""
    if not signatures:
        return {}
    report = MetricsReport("", counts=counts, signatures=Counter(signatures))
    found = metric_intervals(report)
    shown: dict[str, dict[str, str]] = {}
    for name, summed in report.per_field.items():
        rates = found.fields.get(name, {})
        shown[name] = {}
        for rate, value in (("precision", summed.precision), ("recall", summed.recall), ("f1", summed.f1)):
            interval = rates.get(rate)
            shown[name][rate] = "-" if value is None else interval.shown(value) if interval else f"{value:.3f}"
    return shown
