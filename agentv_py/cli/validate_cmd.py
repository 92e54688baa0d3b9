"""`agentv validate PATH...`: run exactly the loading code on each file (a directory: every dataset
below it, `loading.discover`) and report every problem."""

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
        help="Dataset files (YAML, or JSONL with its .yaml sidecar; a file named targets.yaml is checked as "
        "targets), directories (every dataset below them) or quoted globs.",
        show_default=False,
    ),
    target: str | None = typer.Option(
        None,
        "--target",
        metavar="NAME",
        help="Target to check, as eval would run it.  [default: the dataset's execution.target, else 'default']",
    ),
    targets: Path | None = typer.Option(
        None,
        "--targets",
        metavar="PATH",
        help="targets.yaml to check datasets with.  [default: found by walking up from the dataset]",
    ),
) -> int:
    """Check datasets and targets files; report every problem in every file (exit 2 if any).

    A dataset gets every check agentv eval makes before it runs: its targets file, the selected
    target, judge targets, API keys, and that each program can start. An unset ${{ VAR }} is a
    warning (CI often validates without secrets). The healthcheck is not run: it is an action,
    not a check."""
    # Every line is shown through `visible`: file names, field paths, keys and values quoted in
    # a problem are data, and their control characters are written as escapes, never obeyed.
    from agentv_py.eval_plan import EvalRequest
    from agentv_py.loading.discover import expand_paths
    from agentv_py.preflight import check_file
    from agentv_py.report.text import plural, visible

    expanded = expand_paths(paths)
    problems = len(expanded.empty)
    for argument, why in expanded.empty:
        print(visible(f"{argument or repr(argument)}: {why}"), file=sys.stderr)
    for path in expanded.files:
        check = check_file(path, EvalRequest(path, target=target, targets=targets))
        for warning in check.warnings:
            print(visible(f"warning: {warning}"), file=sys.stderr)
        if check.note:
            print(visible(f"note: {path}: {check.note}"), file=sys.stderr)
        for index, problem in enumerate(check.problems):
            print(visible(str(problem)), file=sys.stderr)
            if index in check.hints:  # eval's hint for an error it prints without a file:line
                for line in check.hints[index].split("\n"):
                    print(visible(f"  hint: {line}"), file=sys.stderr)
        problems += len(check.problems)
        if not check.problems:
            print(visible(f"ok: {path} ({plural(check.count, check.noun.removesuffix('s'))})"))
    if problems:
        print(f"{problems} problem{'s' if problems != 1 else ''} found", file=sys.stderr)
        return EXIT_CONFIG
    return EXIT_OK
