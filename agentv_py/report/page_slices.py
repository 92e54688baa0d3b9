"""`agentv report --by KEY` (docs/metrics.md#slices): the page's numbers per value of a metadata
key of the cases — cases, pass rate and mean score with their intervals, micro P/R/F1, detection
AP, and each field's F1 — from a `page_cases.Totals` per slice (`Totals.by`). With a repeated
run, each run counts as a case here (the Repeats section has the case-clustered numbers)."""

from __future__ import annotations

from typing import Any

from agentv_py.report.slices import NONE
from agentv_py.scoring.intervals import headline
from agentv_py.scoring.metrics import field_labels, total


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def slice_section(key: str, slices: dict[str, Any]) -> dict[str, Any]:
    """What the template's Slices section shows: a row per slice (sorted, `(none)` last), and a
    table of each field's F1 per slice."""
    ordered = sorted(slices.items(), key=lambda item: (item[0] == NONE, item[0]))
    rows = []
    f1s: dict[str, dict[str, str]] = {}
    for label, totals in ordered:
        shown = headline(totals.verdicts["pass"], totals.scores)
        labels = field_labels(totals.counts)
        per_field = {labels[k]: counts for k, counts in totals.counts.items()}
        summed = total(per_field)
        ap = {name: found.at() for name, found in totals.detection.results().items()}
        rows.append(
            {
                "label": label,
                "cases": totals.cases,
                "passed": totals.verdicts["pass"],
                "pass_rate": shown.parts()[0].removeprefix("pass rate ") if shown is not None else "-",
                "mean": shown.parts()[1].removeprefix("mean score ") if shown is not None else "-",
                "precision": _num(summed.precision),
                "recall": _num(summed.recall),
                "f1": _num(summed.f1),
                "ap": ", ".join(f"{name} {_num(value)}" for name, value in ap.items()),
            }
        )
        for name, counts in per_field.items():
            f1s.setdefault(name, {})[label] = _num(counts.f1)
    labels_in_order = [label for label, _ in ordered]
    return {
        "key": key,
        "rows": rows,
        "labels": labels_in_order,
        "fields": [[name, [f1s[name].get(label, "-") for label in labels_in_order]] for name in sorted(f1s)],
    }
