"""Terminal output (SPEC §4.2): progress while running, then the summary. Never used for JSONL."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from typing import TYPE_CHECKING, TextIO

from agentv_py.models.results import ResultRow
from agentv_py.report.layout import Column, print_boxed, print_items, print_wrapped, table_widths
from agentv_py.report.summary import MISSES_SHOWN, CaseLine, RunSummary
from agentv_py.report.text import plural, visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

_VERDICT_STYLE = {
    "pass": "green",
    "partial": "yellow",
    "fail": "red",
    "error": "magenta",
    "xfail": "cyan",
    "xpass": "cyan",
}
BAR_WIDTH = 30
MIN_REASON_WIDTH = 30  # a progress line's error reason is shortened to its room, but never below this


def stdout_console() -> Console:
    """A Rich console on stdout whose closed pipe (`agentv ... | head -1`) raises BrokenPipeError
    for the CLI's error boundary (exit 5, one message), where Rich itself would exit 1 (which
    reads as "gate failed")."""
    from rich.console import Console

    class _StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _StdoutConsole(highlight=False)


def verdict_label(row_status: str, verdict: str) -> str:
    return "error" if row_status == "error" else verdict


def error_reason(row: ResultRow) -> str | None:
    """Why a case has an error, in the run's words: its target error (the target call failed), or
    its first evaluator error (the target answered but an evaluator could not run)."""
    if row.status == "error":
        return f"target error: {row.error}" if row.error else "target error"
    for result in row.evaluator_results:
        if result.status == "error":
            reason = result.reasoning or (result.misses[0] if result.misses else "could not run")
            return f"evaluator error: {result.name}: {reason}"
    return None


def error_counts(target_errors: int, evaluator_errors: int) -> str:
    """`1 target error, 2 evaluator errors`: the counts that are not zero (the words of the totals
    line, the exit-code table and the exit-4 message)."""
    parts = [(target_errors, "target error"), (evaluator_errors, "evaluator error")]
    return ", ".join(plural(count, noun) for count, noun in parts if count)


class PlainProgress:
    """One line per finished case; for logs and CI (stderr is not a TTY)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.done = 0
        self.width = len(str(total))
        # A line never wraps: the error reason is shortened to the terminal's width (COLUMNS), or 120.
        self.line_width = width or shutil.get_terminal_size((120, 24)).columns

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.flush()

    def advance(self, row: ResultRow) -> None:
        self.done += 1
        label = verdict_label(row.status, row.verdict)
        line = f"[{self.done:>{self.width}}/{self.total}] {label:<7} {row.score:.3f}  {visible(row.run_label)}"
        reason = error_reason(row)
        if reason is not None:
            line += "  " + _shorten(visible(reason), max(self.line_width - len(line) - 2, MIN_REASON_WIDTH))
        self.stream.write(line + "\n")


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

        self._console = console
        self._progress = Progress(
            TextColumn("[bold]eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),  # counts only: numbers in fixed markup
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task = self._progress.add_task("eval", total=total, status="")
        self._counts = {"pass": 0, "partial": 0, "fail": 0, "error": 0}
        self.total = total
        self.done = 0
        self.width = len(str(total))

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, row: ResultRow) -> None:
        from rich.text import Text

        self.done += 1
        label = verdict_label(row.status, row.verdict)
        self._counts[label] += 1
        reason = error_reason(row)
        if reason is not None:  # a case with an error gets a line of its own above the bar, kept
            head = f"[{self.done:>{self.width}}/{self.total}] {label:<7} {row.score:.3f}  {visible(row.run_label)}  "
            room = max(self._console.width - len(head), MIN_REASON_WIDTH)
            line = Text(head + _shorten(visible(reason), room), style=_VERDICT_STYLE[label], no_wrap=True)
            self._progress.console.print(line, overflow="ellipsis", crop=True)
        c = self._counts
        status = f"[green]{c['pass']}✓[/] [yellow]{c['partial']}~[/] [red]{c['fail']}✗[/] [magenta]{c['error']}![/]"
        self._progress.update(self._task, advance=1, status=status)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The boxed table needs this much room for its misses column; on a narrower console (or with long
# case ids) the cases are listed instead, each case's misses on their own lines beneath it.
MIN_MISSES_WIDTH = 40
FLAKY_LISTED = 10  # flaky cases and fields the summary lists without --verbose
MISS_CHARS = 80  # of a miss's own text without --verbose (its field path and values are kept whole)


def _details(line: CaseLine, verbose: bool) -> list[str]:
    """What the table says about a case: its error, or its misses (and how many more there are)."""
    if line.error:
        error = visible(line.error)
        return [error if verbose else _shorten(error, 160)]
    shown = [visible(str(miss) if verbose else miss.short(MISS_CHARS)) for miss in line.misses]
    if line.miss_count > len(line.misses):
        shown.append(f"… {line.miss_count - len(line.misses)} more (--verbose, or see the JSONL)")
    return shown


def _summary_table(
    lines: list[CaseLine], errored: bool, verbose: bool
) -> tuple[list[Column], list[tuple[Text, Text, Text, Text]]]:
    from rich.text import Text

    columns = [
        Column("case"),
        Column("score", justify="right"),
        Column("verdict"),
        Column("misses / error" if errored else "misses", wrap=True, min_width=MIN_MISSES_WIDTH),
    ]
    rows = []
    for line in lines:
        label = verdict_label(line.status, line.verdict)
        detail = "; ".join(_details(line, verbose))  # ids and misses are data, never Rich markup
        cells = (Text(visible(line.eval_id)), Text(f"{line.score:.3f}"), Text(label, style=_VERDICT_STYLE[label]))
        rows.append((*cells, Text(detail)))
    return columns, rows


def _render_list(console: Console, title: str, lines: list[CaseLine], verbose: bool) -> None:
    """The narrow layout: no box; one line per case, then its misses (or error) with a hanging indent."""
    from rich.text import Text

    fits = console.width - len("  ") - len("  0.000  partial")  # longer ids get a line of their own
    ids = [visible(line.eval_id) for line in lines]
    id_width = max([len("case")] + [len(ident) for ident in ids if len(ident) <= fits])
    console.print(Text(title, style="table.title"), soft_wrap=True)
    console.print(Text(f"  {'case':<{id_width}}  score  verdict", style="table.header"), soft_wrap=True)
    for line, ident in zip(lines, ids, strict=True):
        label = verdict_label(line.status, line.verdict)
        cells = Text.assemble(f"{line.score:.3f}  ", (label, _VERDICT_STYLE[label]))
        if len(ident) > id_width:  # a long id gets a line of its own, whole
            console.print(Text(f"  {ident}"), soft_wrap=True)
            console.print(Text(" " * (id_width + 4)) + cells)
        else:
            console.print(Text(f"  {ident:<{id_width}}  ") + cells)
        marker = "error:" if line.error else "-"
        for detail in _details(line, verbose):
            print_wrapped(console, Text(detail), f"    {marker} ")


MARKED_SHOWN = 10  # cases listed per mark (skipped, xfailed, xpassed) without --verbose


def _render_marked(console: Console, summary: RunSummary, verbose: bool) -> None:
    """The cases the dataset marks, each with its reason: XPASS first (a mark that may be stale),
    then XFAIL, then SKIPPED; `excluded` counted. Reasons are data: shown as text, made visible."""
    from rich.text import Text

    for label, cases in (("XPASS", summary.xpassed), ("XFAIL", summary.xfailed), ("SKIPPED", summary.skipped)):
        shown = cases if verbose else cases[:MARKED_SHOWN]
        for case_id, reason in shown:
            console.print(Text(f"  {label} {visible(case_id)}: {visible(reason)}"), soft_wrap=True)
        if len(cases) > len(shown):
            console.print(f"[dim]  ... and {len(cases) - len(shown)} more {label} (--verbose lists them)[/dim]")
    if summary.excluded:
        console.print(f"[dim]{plural(summary.excluded, 'case')} left out by --exclude[/dim]")


def render_summary(console: Console, summary: RunSummary, *, verbose: bool = False) -> None:
    """The end-of-run summary. The same rows give the same text, whatever order cases finished in."""
    from rich.text import Text

    lines, hidden = summary.table_lines()
    if lines:
        title = "Cases" if not hidden else f"Cases that did not pass ({len(lines)} shown)"
        columns, rows = _summary_table(lines, bool(summary.errored), verbose)
        widths = table_widths(console.width, columns, rows)
        if widths is not None:
            print_boxed(console, title, columns, rows, widths)
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
    # passed + partial + failed + target errors = cases. Evaluator errors (cases whose target
    # answered but an evaluator could not run) also have a verdict: listed when there are any.
    repeats = summary.repeat_report()
    runs = f"{plural(total, 'row')} of {plural(repeats.cases, 'case')}" if repeats is not None else None
    totals = [
        Text(runs or plural(total, "case")),
        Text(f"{summary.passed} passed", "green"),
        Text(f"{summary.partial} partial", "yellow"),
        Text(f"{summary.failed} failed", "red"),
        Text(plural(summary.errored, "target error"), "magenta"),
    ]
    if summary.evaluator_errors:
        totals.append(Text(plural(summary.evaluator_errors, "evaluator error"), "magenta"))
    marks = ((summary.xfailed, "xfailed"), (summary.xpassed, "xpassed"), (summary.skipped, "skipped"))
    totals += [Text(f"{len(cases)} {what}", "cyan") for cases, what in marks if cases]
    print_items(console, Text("Totals: ", "bold"), totals)
    _render_marked(console, summary, verbose)
    if summary.interrupted:
        console.print(f"[bold red]Interrupted[/] after {total} of {summary.total_selected} cases.")
    if summary.stop_early is not None and summary.stop_early.stopped:
        console.print(
            Text(summary.stop_early.said()[0].upper() + summary.stop_early.said()[1:] + "; --resume runs the rest")
        )
    if stats is not None:
        numbers = {"mean": stats.mean, "median": stats.median, "min": stats.min, "max": stats.max, "std": stats.std}
        print_items(console, Text("Scores: "), [Text(f"{name} {value:.3f}") for name, value in numbers.items()])
        found = summary.headline()
        if found is not None:
            print_items(console, Text("Intervals: "), [Text(part) for part in found.parts()])
        if repeats is not None:
            from agentv_py.report.repeats import summary_lines

            for line in summary_lines(repeats, None if verbose else FLAKY_LISTED):
                console.print(Text(line), soft_wrap=False)
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
        items = [Text(f"{visible(name)} {mean:.3f}") for name, mean in means.items()]
        print_items(console, Text("Evaluator means: "), items)
    looked_up = summary.cache_hits + summary.cache_misses
    if looked_up:
        asked = f"; {plural(summary.cache_misses, 'target call')}" if summary.cache_misses else ""
        console.print(f"Cache: {summary.cache_hits} of {plural(looked_up, 'answer')} from the cache{asked}")
    if summary.results_path:
        console.print(Text(f"Results written to: {visible(summary.results_path)}"), soft_wrap=True)


__all__ = [
    "MISSES_SHOWN",
    "PlainProgress",
    "RichProgress",
    "error_counts",
    "error_reason",
    "plural",
    "render_summary",
    "stdout_console",
    "visible",
]
