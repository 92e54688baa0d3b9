"""`agentv compare BASE NEW`: score, verdict and field changes between two runs, with paired
statistics; exit 1 on a regression (a drop over --max-drop, or significant at --alpha)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentv_py.cli.base import EXIT_GATE_FAILED, EXIT_OK, CompareCommand, app, boundary


@app.command(cls=CompareCommand, short_help="Compare two results files: deltas, field changes, McNemar, bootstrap CI.")
@boundary
def compare(
    base: Path = typer.Argument(..., metavar="BASE", help="The earlier results file (JSONL).", show_default=False),
    new: Path = typer.Argument(..., metavar="NEW", help="The results file to judge against BASE.", show_default=False),
    output_format: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json or md."),
    max_drop: float | None = typer.Option(
        None,
        "--max-drop",
        metavar="X",
        help="Fail when the mean score, or any field's F1, drops by more than X (0-1).",
        show_default=False,
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", metavar="A", help="Fail when more cases went pass->fail than back with McNemar p < A."
    ),
    force: bool = typer.Option(False, "--force", help="Compare runs of different datasets (or disjoint case ids)."),
) -> int:
    """Per-case score deltas and verdict changes, per-field hit/miss changes and F1 deltas, an exact
    McNemar test on pass/fail and a paired bootstrap 95% CI on the mean score delta."""
    from agentv_py.errors import AgentvError
    from agentv_py.report.compare import CompareError, render_markdown, render_table
    from agentv_py.report.compare import compare as run_compare
    from agentv_py.report.render import stdout_console, visible

    if output_format not in ("table", "json", "md"):
        raise AgentvError(f"invalid --format {output_format!r}: choose table, json or md")
    if max_drop is not None and not 0 <= max_drop <= 1:
        raise AgentvError(f"invalid --max-drop {max_drop:g}: a score drop between 0 and 1")
    if not 0 < alpha < 1:
        raise AgentvError(f"invalid --alpha {alpha:g}: a significance level between 0 and 1 (exclusive)")
    try:
        result = run_compare(base, new, max_drop=max_drop, alpha=alpha, force=force)
    except CompareError as exc:
        raise AgentvError(exc.message, hint=exc.hint) from None  # exit 2
    with result:
        for message in result.forced:
            print(f"warning: {visible(message)} (--force)", file=sys.stderr)
        if output_format == "json":
            result.write_json(sys.stdout, max_drop, alpha)
        elif output_format == "md":
            sys.stdout.write(render_markdown(result, alpha) + "\n")
        else:
            render_table(stdout_console(), result, alpha)
        for reason in result.regressions:
            print(f"regression: {visible(reason)}", file=sys.stderr)
        return EXIT_GATE_FAILED if result.regressions else EXIT_OK
