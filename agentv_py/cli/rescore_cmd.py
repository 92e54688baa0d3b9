"""`agentv rescore RESULTS`: score a run's stored answers again with the dataset's current
evaluators (no target call), into a new results file; summary and gate as `agentv eval`."""

from __future__ import annotations

from pathlib import Path

import typer

from agentv_py.cli.base import (
    ALLOW_FLIPS_OPTION,
    BASELINE_OPTION,
    EXIT_CASE_ERRORS,
    EXIT_CONFIG,
    EXIT_GATE_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    HTML_OPTION,
    JUNIT_OPTION,
    JUNIT_PER_FIELD_OPTION,
    MAX_DROP_OPTION,
    SUMMARY_MD_OPTION,
    THRESHOLD_OPTION,
    app,
    boundary,
    gate_exit,
)
from agentv_py.cli.help import with_exit_codes

JUDGES_LISTED = 20  # judge commands said before a re-score runs them

RESCORE_EXIT_CODES = (
    (EXIT_OK, "gate passed"),
    (
        EXIT_GATE_FAILED,
        "gate failed: some case did not pass, or (with --threshold, the dataset's gates: or --baseline) a gate failed",
    ),
    (
        EXIT_CONFIG,
        "usage error; no results file, no rows in it, rows mostly of another dataset, no dataset known "
        "(no manifest and no --dataset), a dataset or judge target error, or an --out that cannot be "
        "written or is RESULTS itself (nothing was scored)",
    ),
    (EXIT_INTERNAL, "internal error (a bug: traceback shown)"),
    (
        EXIT_CASE_ERRORS,
        "a row holds a target error (copied from RESULTS) or an evaluator could not run; takes precedence over 1",
    ),
    (
        EXIT_OUTPUT,
        "the new results or manifest could not be written once scoring had started: judges killed, "
        "rows written so far kept",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C or SIGTERM); rows scored so far are kept"),
)
RescoreCommand = with_exit_codes("RescoreCommand", RESCORE_EXIT_CODES)


@app.command(cls=RescoreCommand, short_help="Score a run's stored answers again with the current evaluators.")
@boundary
def rescore(
    results: Path = typer.Argument(
        ..., metavar="RESULTS", help="A JSONL results file written by `agentv eval`.", show_default=False
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        "-d",
        metavar="DATASET",
        help="Dataset whose evaluators score the answers.  [default: the one RESULTS' manifest names]",
    ),
    out: str | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="PATH",
        help="New JSONL results file (never RESULTS); '-' writes the JSONL to stdout.  "
        "[default: <dataset>_<UTC>.jsonl in .agentv/results/]",
    ),
    targets: Path | None = typer.Option(
        None,
        "--targets",
        metavar="PATH",
        help="targets.yaml with the judge targets.  [default: the run's, else found from the dataset]",
    ),
    threshold: float | None = THRESHOLD_OPTION,
    baseline: Path | None = BASELINE_OPTION,
    max_drop: float | None = MAX_DROP_OPTION,
    allow_flips: int | None = ALLOW_FLIPS_OPTION,
    rejudge: int | None = typer.Option(
        None,
        "--rejudge",
        metavar="J",
        help="Score each stored answer J times (1-100), its judges asked afresh each time (rows: `rejudge`), "
        "to measure the judges' noise.",
        show_default=False,
    ),
    workers: int = typer.Option(
        4,
        "--workers",
        "-w",
        min=1,
        max=64,
        metavar="N",
        help="Cases scored concurrently when code or LLM judges run (1-64).",
    ),
    judge_target: str | None = typer.Option(
        None,
        "--judge-target",
        metavar="NAME",
        help="Judge target for llm_judge and rubric evaluators without their own 'target:'.  "
        "[default: execution.judge_target, else the run's]",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every case and every miss in the summary."),
    cache: bool | None = typer.Option(
        None,
        "--cache/--no-cache",
        help="Reuse stored LLM-judge replies whose inputs are unchanged, or never (whatever the files say).  "
        "[default: the dataset's execution.cache or a judge target's cache]",
        show_default=False,
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        metavar="DIR",
        help="Cache directory.  [default: .agentv/cache at the root of the dataset's repository, "
        "else beside the dataset]",
    ),
    junit: Path | None = JUNIT_OPTION,
    junit_per_field: bool = JUNIT_PER_FIELD_OPTION,
    summary_md: Path | None = SUMMARY_MD_OPTION,
    html: Path | None = HTML_OPTION,
) -> int:
    """Score the answers stored in RESULTS again with the dataset's current evaluators, without
    calling the target, and write a new results file and manifest. Rows whose target failed are
    copied; cases without a row are listed, not run."""
    from rich.console import Console

    from agentv_py.loading.inputs import judge_commands, judge_target_commands
    from agentv_py.repeat_plan import check_count
    from agentv_py.report.manifest import manifest_path
    from agentv_py.report.render import PlainProgress, RichProgress, render_summary, stdout_console
    from agentv_py.report.text import plural, visible
    from agentv_py.rescore import execute_rescore, open_rescore_results
    from agentv_py.rescore_plan import RescoreRequest, plan_rescore
    from agentv_py.run_reports import (
        baseline_options,
        case_images,
        output_roles,
        refuse_clash,
        report_options,
        say_written,
        write_reports,
    )

    reports = report_options(junit, junit_per_field, summary_md, out, html)
    baseline_options(baseline, max_drop, allow_flips)
    request = RescoreRequest(
        results=results,
        dataset=dataset,
        out=out,
        targets=targets,
        workers=workers,
        threshold=threshold,
        baseline=baseline,
        max_drop=max_drop,
        allow_flips=allow_flips or 0,
        judge_target=judge_target,
        verbose=verbose,
        cache=cache,
        cache_dir=cache_dir,
        rejudges=rejudge,
    )
    check_count("--rejudge", rejudge)
    writer = open_rescore_results(request)  # --out locked first: exit 2 before anything is read
    try:
        plan = plan_rescore(request)
        read = [("the results file re-scored", results)]
        read.append(("the manifest of the results file re-scored", manifest_path(results)))
        outputs = output_roles(out, reports)
        refuse_clash(outputs, read + plan.eval_plan.inputs(outputs), "see agentv rescore --help")
        err = Console(stderr=True, highlight=False)

        def warn(message: str) -> None:
            err.print(f"warning: {visible(message)}", markup=False, soft_wrap=True)

        notes = [*(str(warning) for warning in plan.eval_plan.warnings), *plan.warnings]
        for note in notes:
            warn(note)
        dataset_file = plan.eval_plan.dataset
        err.print(
            visible(
                f"agentv: re-scoring {plural(len(plan.cases), 'row')} of {results} with the evaluators of "
                f"'{dataset_file.name}' ({dataset_file.path}; no target calls; {plural(plan.workers, 'worker')})"
            ),
            markup=False,
            soft_wrap=True,
        )
        judges = judge_commands(dataset_file)
        if judges:  # and what the judge targets that are commands run when asked
            planned = plan.eval_plan
            judges += judge_target_commands(planned.judges, planned.default_judge, dataset_file.directory)
        for said in judges[:JUDGES_LISTED]:  # what will run, said before it runs
            err.print(visible(f"  runs {said}"), markup=False, soft_wrap=True)
        if len(judges) > JUDGES_LISTED:
            err.print(f"  ... and {len(judges) - JUDGES_LISTED} more judges", markup=False)
        total = len(plan.cases) * plan.spec.execution.options.rejudges
        progress = RichProgress(total, err) if err.is_terminal else PlainProgress(total)
        with progress:
            summary = execute_rescore(plan, progress.advance, writer, on_notice=warn)
    finally:
        if writer is not None:
            writer.close()
    human = err if out == "-" else stdout_console()
    render_summary(human, summary, verbose=verbose)
    if notes:  # repeated: the start of a long run's output has scrolled away
        human.print(f"{plural(len(notes), 'warning')}:", markup=False)
        for note in notes:
            human.print(f"  warning: {visible(note)}", markup=False, soft_wrap=True)
    gates, base = plan.eval_plan.gates, plan.eval_plan.baseline
    written = write_reports(
        reports,
        summary,
        threshold,
        dataset=plan.eval_plan.dataset.name,
        target=plan.target.name,
        gates=gates,
        baseline=base,
        images=case_images(plan.eval_plan.dataset) if reports.html is not None else None,
    )
    say_written(human, written)
    return gate_exit(summary, threshold, gates, base)
