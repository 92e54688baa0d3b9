"""`agentv eval DATASET`: run the target per case, score, stream JSONL, summarise, gate."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentv_py.cli.base import (
    ALLOW_FLIPS_OPTION,
    BASELINE_OPTION,
    HTML_OPTION,
    JUNIT_OPTION,
    JUNIT_PER_FIELD_OPTION,
    MAX_DROP_OPTION,
    SUMMARY_MD_OPTION,
    THRESHOLD_OPTION,
    EvalCommand,
    app,
    boundary,
    gate_exit,
)
from agentv_py.cli.eval_parts import dataset_files, refuse_one_file_options, reuse_option, run_each, run_header

if TYPE_CHECKING:
    from agentv_py.eval_plan import EvalPlan, EvalRequest
    from agentv_py.report.jsonl import JsonlWriter
    from agentv_py.run_reports import Reports

# Help text is API. Metavars name what each value is. A default that is a rule rather than a value
# is written into the help as "[default: ...]", like the ones Typer prints, and worded so that no
# word is too long for the help column of a 60-column terminal.


@app.command(name="eval", cls=EvalCommand, short_help="Run a dataset against a target and score every case.")
@boundary
def eval_command(
    datasets: list[Path] = typer.Argument(
        ...,
        metavar="DATASET",
        help="Dataset files (YAML, or JSONL: one case per line), directories (every dataset below them) or "
        "quoted globs; several run one after the other, each with its own summary.",
        show_default=False,
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
    exclude: list[str] = typer.Option(
        [],
        "--exclude",
        metavar="GLOB",
        help="Leave out the cases whose id matches this glob (repeatable); a glob that matches no case is an error.",
    ),
    strict_xfail: bool = typer.Option(
        False,
        "--strict-xfail",
        help="An xfail case that passes (XPASS) fails the gate.  [default: reported, the gate holds]",
    ),
    stop_early: bool = typer.Option(
        False,
        "--stop-early",
        help="Run the cases in a random (seeded) order and stop taking new ones once the gate's outcome is "
        "settled: the mean score of all cases above or below --threshold at --confidence (an anytime-valid "
        "confidence sequence), else the first case that does not pass; --resume runs the rest.",
    ),
    repeat: int | None = typer.Option(
        None,
        "--repeat",
        metavar="K",
        help="Run each case K times (1-100) to measure the target's noise: rows say which run (`repeat`); "
        "the summary, metrics, compare and report show pass^K, pass@K and flaky cases and fields. With the "
        "cache on, each run has its own entry.  [default: once; --resume: as the run was started]",
        show_default=False,
    ),
    rejudge: int | None = typer.Option(
        None,
        "--rejudge",
        metavar="J",
        help="Score each answer J times (1-100), asking the judges afresh each time (rows: `rejudge`), to "
        "tell the judge's noise from the target's.",
        show_default=False,
    ),
    confidence: float = typer.Option(
        0.95,
        "--confidence",
        metavar="LEVEL",
        help="Level of the summary's intervals on the pass rate and mean score (also in --junit and --summary-md).",
    ),
    shard: str | None = typer.Option(
        None,
        "--shard",
        metavar="K/N",
        help="Only the cases of shard K of N (from 1), split by a hash of the case id: the same split on "
        "every machine; merge the shards' results with agentv merge.",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        metavar="NAME",
        help="local: cases run on threads here; ray: in Ray tasks, a few cases each (pip install 'agentv-py[ray]').",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        help="With --executor ray: the cluster to use.  [default: $RAY_ADDRESS, else a local Ray instance]",
    ),
    threshold: float | None = THRESHOLD_OPTION,
    baseline: Path | None = BASELINE_OPTION,
    max_drop: float | None = MAX_DROP_OPTION,
    allow_flips: int | None = ALLOW_FLIPS_OPTION,
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
    cache: bool | None = typer.Option(
        None,
        "--cache/--no-cache",
        help="Reuse stored target answers and judge replies whose inputs are unchanged, or never "
        "(whatever the files say).  [default: the dataset's execution.cache or a target's cache]",
        show_default=False,
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        metavar="DIR",
        help="Cache directory.  [default: .agentv/cache at the root of the dataset's repository, "
        "else beside the dataset]",
    ),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        metavar="RESULTS",
        help="Continue the interrupted run that wrote RESULTS: run only the selected cases without a row "
        "there and append their rows to it (not with --out).",
    ),
    rerun_failed: Path | None = typer.Option(
        None,
        "--rerun-failed",
        metavar="RESULTS",
        help="Run again only the cases whose row in RESULTS did not pass (errors included); the new "
        "results file (--out) holds them and RESULTS's other rows, RESULTS is left as it is.",
    ),
    retry_errors: Path | None = typer.Option(
        None,
        "--retry-errors",
        metavar="RESULTS",
        help="Like --rerun-failed, for the cases whose row is a target or evaluator error.",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="With --resume, --rerun-failed or --retry-errors: reuse the rows although the dataset, "
        "evaluators, judge files or judge targets changed since, or the run manifest is missing "
        "(a changed target needs --allow-target-change).",
    ),
    allow_target_change: bool = typer.Option(
        False,
        "--allow-target-change",
        help="With --resume, --rerun-failed or --retry-errors: reuse the rows although the target "
        "changed since they were made (its command, settings, script files or environment "
        "variables: the parts the answer cache keys); without it such a file is refused (exit 2) "
        "with what changed.",
    ),
    junit: Path | None = JUNIT_OPTION,
    junit_per_field: bool = JUNIT_PER_FIELD_OPTION,
    summary_md: Path | None = SUMMARY_MD_OPTION,
    html: Path | None = HTML_OPTION,
    agentv_run: Path | None = typer.Option(
        None,
        "--agentv-run",
        metavar="DIR",
        help="Also write the results as an AgentV v4.42 run folder (index.jsonl, benchmark.json, "
        "grading.json per case) for AgentV's own compare and results; DIR is new, empty, or such a folder.",
    ),
) -> int:
    """Run eval datasets against a target and score every case."""
    from agentv_py.errors import AgentvError
    from agentv_py.eval_plan import EvalRequest
    from agentv_py.repeat_plan import check_count
    from agentv_py.run_reports import baseline_options, report_options
    from agentv_py.runner.engine import parse_shard

    files = dataset_files(datasets)
    if len(files) > 1:
        flags = {"--out": out, "--resume": resume, "--rerun-failed": rerun_failed, "--retry-errors": retry_errors}
        flags |= {"--junit": junit, "--summary-md": summary_md, "--html": html, "--baseline": baseline}
        flags |= {"--agentv-run": agentv_run}
        refuse_one_file_options(len(files), flags)
    reuse, reuse_mode = reuse_option(resume, rerun_failed, retry_errors, out, force, allow_target_change)
    reports = report_options(junit, junit_per_field, summary_md, out, html, agentv_run)
    shard_spec = parse_shard(shard) if shard is not None else None
    if executor not in ("local", "ray"):
        raise AgentvError(f"invalid --executor {executor!r}: choose local or ray", hint="see agentv eval --help")
    if ray_address is not None and executor != "ray":
        raise AgentvError("--ray-address goes with --executor ray", hint="see agentv eval --help")
    baseline_options(baseline, max_drop, allow_flips)
    if not 0 < confidence < 1:
        raise AgentvError(f"--confidence {confidence:g} is not between 0 and 1", hint="e.g. --confidence 0.9")
    check_count("--repeat", repeat)
    check_count("--rejudge", rejudge)
    request = EvalRequest(
        dataset=files[0],
        target=target,
        targets=targets,
        out=out,
        workers=workers,
        max_retries=max_retries,
        eval_ids=list(eval_id),
        exclude=list(exclude),
        strict_xfail=strict_xfail,
        confidence=confidence,
        stop_early=stop_early,
        repeats=repeat,
        rejudges=rejudge,
        verbose=verbose,
        dry_run=dry_run,
        judge_target=judge_target,
        threshold=threshold,
        baseline=baseline,
        max_drop=max_drop,
        allow_flips=allow_flips or 0,
        cache=cache,
        cache_dir=cache_dir,
        reuse=reuse,
        reuse_mode=reuse_mode,
        force=force,
        allow_target_change=allow_target_change,
        shard=shard_spec,
        executor="ray" if executor == "ray" else "local",
        ray_address=ray_address,
    )
    if len(files) == 1:
        return _eval_one(request, reports)
    return run_each(files, lambda path: _eval_one(dataclasses.replace(request, dataset=path), reports))


def _eval_one(request: EvalRequest, reports: Reports) -> int:
    """One dataset: open the results file, plan (exit 2 before anything runs), run, gate."""
    from agentv_py.recorder import open_results, open_resumed
    from agentv_py.run_reports import output_roles
    from agentv_py.runner.executor import sigterm_interrupts
    from agentv_py.session import plan_eval

    reuse, reuse_mode = request.reuse, request.reuse_mode
    request.outputs = output_roles(request.out if reuse_mode != "resume" else str(reuse), reports)
    # --out is opened and locked first: a file that cannot be written (or that another run is
    # writing) is exit 2 before anything runs, the healthcheck included. --resume's file likewise.
    if reuse_mode == "resume" and reuse is not None:
        request.out = str(reuse)
        writer: JsonlWriter | None = open_resumed(reuse)
    else:
        writer = open_results(request.out)
    try:
        with sigterm_interrupts():  # SIGTERM at any moment (the healthcheck, starting Ray): exit 130
            plan = plan_eval(request)
            return _run(plan, writer, request.verbose, request.threshold, request.workers, reports)
    finally:
        if writer is not None:
            writer.close()


def _run(
    plan: EvalPlan,
    writer: JsonlWriter | None,
    verbose: bool,
    threshold: float | None,
    workers: int,
    reports: Reports,
) -> int:
    """Execute a planned eval, print the summary, and gate."""
    from rich.console import Console
    from rich.text import Text

    from agentv_py.report.render import PlainProgress, RichProgress, render_summary, stdout_console
    from agentv_py.report.text import plural, visible
    from agentv_py.run_reports import case_images, say_written, write_reports
    from agentv_py.session import execute

    err = Console(stderr=True, highlight=False)
    for warning in plan.warnings:
        err.print(f"warning: {visible(str(warning))}", markup=False, soft_wrap=True)
    for note in plan.reuse.notes if plan.reuse is not None else []:
        err.print(f"warning: {visible(note)}", markup=False, soft_wrap=True)
    err.print(visible(run_header(plan, workers)), markup=False, soft_wrap=True)
    total = plan.rows_to_write
    progress = RichProgress(total, err) if err.is_terminal else PlainProgress(total)
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
    written = write_reports(
        reports,
        summary,
        threshold,
        dataset=plan.dataset.name,
        target=plan.target.name,
        gates=plan.gates,
        baseline=plan.baseline,
        images=case_images(plan.dataset) if reports.html is not None else None,
        eval_file=str(plan.dataset.path),
    )
    say_written(human, written)
    if summary.interrupted and plan.out != "-":
        from agentv_py.loading import display_path

        resume = shlex.join(["agentv", "eval", display_path(plan.dataset.path), "--resume", summary.results_path])
        human.print(Text(f"To finish the run: {visible(resume)} (with the run's other options)"), soft_wrap=True)
    return gate_exit(summary, threshold, plan.gates, plan.baseline)
