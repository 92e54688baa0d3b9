"""Terminal output (SPEC §4.2): progress while running, then the summary. Never used for JSONL."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from agentv_py.models.results import ResultRow
from agentv_py.report.summary import MISSES_SHOWN, CaseLine, RunSummary

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

_VERDICT_STYLE = {"pass": "green", "partial": "yellow", "fail": "red", "error": "magenta"}
BAR_WIDTH = 30


def verdict_label(row_status: str, verdict: str) -> str:
    return "error" if row_status == "error" else verdict


class PlainProgress:
    """One line per finished case; for logs and CI (stderr is not a TTY)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.done = 0
        self.width = len(str(total))

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.flush()

    def advance(self, row: ResultRow) -> None:
        self.done += 1
        label = verdict_label(row.status, row.verdict)
        tail = f"  {row.error}" if row.error else ""
        self.stream.write(f"[{self.done:>{self.width}}/{self.total}] {label:<7} {row.score:.3f}  {row.eval_id}{tail}\n")


class RichProgress:
    """A Rich progress bar on stderr (interactive terminals)."""

    def __init__(self, total: int, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task = self._progress.add_task("eval", total=total, status="")
        self._counts = {"pass": 0, "partial": 0, "fail": 0, "error": 0}

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, row: ResultRow) -> None:
        self._counts[verdict_label(row.status, row.verdict)] += 1
        c = self._counts
        status = f"[green]{c['pass']}✓[/] [yellow]{c['partial']}~[/] [red]{c['fail']}✗[/] [magenta]{c['error']}![/]"
        self._progress.update(self._task, advance=1, status=status)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The boxed table needs this much room for its misses column; on a narrower console (or with long
# case ids) the cases are listed instead, each case's misses on their own lines beneath it.
MIN_MISSES_WIDTH = 40
# What the boxed table spends besides the case and misses columns: 5 rules, 4 x 2 padding, score, verdict.
_TABLE_FRAME = 5 + 8 + len("0.000") + len("verdict")


def _details(line: CaseLine, verbose: bool) -> list[str]:
    """What the table says about a case: its error, or its misses (and how many more there are)."""
    if line.error:
        return [line.error if verbose else _shorten(line.error, 160)]
    shown = line.misses if verbose else [_shorten(m, 80) for m in line.misses]
    if line.miss_count > len(line.misses):
        shown.append(f"… {line.miss_count - len(line.misses)} more (--verbose, or see the JSONL)")
    return shown


def _render_table(console: Console, title: str, lines: list[CaseLine], errored: bool, verbose: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("case", overflow="fold")
    table.add_column("score", justify="right")
    table.add_column("verdict")
    table.add_column("misses / error" if errored else "misses", overflow="fold")
    for line in lines:
        label = verdict_label(line.status, line.verdict)
        detail = "; ".join(_details(line, verbose))  # ids and misses are data, never Rich markup
        table.add_row(Text(line.eval_id), f"{line.score:.3f}", Text(label, style=_VERDICT_STYLE[label]), Text(detail))
    console.print(table)


def _render_list(console: Console, title: str, lines: list[CaseLine], verbose: bool) -> None:
    """The narrow layout: no box; one line per case, then its misses (or error) with a hanging indent."""
    from rich.text import Text

    fits = console.width - len("  ") - len("  0.000  partial")  # longer ids get a line of their own
    id_width = max([len("case")] + [len(line.eval_id) for line in lines if len(line.eval_id) <= fits])
    console.print(Text(title, style="table.title"))
    console.print(Text(f"  {'case':<{id_width}}  score  verdict", style="table.header"), overflow="fold")
    for line in lines:
        label = verdict_label(line.status, line.verdict)
        cells = Text.assemble(f"{line.score:.3f}  ", (label, _VERDICT_STYLE[label]))
        if len(line.eval_id) > id_width:  # a long id gets a line of its own
            console.print(Text(f"  {line.eval_id}"), overflow="fold")
            console.print(Text(" " * (id_width + 4)) + cells)
        else:
            console.print(Text(f"  {line.eval_id:<{id_width}}  ") + cells)
        marker = "error:" if line.error else "-"
        for detail in _details(line, verbose):
            _print_hanging(console, f"    {marker} ", detail)


def _print_hanging(console: Console, prefix: str, text: str) -> None:
    """`prefix` then `text` wrapped at words to the console's width, continuation lines indented to
    line up with its start (a word longer than a line is folded, never cut off)."""
    from rich.text import Text

    width = max(console.width - len(prefix), 10)
    for i, part in enumerate(Text(text).wrap(console, width, overflow="fold")):
        part.rstrip()
        console.print(Text(prefix if i == 0 else " " * len(prefix)) + part, soft_wrap=True)


def _print_items(console: Console, label: Text, items: list[Text]) -> None:
    """`label item  item  item`, wrapped between items (never inside one) to the console's width;
    continuation lines start under the first item."""
    from rich.text import Text

    indent = label.cell_len if label.cell_len <= console.width // 3 else 2
    line = label.copy()
    empty = True
    for item in items:
        if not empty and line.cell_len + 2 + item.cell_len > console.width:
            console.print(line, soft_wrap=True)
            line, empty = Text(" " * indent), True
        if not empty:
            line.append("  ")
        line.append_text(item)
        empty = False
    console.print(line, soft_wrap=True)


def render_summary(console: Console, summary: RunSummary, *, verbose: bool = False) -> None:
    """The end-of-run summary. The same rows give the same text, whatever order cases finished in."""
    from rich.text import Text

    lines, hidden = summary.table_lines()
    if lines:
        title = "Cases" if not hidden else f"Cases that did not pass ({len(lines)} shown)"
        case_width = max(len("case"), *(len(line.eval_id) for line in lines))
        if console.width - _TABLE_FRAME - case_width >= MIN_MISSES_WIDTH:
            _render_table(console, title, lines, bool(summary.errored), verbose)
        else:
            _render_list(console, title, lines, verbose)
        if hidden:
            more = summary.problems_not_listed
            if more:
                console.print(
                    f"[dim]{hidden} cases not listed: {hidden - more} passing, {more} more that did not pass "
                    "(use --verbose to list every case, or see the JSONL)[/dim]"
                )
            else:
                console.print(f"[dim]{hidden} passing cases not listed (use --verbose to list every case)[/dim]")

    stats = summary.stats()
    total = summary.completed
    totals = [
        Text(f"{total} cases"),
        Text(f"{summary.passed} passed", "green"),
        Text(f"{summary.partial} partial", "yellow"),
        Text(f"{summary.failed} failed", "red"),
        Text(f"{summary.errored} errored", "magenta"),
    ]
    if summary.evaluator_errors:
        totals.append(Text(f"({summary.evaluator_errors} with evaluator errors)", "magenta"))
    _print_items(console, Text("Totals: ", "bold"), totals)
    if summary.interrupted:
        console.print(f"[bold red]Interrupted[/] after {total} of {summary.total_selected} cases.")
    if stats is not None:
        numbers = {"mean": stats.mean, "median": stats.median, "min": stats.min, "max": stats.max, "std": stats.std}
        _print_items(console, Text("Scores: "), [Text(f"{name} {value:.3f}") for name, value in numbers.items()])
        console.print("Histogram:")
        histogram = summary.histogram()
        biggest = max(count for _, _, count in histogram) or 1
        bar_width = max(10, min(BAR_WIDTH, console.width - 22))
        for low, high, count in histogram:
            bar = "█" * round(bar_width * count / biggest)
            closing = "]" if high >= 1.0 else ")"
            console.print(f"  [{low:.1f}, {high:.1f}{closing} {bar:<{bar_width}} {count}", highlight=False)
    means = summary.evaluator_means()
    if means:
        _print_items(console, Text("Evaluator means: "), [Text(f"{name} {mean:.3f}") for name, mean in means.items()])
    if summary.results_path:
        console.print(f"Results written to: {summary.results_path}", highlight=False, markup=False, soft_wrap=True)


__all__ = ["MISSES_SHOWN", "PlainProgress", "RichProgress", "render_summary"]
