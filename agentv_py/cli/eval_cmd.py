"""`agentv eval DATASET`: run the target per case, score, stream JSONL, summarise, gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentv_py.cli.base import (
    EXIT_CASE_ERRORS,
    EXIT_GATE_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EvalCommand,
    app,
    boundary,
)

if TYPE_CHECKING:
    from agentv_py.report.jsonl import JsonlWriter
    from agentv_py.session import EvalPlan

# Help text is API. Metavars name what each value is. A default that is a rule rather than a value
# is written into the help as "[default: ...]", like the ones Typer prints, and worded so that no
# word is too long for the help column of a 60-column terminal.


@app.command(name="eval", cls=EvalCommand, short_help="Run a dataset against a target and score every case.")
@boundary
def eval_command(
    dataset: Path = typer.Argument(
        ..., metavar="DATASET", help="Dataset file: YAML, or JSONL (one case per line).", show_default=False
    ),
    target: str | None = typer.Option(
        None,
        "--target",
        metavar="NAME",
        help="Target to run.  [default: the dataset's execution.target, else 'default']",
    ),
    targets: Path | None = typer.Option(
        None,
        "--targets",
        metavar="PATH",
        help="targets.yaml to use.  [default: found by walking up from the dataset]",
    ),
    out: str | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="PATH",
        help="JSONL results file; '-' writes the JSONL to stdout (and the summary to stderr).  "
        "[default: <dataset>_<UTC>.jsonl in .agentv/results/]",
    ),
    workers: int = typer.Option(
        4, "--workers", "-w", min=1, max=64, metavar="N", help="Cases run concurrently (1-64)."
    ),
    max_retries: int = typer.Option(
        1, "--max-retries", min=0, max=10, metavar="N", help="Retries per failed target call."
    ),
    eval_id: list[str] = typer.Option(
        [], "--eval-id", "-e", metavar="GLOB", help="Only cases whose id matches this glob (repeatable)."
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        min=0.0,
        max=1.0,
        metavar="X",
        help="Gate on mean score >= X instead of 'every case passed'.",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every case and every miss in the summary."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Do not run the target: a mock echoes each case's expected answer."
    ),
    judge_target: str | None = typer.Option(
        None,
        "--judge-target",
        metavar="NAME",
        help="Judge target for llm_judge and rubric evaluators without their own 'target:'.  "
        "[default: execution.judge_target, else the target's judge_target]",
    ),
) -> int:
    """Run an eval dataset against a target and score every case."""
    from agentv_py.runner.run import sigterm_interrupts
    from agentv_py.session import EvalRequest, open_results, plan_eval

    request = EvalRequest(
        dataset=dataset,
        target=target,
        targets=targets,
        out=out,
        workers=workers,
        max_retries=max_retries,
        eval_ids=list(eval_id),
        verbose=verbose,
        dry_run=dry_run,
        judge_target=judge_target,
    )
    # --out is opened and locked first: a file that cannot be written (or that another run is
    # writing) is exit 2 before anything runs, the healthcheck included.
    writer = open_results(out)
    try:
        with sigterm_interrupts():  # SIGTERM during the healthcheck: exit 130, its processes killed
            plan = plan_eval(request)
        return _run(plan, writer, verbose, threshold, workers)
    finally:
        if writer is not None:
            writer.close()


def _run(plan: EvalPlan, writer: JsonlWriter | None, verbose: bool, threshold: float | None, workers: int) -> int:
    """Execute a planned eval, print the summary, and gate."""
    from rich.console import Console

    from agentv_py.report.render import PlainProgress, RichProgress, plural, render_summary, stdout_console, visible
    from agentv_py.session import execute

    err = Console(stderr=True, highlight=False)
    for warning in plan.warnings:
        err.print(f"warning: {visible(str(warning))}", markup=False, soft_wrap=True)
    err.print(
        visible(
            f"agentv: {plural(len(plan.cases), 'case')} of '{plan.dataset.name}' against target "
            f"'{plan.target.name}' {plan.target_origin} ({plural(workers, 'worker')})"
        ),
        markup=False,
        soft_wrap=True,
    )
    progress = RichProgress(len(plan.cases), err) if err.is_terminal else PlainProgress(len(plan.cases))
    with progress:
        summary = execute(
            plan,
            progress.advance,
            writer,
            on_notice=lambda message: err.print(f"warning: {visible(message)}", markup=False, soft_wrap=True),
        )
    # Human output goes to stdout, unless stdout carries the JSONL.
    human = err if plan.out == "-" else stdout_console()
    render_summary(human, summary, verbose=verbose)
    if plan.warnings:  # repeated: the start of a long run's output has scrolled away
        human.print(f"{plural(len(plan.warnings), 'warning')} about the dataset:", markup=False)
        for warning in plan.warnings:
            human.print(f"  warning: {visible(str(warning))}", markup=False, soft_wrap=True)
    if summary.interrupted:
        return EXIT_INTERRUPTED
    if summary.any_errors:
        said = []
        if summary.errored:
            said.append(f"{plural(summary.errored, 'case')} had a target error (the target call failed)")
        if summary.evaluator_errors:
            said.append(
                f"{plural(summary.evaluator_errors, 'case')} had an evaluator error (an evaluator could not run)"
            )
        print("; ".join(said), file=sys.stderr)
        return EXIT_CASE_ERRORS
    if threshold is not None:
        stats = summary.stats()
        mean = stats.mean if stats else 0.0
        if mean < threshold:
            print(f"gate failed: mean score {mean:.3f} < threshold {threshold:g}", file=sys.stderr)
            return EXIT_GATE_FAILED
        return EXIT_OK
    if not summary.all_passed:
        not_passed = summary.completed - summary.passed
        print(f"gate failed: {not_passed} of {summary.completed} cases did not pass", file=sys.stderr)
        return EXIT_GATE_FAILED
    return EXIT_OK
