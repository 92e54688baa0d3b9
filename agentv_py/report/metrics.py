"""`agentv metrics`: sum `details.metrics` over a results file into dataset-level P/R/F1.

Rows are streamed (memory does not grow with the file: a line over `MAX_LINE_BYTES` is skipped
unread, and only the first `PROBLEMS_KEPT` skipped lines are described); evaluator results are
walked including nested ones (a composite's members, `details.evaluator_results`), optionally only those
with a given name.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.jsonl import read_rows
from agentv_py.report.render import visible
from agentv_py.scoring.metrics import Counts, macro_f1, total

HOW_TO_EMIT = (
    "metrics come from evaluators that put per-field counts in details.metrics, e.g. "
    '{"metrics": {"supplier.name": {"tp": 1, "tn": 0, "fp": 0, "fn": 0}}}; the example judges '
    "evals/invoice-extraction/judges/header_confusion_metrics.py and line_item_matching.py do "
    "(see docs/metrics.md)"
)
PROBLEMS_KEPT = 100  # skipped lines described (the rest are counted)
REASON_CHARS = 300  # a skipped line's reason is cut to this (it may quote ids and field names)


@dataclass
class MetricsReport:
    path: str
    evaluator: str | None = None
    per_field: dict[str, Counts] = field(default_factory=dict)
    rows: int = 0
    rows_with_metrics: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, what was skipped): the first ones
    skipped: int = 0  # every skipped line or entry, described or not
    evaluators_with_metrics: set[str] = field(default_factory=set)

    def skip(self, line: int, reason: str) -> None:
        self.skipped += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append((line, reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"))

    @property
    def problems_not_listed(self) -> int:
        return self.skipped - len(self.problems)

    @property
    def total(self) -> Counts:
        return total(self.per_field)

    @property
    def macro_f1(self) -> float | None:
        return macro_f1(self.per_field)

    def to_json(self) -> dict[str, Any]:
        summed = self.total
        return {
            "file": self.path,
            "evaluator": self.evaluator,
            "fields": {name: {**c.to_dict(), "support": c.support} for name, c in self.per_field.items()},
            "total": {**summed.to_dict(), "support": summed.support},
            "micro": {"precision": summed.precision, "recall": summed.recall, "f1": summed.f1},
            "macro_f1": self.macro_f1,
            "rows": self.rows,
            "rows_with_metrics": self.rows_with_metrics,
            "skipped": [{"line": line, "reason": reason} for line, reason in self.problems],
            "skipped_count": self.skipped,
        }


def _walk(results: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(evaluator name, details) for every evaluator result, nested ones included: a composite's
    members (`evaluator_results`), and dicts a code judge nests in `details.evaluator_results`."""
    for result in results:
        if isinstance(result, EvaluatorResult):
            name, details = result.name, result.details
        elif isinstance(result, dict) and isinstance(result.get("details"), dict):
            name, details = str(result.get("name", "")), result["details"]
        else:
            continue
        yield name, details
        if isinstance(result, EvaluatorResult):
            yield from _walk(list(result.evaluator_results))
        nested = details.get("evaluator_results")
        if isinstance(nested, list):
            yield from _walk(nested)


def aggregate(path: str | Path, evaluator: str | None = None, max_line: int | None = None) -> MetricsReport:
    """Sum every `details.metrics` in a results file (bad lines and entries are skipped, noted).
    `max_line`: the longest line read, in bytes (default `jsonl.MAX_LINE_BYTES`)."""
    report = MetricsReport(str(path), evaluator)
    for line, row in read_rows(path, max_line):
        if not isinstance(row, ResultRow):
            report.skip(line, row)
            continue
        report.rows += 1
        found = False
        for name, details in _walk(row.evaluator_results):
            metrics = details.get("metrics")
            if not isinstance(metrics, dict):
                continue
            report.evaluators_with_metrics.add(name)
            if evaluator is not None and name != evaluator:
                continue
            for field_name, counts in metrics.items():
                try:
                    if not isinstance(counts, dict):
                        raise ValueError(f"expected an object of counts, got {json.dumps(counts)[:40]}")
                    parsed = Counts.from_mapping(counts)
                except ValueError as exc:
                    report.skip(line, f"{row.eval_id}: {name}: details.metrics.{field_name}: {exc}")
                    continue
                report.per_field.setdefault(str(field_name), Counts())
                report.per_field[str(field_name)] += parsed
                found = True
        report.rows_with_metrics += found
    return report


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_table(console: Any, report: MetricsReport) -> None:
    """The table. Field names come from judges' output: data, shown as text (`visible`), never markup."""
    from rich.table import Table
    from rich.text import Text

    title = f"Extraction metrics: {report.path}" + (f" (evaluator {report.evaluator})" if report.evaluator else "")
    table = Table(title=Text(visible(title), style="table.title"), title_justify="left")
    for column in ("field", "TP", "TN", "FP", "FN", "precision", "recall", "F1", "support"):
        table.add_column(column, justify="left" if column == "field" else "right", overflow="fold")
    for name, c in report.per_field.items():
        table.add_row(
            Text(visible(name)),
            str(c.tp),
            str(c.tn),
            str(c.fp),
            str(c.fn),
            _num(c.precision),
            _num(c.recall),
            _num(c.f1),
            str(c.support),
        )
    summed = report.total
    table.add_section()
    table.add_row(
        "total",
        str(summed.tp),
        str(summed.tn),
        str(summed.fp),
        str(summed.fn),
        _num(summed.precision),
        _num(summed.recall),
        _num(summed.f1),
        str(summed.support),
        style="bold",
    )
    console.print(table)
    console.print(
        f"micro P/R/F1: {_num(summed.precision)} / {_num(summed.recall)} / {_num(summed.f1)}   "
        f"macro-F1: {_num(report.macro_f1)}",
        highlight=False,
    )
    console.print(
        f"{report.rows_with_metrics} of {report.rows} rows had metrics"
        + (f"; {report.skipped} skipped (see stderr)" if report.skipped else ""),
        highlight=False,
    )


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula


def csv_cell(value: object) -> str:
    """`value` as a CSV cell that is safe to show and to open in a spreadsheet: control characters
    written as escapes (`visible`), and a cell starting with `=`, `+`, `-`, `@`, tab or CR prefixed
    with `'` (the OWASP CSV-injection rule), so it is read as text, never as a formula."""
    text = visible(str(value))
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def render_csv(report: MetricsReport) -> str:
    """The report as CSV: one row per field, then `__total__` and `__macro__`.

    Field names come from the results file (the `details.metrics` keys a judge wrote) and are
    data: every cell goes through `csv_cell`, so a name's control characters are written as
    escapes (`\\x1b`, never a raw terminal escape) and a name starting with `=`, `+`, `-`, `@`,
    tab or CR gets a leading `'` (OWASP's CSV-injection rule: `=HYPERLINK(...)` is shown as text
    by a spreadsheet, not evaluated). Numbers are never negative, so they are never prefixed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["field", "tp", "tn", "fp", "fn", "precision", "recall", "f1", "support"])

    def blank(v: float | None) -> str:
        return "" if v is None else f"{v:.6f}"

    def row(*cells: object) -> None:
        writer.writerow([csv_cell(cell) for cell in cells])

    for name, c in [*report.per_field.items(), ("__total__", report.total)]:
        row(name, c.tp, c.tn, c.fp, c.fn, blank(c.precision), blank(c.recall), blank(c.f1), c.support)
    row("__macro__", "", "", "", "", "", "", blank(report.macro_f1), "")
    return out.getvalue()
