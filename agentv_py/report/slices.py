"""`agentv metrics --by KEY`: every number broken down by a metadata key of the cases (`metadata:
{doc_type: receipt}` in the dataset, written on their rows): one `MetricsReport` per value, with
its own intervals (a repeated run's rows clustered by case, as the whole file's are). Rows whose
case has no such key form the slice `(none)`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentv_py.report.lean_rows import LeanRow, field_counts
from agentv_py.report.lean_sums import keep_cells, keep_row, signature
from agentv_py.scoring.metrics import Counts

NONE = "(none)"


def slice_label(value: Any) -> str:
    """A metadata value as a slice's name: a text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class Slices:
    """The rows of a results file by the value of their case's metadata `key`."""

    def __init__(self, key: str, evaluator: str | None, new_report: Callable[[], Any]) -> None:
        """`new_report()`: an empty `metrics.MetricsReport` for a slice first seen."""
        self.key = key
        self._evaluator, self._new_report = evaluator, new_report
        self.reports: dict[str, Any] = {}
        self._positions: dict[str, dict[int, int]] = {}
        self._clusters: dict[str, dict[str, dict[int, list[int]]]] = {}

    def add(self, row: LeanRow, documents: bool) -> None:
        metadata = row.metadata if isinstance(row.metadata, dict) else {}
        label = slice_label(metadata[self.key]) if self.key in metadata else NONE
        report = self.reports.get(label)
        if report is None:
            report = self.reports[label] = self._new_report()
        report.rows += 1
        report.detection.add(row, self._evaluator)
        kept: dict[int, list[int]] = {}
        for key, counts in field_counts(row, []).items():
            if self._evaluator is not None and key[0] != self._evaluator:
                continue
            known = report.counts.get(key)
            if known is None:
                known = report.counts[key] = Counts(counts.tp, counts.tn, counts.fp, counts.fn)
            else:
                known += counts
            keep_row(kept, known, counts.tp, counts.fp, counts.fn)
        if not kept:
            return
        report.rows_with_metrics += 1
        if not documents:
            return
        if row.repeat is not None or row.rejudge is not None:  # the case is the document
            cluster = self._clusters.setdefault(label, {}).setdefault(row.eval_id, {})
            for identity, (tp, fp, fn) in kept.items():
                keep_cells(cluster, identity, tp, fp, fn)
        else:
            report.signatures[signature(kept, self._positions.setdefault(label, {}), report.counts)] += 1

    def finish(self) -> None:
        """A repeated run's cases into their slices' documents."""
        for label, clusters in self._clusters.items():
            report, positions = self.reports[label], self._positions.setdefault(label, {})
            for cluster in clusters.values():
                report.signatures[signature(cluster, positions, report.counts)] += 1
        self._clusters.clear()

    def ordered(self) -> list[tuple[str, Any]]:
        """The slices by name, `(none)` last."""
        return sorted(self.reports.items(), key=lambda item: (item[0] == NONE, item[0]))
