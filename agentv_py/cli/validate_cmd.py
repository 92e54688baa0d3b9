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
    from agentv_py.errors import ConfigError
    from agentv_py.loading import load_dataset, load_targets
    from agentv_py.session import judge_check

    problems = 0
    for path in paths:
        loader = load_targets if path.name == "targets.yaml" else load_dataset
        try:
            loaded = loader(path)
        except ConfigError as exc:
            problems += len(exc.problems)
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            continue
        for warning in getattr(loaded, "warnings", []):
            print(f"warning: {warning}", file=sys.stderr)
        if hasattr(loaded, "cases"):
            judge_problems, note = judge_check(loaded)
            if note:
                print(f"note: {path}: {note}", file=sys.stderr)
            if judge_problems:
                problems += len(judge_problems)
                for problem in judge_problems:
                    print(problem, file=sys.stderr)
                continue
        count = len(loaded.cases) if hasattr(loaded, "cases") else len(loaded.model.targets)
        noun = "cases" if hasattr(loaded, "cases") else "targets"
        print(f"ok: {path} ({count} {noun})")
    if problems:
        print(f"{problems} problem{'s' if problems != 1 else ''} found", file=sys.stderr)
        return EXIT_CONFIG
    return EXIT_OK
