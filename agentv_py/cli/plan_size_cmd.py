"""`agentv plan-size RESULTS --detect DROP`: how many documents a comparison needs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentv_py.cli.base import EXIT_GATE_FAILED, EXIT_OK, PlanSizeCommand, app, boundary

if TYPE_CHECKING:
    from agentv_py.scoring.sample_size import Plan


@app.command("plan-size", cls=PlanSizeCommand, short_help="How many documents a comparison needs to detect a drop.")
@boundary
def plan_size(
    results: Path = typer.Argument(
        ..., metavar="RESULTS", help="A JSONL results file of `agentv eval`.", show_default=False
    ),
    detect: float = typer.Option(
        ..., "--detect", metavar="DROP", help="The drop to detect, in score or F1 points (0-1), e.g. 0.02."
    ),
    against: Path | None = typer.Option(
        None,
        "--against",
        metavar="OTHER",
        help="A second run of the same documents: the paired differences are measured, not assumed.",
    ),
    power: float = typer.Option(0.8, "--power", metavar="P", help="The chance of detecting the drop when it is real."),
    alpha: float = typer.Option(0.05, "--alpha", metavar="A", help="The two-sided significance level of the test."),
    fields: list[str] = typer.Option(
        [], "--field", metavar="NAME", help="Plan for this field's F1 only (repeatable) [default: every field]."
    ),
    output_format: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table or json."),
) -> int:
    """From a run's per-document spread, the documents a paired comparison of two runs needs to
    detect a drop of DROP in the mean score and in each field's F1 (a two-sided test at --alpha,
    with --power), the smallest drop the run's own documents can detect, and whether they are
    enough. docs/statistics.md has the method. For example:

    \\b
      agentv plan-size run.jsonl --detect 0.02
      agentv plan-size main.jsonl --against rerun.jsonl --detect 0.05 --field invoice_number
    """
    from agentv_py.errors import AgentvError
    from agentv_py.report.jsonl import not_results
    from agentv_py.report.plan_size import PlanError, make_plans

    if output_format not in ("table", "json"):
        raise AgentvError(f"invalid --format {output_format!r}: choose table or json")
    if not 0 < detect < 1:
        raise AgentvError(
            f"--detect {detect:g} is not between 0 and 1", hint="a drop in score or F1, e.g. --detect 0.02"
        )
    for name, value in (("--power", power), ("--alpha", alpha)):
        if not 0 < value < 1:
            raise AgentvError(f"{name} {value:g} is not between 0 and 1")
    for role, path in (("RESULTS", results), ("OTHER", against)):
        if path is not None and (why := not_results(path)) is not None:
            raise AgentvError(
                f"{role} results file {why}: {path}", hint="pass a JSONL file `agentv eval` wrote (--out)"
            )
    try:
        plans = make_plans(results, detect, against=against, alpha=alpha, power=power, fields=fields)
    except PlanError as exc:
        raise AgentvError(str(exc)) from None
    if output_format == "json":
        document = {
            "results": str(results),
            "against": str(against) if against is not None else None,
            "drop": detect,
            "alpha": alpha,
            "power": power,
            "plans": [p.to_json() for p in plans],
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        _table(plans, detect, alpha, power)
    return EXIT_OK if all(p.enough for p in plans) else EXIT_GATE_FAILED


def _table(plans: list[Plan], detect: float, alpha: float, power: float) -> None:
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table
    from agentv_py.report.plan_size import PAIRED
    from agentv_py.report.render import stdout_console
    from agentv_py.report.text import visible
    from agentv_py.scoring.sample_size import FLOORED

    console = stdout_console()
    columns = [Column("metric"), *(Column(n, justify="right") for n in ("documents", "sd", "needed", "detects"))]
    columns.append(Column("enough"))
    rows: list[list[Text | str]] = [
        [
            Text(visible(p.metric) + (" *" if FLOORED in p.measured else "")),
            str(p.documents),
            f"{p.sd:.3f}",
            str(p.needed),
            f"{p.detectable:.3f}",
            "yes" if p.enough else "no",
        ]
        for p in plans
    ]
    title = f"Documents to detect a drop of {detect:g} (two-sided alpha {alpha:g}, power {power:g})"
    print_table(console, title, columns, rows)
    paired = plans[0].measured.startswith(PAIRED)
    how = "measured on the paired runs" if paired else "from one run, the runs taken as independent"
    console.print(
        f"sd: one document's spread of the difference, {how} (* less than a drop of {detect:g} itself brings: "
        "taken at that); detects: the smallest drop the run's documents detect; docs/statistics.md",
        highlight=False,
        markup=False,
    )
