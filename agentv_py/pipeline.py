"""The one run loop: a planned `RunSpec` executed, whatever planned it (eval, resume and the
re-runs, rescore) and whichever executor runs its cases (local threads, Ray, inline re-scoring).

The results file is opened (unless the caller opened it), the executor built, the file started
and the manifest written; the rows of an earlier run are counted or copied; then each row the
executor hands over is written (and flushed), added to the summary and passed on; the manifest is
finished with the gate. Ctrl-C or SIGTERM stops the run with the rows on disk (the summary says
`interrupted`); any other exception (a failed write: OutputError) stops it, marks the manifest
failed, and propagates.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentv_py.errors import OutputError
from agentv_py.models.results import ResultRow
from agentv_py.recorder import (
    open_results_file,
    open_resumed,
    record_manifest,
    start_manifest,
    write_failed,
)
from agentv_py.report.jsonl import JsonlWriter
from agentv_py.report.manifest import finish_manifest
from agentv_py.report.summary import RunSummary, gate
from agentv_py.report.text import visible
from agentv_py.run_spec import Execution, ResultsFile, RunSpec
from agentv_py.runner.executor import Executor, InlineRun, Interrupted
from agentv_py.runner.run import Run
from agentv_py.stored_rows import StoredAnswers

if TYPE_CHECKING:
    from agentv_py.runner.ray_executor import RayRun


def log_notice(message: str) -> None:
    """A run's notice (`Run.notice`: a failed batch call) as a terminal-safe `warning: ...` line
    of the `agentv` logger: on stderr when logging is not configured (`agentv eval`), where an
    application that configures logging wants it otherwise."""
    import logging  # here: most runs have no notice, and `logging` costs a run's start-up to import

    logging.getLogger("agentv").warning("warning: %s", visible(message))


def execute(
    spec: RunSpec,
    on_row: Callable[[ResultRow], None] | None = None,
    writer: JsonlWriter | None = None,
    on_notice: Callable[[str], None] = log_notice,
) -> RunSummary:
    """Run the spec: rows are written (and flushed) as cases finish; returns the summary.

    `writer`: the results file, already opened and locked (the CLI does that before planning, so
    a file it cannot write stops it before the healthcheck); else `spec.results` is opened here,
    before any target runs (ResultsFileError, exit 2). The writer is closed either way. What the
    run says while it runs (a failed batch call) goes to `on_notice`.
    """
    execution = spec.execution
    rows = len(execution.cases) * execution.options.rejudges + len(spec.kept)  # --rejudge J: J rows a run
    summary = RunSummary(total_selected=rows, keep_all_lines=spec.verbose)
    summary.baseline_passed = spec.baseline.passed if spec.baseline is not None else None
    summary.skipped, summary.excluded = list(spec.manifest.skipped), spec.excluded
    summary.strict_xfail = spec.strict_xfail
    summary.confidence = spec.confidence
    positions = spec.positions or {}
    results = writer if writer is not None else _open(spec.results)
    with results:
        with make_executor(execution, on_notice) as run:
            summary.results_path = results.display

            def write(row: ResultRow) -> None:
                try:
                    results.write(row)
                except OSError as exc:
                    raise write_failed(results.display, exc, summary.completed) from None

            def accept(row: ResultRow) -> None:
                write(row)
                summary.add(row, positions.get(row.eval_id))
                if spec.stop_early is not None:
                    spec.stop_early.add(row)
                if on_row is not None:
                    on_row(row)

            try:
                results.start()  # an existing file is emptied only now
            except OSError as exc:
                raise write_failed(results.display, exc, 0) from None
            manifest = start_manifest(spec.run_id, spec.manifest, results)
            for row in spec.kept:  # an earlier run's rows: in the summary, and copied unless resumed
                if spec.copy_kept:
                    write(row.model_copy(update={"run_id": spec.run_id}))
                summary.add(row, positions.get(row.eval_id))
            try:
                if execution.cases:
                    run.execute(accept)
            except Interrupted:
                summary.interrupted = True
            except BaseException:
                if manifest is not None:  # best effort: the run's own failure is what is reported
                    failed = finish_manifest(manifest, summary, None).model_copy(update={"status": "failed"})
                    with contextlib.suppress(OutputError):
                        record_manifest(results, failed)
                raise
            summary.stop_early = spec.stop_early
            if manifest is not None:
                verdict = gate(summary, spec.threshold, spec.gates, spec.baseline)
                record_manifest(results, finish_manifest(manifest, summary, verdict))
    return summary


def _open(where: ResultsFile) -> JsonlWriter:
    if where.resume is not None:
        return open_resumed(where.resume)
    if where.out is not None:
        return open_results_file(where.out)
    return open_results_file("", where.dataset_name)


def make_executor(execution: Execution, on_notice: Callable[[str], None] | None = None) -> Executor:
    """The executor of `execution.kind`, built from the execution's pieces by name (Ray imported
    only when asked for); rescore's stored answers stand for the target."""
    source = execution.answers
    answers = StoredAnswers(source.name, source.path, source.lines) if source is not None else None
    if execution.kind == "inline":
        assert answers is not None, "an inline run scores stored answers"
        return InlineRun(
            execution.dataset, execution.cases, answers, options=execution.options, secrets=execution.secrets
        )
    executor: type[Run] | type[RayRun] = Run
    if execution.kind == "ray":
        from agentv_py.runner.ray_executor import RayRun

        executor = RayRun
    return executor(
        execution.dataset,
        execution.cases,
        execution.target,
        options=execution.options,
        judges=execution.judges,
        default_judge=execution.default_judge,
        secrets=execution.secrets,
        catalog=execution.catalog,
        on_notice=on_notice,
        cache=execution.cache,
        answers=answers,
        warm=execution.warm,
    )
