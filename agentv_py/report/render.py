"""Terminal output (SPEC §4.2): progress while running, then the summary. Never used for JSONL."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from agentv_py.models.results import ResultRow
from agentv_py.report.summary import MISSES_SHOWN, RunSummary

if TYPE_CHECKING:
    from rich.console import Console

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
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

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


def render_summary(console: Console, summary: RunSummary, *, verbose: bool = False) -> None:
    from rich.table import Table
    from rich.text import Text

    lines, hidden = summary.table_lines()
    if lines:
        title = "Cases" if not hidden else f"Cases that did not pass ({len(lines)} shown)"
        table = Table(title=title, title_justify="left", expand=False)
        table.add_column("case", overflow="fold")
        table.add_column("score", justify="right")
        table.add_column("verdict")
        table.add_column("misses" if not summary.errored else "misses / error", overflow="fold")
        for line in lines:
            label = verdict_label(line.status, line.verdict)
            if line.error:
                detail = line.error if verbose else _shorten(line.error, 160)
            else:
                shown = line.misses if verbose else [_shorten(m, 80) for m in line.misses]
                detail = "; ".join(shown)
                if line.miss_count > len(line.misses):
                    detail += f"; … {line.miss_count - len(line.misses)} more (--verbose, or see the JSONL)"
            table.add_row(line.eval_id, f"{line.score:.3f}", Text(label, style=_VERDICT_STYLE[label]), detail)
        console.print(table)
        if hidden:
            console.print(f"[dim]{hidden} passing cases not listed (use --verbose to list every case)[/dim]")

    stats = summary.stats()
    total = summary.completed
    totals = Text.assemble(
        ("Totals: ", "bold"),
        f"{total} cases  ",
        (f"{summary.passed} passed", "green"),
        "  ",
        (f"{summary.partial} partial", "yellow"),
        "  ",
        (f"{summary.failed} failed", "red"),
        "  ",
        (f"{summary.errored} errored", "magenta"),
    )
    if summary.evaluator_errors:
        totals.append(f"  ({summary.evaluator_errors} with evaluator errors)", style="magenta")
    console.print(totals)
    if summary.interrupted:
        console.print(f"[bold red]Interrupted[/] after {total} of {summary.total_selected} cases.")
    if stats is not None:
        console.print(
            f"Scores: mean {stats.mean:.3f}  median {stats.median:.3f}  min {stats.min:.3f}  "
            f"max {stats.max:.3f}  std {stats.std:.3f}"
        )
        console.print("Histogram:")
        biggest = max(count for _, _, count in summary.histogram()) or 1
        for low, high, count in summary.histogram():
            bar = "█" * round(BAR_WIDTH * count / biggest)
            closing = "]" if high >= 1.0 else ")"
            console.print(f"  [{low:.1f}, {high:.1f}{closing} {bar:<{BAR_WIDTH}} {count}", highlight=False)
    means = summary.evaluator_means()
    if means:
        console.print(
            "Evaluator means: " + "  ".join(f"{name} {mean:.3f}" for name, mean in means.items()), soft_wrap=True
        )
    if summary.results_path:
        console.print(f"Results written to: {summary.results_path}", highlight=False, soft_wrap=True)


__all__ = ["MISSES_SHOWN", "PlainProgress", "RichProgress", "render_summary"]
