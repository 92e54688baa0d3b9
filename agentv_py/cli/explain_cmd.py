"""`agentv explain RESULTS CASE [FIELD]`: everything behind one case's score, or one field's."""

from __future__ import annotations

from pathlib import Path

import typer

from agentv_py.cli.base import EXIT_OK, ExplainCommand, app, boundary


@app.command(cls=ExplainCommand, short_help="Explain one case's score, or one field's, from a results file.")
@boundary
def explain(
    results: Path = typer.Argument(
        ..., metavar="RESULTS", help="A JSONL results file written by `agentv eval`.", show_default=False
    ),
    case: str = typer.Argument(..., metavar="CASE", help="The case id.", show_default=False),
    field: str | None = typer.Argument(
        None, metavar="[FIELD]", help="A field_accuracy field path of that case.", show_default=False
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        "-d",
        metavar="DATASET",
        help="Dataset with the evaluator configs (option sources).  [default: the one RESULTS' manifest names]",
    ),
    full: bool = typer.Option(False, "--full", help="Show long values whole."),
    run: int | None = typer.Option(
        None,
        "--run",
        metavar="N",
        help="Of a repeated run (--repeat): explain the case's run N.  [default: its first run that did not pass]",
        show_default=False,
    ),
    every: bool = typer.Option(
        False,
        "--all",
        help="Line items: list each sub-field with no value on either side (by default folded into one line a pair).",
    ),
) -> int:
    """A case: each evaluator's score, weight and share of the case score, every field, what the
    judges were sent and replied. A field: raw and normalised expected and got, the matcher and
    each option with where it came from, and what the field cost the case; for line items, the
    similarity matrix and the assignment (sub-fields with no value on either side folded, --all
    lists them)."""
    from agentv_py.errors import AgentvError
    from agentv_py.explain import explain as run_explain
    from agentv_py.report.explain import ExplainError, render_case, render_field
    from agentv_py.report.render import stdout_console

    explained = run_explain(results, case, dataset, run)
    console = stdout_console()
    if field is None:
        render_case(console, explained, full)
        return EXIT_OK
    try:
        render_field(console, explained, field, full, every)
    except ExplainError as exc:
        raise AgentvError(exc.message, hint=exc.hint) from None
    return EXIT_OK
