"""`agentv metrics`: sum per-field counts over a results file into dataset-level P/R/F1.

Counts come from `field_accuracy` results (each field's expected and actual value), `iou_score`
results (detections) and judges' `details.metrics`, kept apart per (evaluator, field)
(`scoring.metrics.row_field_counts`).

Rows are streamed (memory does not grow with the file: a line over `MAX_LINE_BYTES` is skipped
unread, and only the first `PROBLEMS_KEPT` skipped lines are described); evaluator results are
walked including nested ones (a composite's members, `details.evaluator_results`), optionally only those
with a given name.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.report.calibration import Calibration
from agentv_py.report.detection import DetectionTally
from agentv_py.report.lean_kinds import row_kinds
from agentv_py.report.lean_rows import field_counts, read_lean_rows
from agentv_py.report.lean_sums import Sums, keep_cells, keep_row, signature
from agentv_py.report.slices import Slices
from agentv_py.report.text import visible
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels, macro_f1, total
from agentv_py.scoring.repeats import RepeatReport, RepeatTally
from agentv_py.scoring.taxonomy import CATEGORIES, LABELS, add_taxonomy

HOW_TO_EMIT = (
    "per-field counts come from field_accuracy and iou_score results, and from judges that put them in "
    "details.metrics, e.g. "
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
    counts: dict[FieldKey, Counts] = field(default_factory=dict)  # (evaluator, field): the only per-row growth
    rows: int = 0
    rows_with_metrics: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, what was skipped): the first ones
    skipped: int = 0  # every skipped line or entry, described or not
    evaluators_with_metrics: set[str] = field(default_factory=set)  # collected only with `evaluator`
    kinds: dict[FieldKey, dict[str, int]] = field(default_factory=dict)  # (evaluator, field) -> errors by kind
    # with `documents`: each distinct row's own counts (field position, tp, fp, fn, ... as int64
    # bytes: `signature`) and how many rows have them, for the document bootstrap
    # (report/metric_intervals.py); a few hundred bytes per distinct row
    signatures: Counter[bytes] = field(default_factory=Counter)
    intervals: Any = None  # `metric_intervals.MetricIntervals`, when computed
    tally: RepeatTally = field(default_factory=RepeatTally)  # the rows of a repeated run, per case
    repeats: RepeatReport | None = None  # what those show (`RepeatTally.report`), when computed
    slices: Any = None  # with `--by KEY`: `slices.Slices`, a report per value of the key
    detection: DetectionTally = field(default_factory=DetectionTally)  # labelled iou_score: COCO AP

    def skip(self, line: int, reason: str) -> None:
        self.skipped += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append((line, reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"))

    @property
    def per_field(self) -> dict[str, Counts]:
        """Counts by display name: the bare field, or `evaluator/field` when several evaluators name it."""
        labels = field_labels(self.counts)
        return {labels[key]: counts for key, counts in self.counts.items()}

    @property
    def taxonomy(self) -> dict[str, dict[str, int]]:
        """Misses by kind per field (`scoring.taxonomy.row_taxonomy`: every matcher miss, and every
        FP or FN of `per_field`), every kind present (0 included), fields with a miss only, the most
        misses first; fields named as in `per_field`."""
        labels = field_labels(self.counts.keys() | self.kinds.keys())
        rows = [(labels[key], {kind: kinds.get(kind, 0) for kind in CATEGORIES}) for key, kinds in self.kinds.items()]
        return dict(sorted(rows, key=lambda item: (-sum(item[1].values()), item[0])))

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
            "taxonomy": self.taxonomy,
            **({"intervals": self.intervals.to_json()} if self.intervals is not None else {}),
            **({"repeats": self.repeats.to_json()} if self.repeats is not None else {}),
            **({"detection": self.detection.to_json()} if self.detection.images else {}),
            **(
                {"by": self.slices.key, "slices": {label: r.to_json() for label, r in self.slices.ordered()}}
                if self.slices is not None
                else {}
            ),
        }


def aggregate(
    path: str | Path,
    evaluator: str | None = None,
    max_line: int | None = None,
    taxonomy: bool = True,
    documents: bool = False,
    by: str | None = None,
    calibration: Calibration | None = None,
) -> MetricsReport:
    """Sum per-field counts over a results file (`row_field_counts`: judges' `details.metrics`,
    `field_accuracy` fields, `iou_score` detections; bad lines and entries are skipped, noted).
    `max_line`: the longest line read, in bytes (default `jsonl.MAX_LINE_BYTES`). `taxonomy`:
    also sum misses by kind (`MetricsReport.taxonomy`; without it, that stays empty).
    `documents`: also keep each row's own counts, grouped (`MetricsReport.signatures`). `by`: also
    a report per value of that metadata key (`MetricsReport.slices`, report/slices.py).
    `calibration`: fed every row's field confidences (report/calibration.py)."""
    report = MetricsReport(str(path), evaluator)
    sums = Sums(report.counts)
    kept: dict[int, list[int]] = {}
    positions: dict[int, int] = {}  # a field's Counts (by identity) -> its place in `report.counts`
    tally = RepeatTally()  # a repeated run's rows, per case (MixedRows when the file mixes them)
    clusters: dict[str, dict[int, list[int]]] = {}  # repeated: each case's counts over its rows
    single: int | None = None  # the first line of a row that is not of a repeated run
    slices = report.slices = Slices(by, evaluator, lambda: MetricsReport(str(path), evaluator)) if by else None
    for line, row in read_lean_rows(path, max_line):  # rows as `jsonl.read_rows` reads them, lighter
        if isinstance(row, str):
            report.skip(line, row)
            continue
        report.rows += 1
        problems: list[str] = []
        found = False
        summed = report.counts
        repeated = row.repeat is not None or row.rejudge is not None
        keep = documents or repeated
        kept.clear()
        sums.row = kept if keep else None
        if evaluator is None:
            found = sums.add_row(row, problems)  # the row's counts straight into the sums
        else:
            for key, counts in field_counts(row, problems).items():
                report.evaluators_with_metrics.add(key[0])
                if key[0] != evaluator:
                    continue
                known = summed.get(key)
                if known is not None:
                    known += counts
                else:
                    known = summed[key] = Counts(counts.tp, counts.tn, counts.fp, counts.fn)
                if keep:
                    keep_row(kept, known, counts.tp, counts.fp, counts.fn)
                found = True
        if repeated:
            outcomes = {identity: tuple(cells) for identity, cells in kept.items()}
            passed = row.status == "ok" and row.verdict == "pass"
            tally.add(line, row.eval_id, row.repeat, row.rejudge, passed, outcomes)
        elif single is None:  # the first row without a run: enough to refuse a file that mixes them
            single = line
            tally.add(line, row.eval_id, None, None, False)
        if documents and found and repeated:  # the case is the document: its runs are resampled together
            cluster = clusters.setdefault(row.eval_id, {})
            for identity, (tp, fp, fn) in kept.items():
                keep_cells(cluster, identity, tp, fp, fn)
        elif documents and found:
            report.signatures[signature(kept, positions, report.counts)] += 1
        if taxonomy:
            kinds = row_kinds(row)
            add_taxonomy(
                report.kinds, kinds if evaluator is None else {k: v for k, v in kinds.items() if k[0] == evaluator}
            )
        problems += report.detection.add(row, evaluator)
        for problem in problems:
            if evaluator is None or problem.startswith(f"{evaluator}: "):
                report.skip(line, f"{row.eval_id}: {problem}")
        report.rows_with_metrics += found
        if slices is not None:
            slices.add(row, documents)
        if calibration is not None:
            calibration.add(row)
    if slices is not None:
        slices.finish()
    for cluster in clusters.values():
        report.signatures[signature(cluster, positions, report.counts)] += 1
    labels = field_labels(report.counts)
    tally.rename({id(counts): labels[key] for key, counts in report.counts.items()})
    report.tally = tally
    return report


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _with(value: float | None, rates: dict[str, Any] | None, rate: str) -> str:
    """`0.80 [0.62, 0.93]`: the value and its interval, at one precision, when there is one."""
    interval = rates.get(rate) if rates else None
    if value is None or interval is None:
        return _num(value)
    return str(interval.shown(value))


def render_table(console: Any, report: MetricsReport) -> None:
    """The table. Field names come from judges' output: data, shown as text (`visible`), never markup."""
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table

    title = f"Extraction metrics: {report.path}" + (f" (evaluator {report.evaluator})" if report.evaluator else "")
    columns = [Column("field")]
    columns += [Column(name, justify="right") for name in ("TP", "TN", "FP", "FN", "precision", "recall", "F1")]
    columns.append(Column("support", justify="right"))

    found = report.intervals

    def cells(c: Counts, rates: dict[str, Any] | None) -> list[str]:
        return [
            str(c.tp),
            str(c.tn),
            str(c.fp),
            str(c.fn),
            _with(c.precision, rates, "precision"),
            _with(c.recall, rates, "recall"),
            _with(c.f1, rates, "f1"),
            str(c.support),
        ]

    rows: list[list[Text | str]] = [
        [Text(visible(name)), *cells(c, found.fields.get(name) if found else None)]
        for name, c in report.per_field.items()
    ]
    summed = report.total
    micro = found.micro if found else None
    print_table(console, Text(visible(title)), columns, rows, footer=["total", *cells(summed, micro)])
    macro = {"f1": found.macro_f1} if found else None
    rates = (
        f"micro P/R/F1: {_with(summed.precision, micro, 'precision')} / {_with(summed.recall, micro, 'recall')} / "
        f"{_with(summed.f1, micro, 'f1')}"
    )
    macro_f1 = f"macro-F1: {_with(report.macro_f1, macro, 'f1')}"
    for line in [rates, macro_f1] if found is not None else [f"{rates}   {macro_f1}"]:
        console.print(line, highlight=False, markup=False)
    if found is not None and found.run is not None:
        run = found.run
        console.print(
            f"{run.level:.0%} intervals [low, high] over {run.documents} documents: Wilson for a scalar field's "
            f"precision and recall, else a document bootstrap (BCa, {run.resamples} resamples, seed {run.seed}); "
            "docs/statistics.md",
            highlight=False,
            markup=False,
        )
    console.print(
        f"{report.rows_with_metrics} of {report.rows} rows had metrics"
        + (f"; {report.skipped} skipped (see stderr)" if report.skipped else ""),
        highlight=False,
    )


def render_taxonomy(console: Any, report: MetricsReport) -> None:
    """`--taxonomy`: misses by kind per field (docs/metrics.md#failure-taxonomy), as plain text."""
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table

    taxonomy = report.taxonomy
    if not taxonomy:
        which = f" (evaluator {visible(report.evaluator)})" if report.evaluator else ""
        console.print(Text(f"Misses by kind: no field_accuracy miss in this file{which}"))
        return
    columns = [Column("field"), *(Column(LABELS[kind], justify="right") for kind in CATEGORIES)]
    columns.append(Column("misses", justify="right"))
    rows: list[list[Text | str]] = [
        [Text(visible(name)), *(str(kinds[kind]) for kind in CATEGORIES), str(sum(kinds.values()))]
        for name, kinds in taxonomy.items()
    ]
    totals = {kind: sum(kinds[kind] for kinds in taxonomy.values()) for kind in CATEGORIES}
    footer = ["total", *(str(totals[kind]) for kind in CATEGORIES), str(sum(totals.values()))]
    print_table(console, "Misses by kind", columns, rows, footer=footer)


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
    found = report.intervals
    bounds = [f"{rate}_{end}" for rate in ("precision", "recall", "f1") for end in ("low", "high")] if found else []
    writer.writerow(["field", "tp", "tn", "fp", "fn", "precision", "recall", "f1", "support", *bounds])

    def blank(v: float | None) -> str:
        return "" if v is None else f"{v:.6f}"

    def ends(rates: dict[str, Any] | None) -> list[str]:
        if found is None:
            return []
        out = []
        for rate in ("precision", "recall", "f1"):
            interval = (rates or {}).get(rate)
            out += [blank(interval.low), blank(interval.high)] if interval is not None else ["", ""]
        return out

    def row(*cells: object) -> None:
        writer.writerow([csv_cell(cell) for cell in cells])

    for name, c in report.per_field.items():
        rates = found.fields.get(name) if found else None
        row(name, c.tp, c.tn, c.fp, c.fn, blank(c.precision), blank(c.recall), blank(c.f1), c.support, *ends(rates))
    c = report.total
    micro = found.micro if found else None
    row("__total__", c.tp, c.tn, c.fp, c.fn, blank(c.precision), blank(c.recall), blank(c.f1), c.support, *ends(micro))
    macro = ends({"f1": found.macro_f1}) if found else []
    row("__macro__", "", "", "", "", "", "", blank(report.macro_f1), "", *macro)
    return out.getvalue()
