"""`agentv validate PATH...`: run exactly the loading code and report every problem."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentv_py.cli.base import EXIT_CONFIG, EXIT_OK, ValidateCommand, app, boundary


@app.command(cls=ValidateCommand, short_help="Check datasets and targets files; report every problem.")
@boundary
def validate(
    paths: list[Path] = typer.Argument(
        ...,
        metavar="PATH",
        help="Dataset YAML files (a file named targets.yaml is checked as targets).",
        show_default=False,
    ),
) -> int:
    """Check datasets and targets files; report every problem in every file (exit 2 if any)."""
    # Every line is shown through `visible`: file names, field paths, keys and values quoted in
    # a problem are data, and their control characters are written as escapes, never obeyed.
    from agentv_py.report.render import visible
    from agentv_py.session import check_file

    problems = 0
    for path in paths:
        check = check_file(path)
        for warning in check.warnings:
            print(visible(f"warning: {warning}"), file=sys.stderr)
        if check.note:
            print(visible(f"note: {path}: {check.note}"), file=sys.stderr)
        for problem in check.problems:
            print(visible(str(problem)), file=sys.stderr)
        problems += len(check.problems)
        if not check.problems:
            print(visible(f"ok: {path} ({check.count} {check.noun})"))
    if problems:
        print(f"{problems} problem{'s' if problems != 1 else ''} found", file=sys.stderr)
        return EXIT_CONFIG
    return EXIT_OK
