"""`agentv rescore`: the stored answers of a results file scored again with the dataset's current
evaluators, without one target call, into a new results file with its own manifest.

The results file is read twice, streaming: a quick scan (each line's case id and nothing else)
decides which row stands for each case (the last one), what is missing, dropped or unreadable,
and whether the file belongs to the dataset at all, before any judge runs; then a `Run` scores
the chosen rows with the run's judges and worker threads, its "target" being `StoredAnswers`,
which hands each case the answer, trace and `output_messages` its row holds. Rows whose target
failed are copied. Nothing holds more than a few rows at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

from agentv_py.errors import AgentvError, OutputError
from agentv_py.eval_plan import EvalPlan
from agentv_py.loading.fingerprint import build_manifest, dataset_sha256
from agentv_py.models.manifest import RunManifest
from agentv_py.models.results import ResultRow
from agentv_py.recorder import open_results, open_results_file, record_manifest, tool_version
from agentv_py.report.jsonl import (
    JsonlWriter,
)
from agentv_py.report.manifest import (
    finish_manifest,
    manifest_path,
    utc_now,
)
from agentv_py.report.summary import RunSummary, gate, plural
from agentv_py.rescore_plan import (
    RescorePlan,
    RescoreRequest,
)
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.engine import RunOptions, score_case
from agentv_py.runner.run import Interrupted, Run, sigterm_interrupts
from agentv_py.runner.targets import DRY_RUN_TARGET
from agentv_py.session import cache_settings, log_notice
from agentv_py.stored_rows import (
    StoredAnswers,
)


def open_rescore_results(request: RescoreRequest) -> JsonlWriter | None:
    """Refuse an --out that is the results file being re-scored (or its manifest), then open and
    lock --out like eval does (None: the default file is made when the run starts)."""
    out = request.out
    if out is not None and out != "-":
        target, source = Path(out), request.results
        same = (
            target.exists() and source.exists() and os.path.samefile(target, source)
        ) or target.resolve() == source.resolve()
        if same or target.resolve() == manifest_path(source).resolve():
            raise AgentvError(
                f"--out {out} is the results file being re-scored; rescore never overwrites it",
                hint="pass another --out, or none (a new file in .agentv/results/)",
            )
    return open_results(out)


def _start_manifest(plan: RescorePlan, results: JsonlWriter) -> RunManifest | None:
    if results.path is None:
        return None
    eval_plan, request = plan.eval_plan, plan.request
    in_dataset_order = sorted(plan.cases, key=lambda prepared: plan.positions[prepared.case.id])
    manifest = build_manifest(
        run_id=plan.run_id,
        results=results.path,
        dataset=eval_plan.dataset,
        dataset_sha256=dataset_sha256(eval_plan.dataset),
        cases=in_dataset_order,
        target=DRY_RUN_TARGET,
        judges=eval_plan.judges,
        secrets=eval_plan.secrets,
        options={
            "command": "rescore",
            "rescored": str(request.results.resolve()),
            "targets": str(eval_plan.targets_file) if eval_plan.targets_file is not None else None,
            "workers": plan.workers,
            "judge_target": eval_plan.default_judge,
            "threshold": request.threshold,
            **(
                {"baseline": str(request.baseline), "max_drop": request.max_drop or 0.0}
                | {"allow_flips": request.allow_flips}
                if request.baseline
                else {}
            ),
        },
        version=tool_version(),
        started_at=utc_now(),
    ).model_copy(update={"target": plan.target, "derived_from": plan.derived_from})
    record_manifest(results, manifest)
    return manifest


def _judge_cache(plan: EvalPlan) -> CacheSettings | None:
    """The judge cache of a re-score (`session.cache_settings`): judges only, never the target."""
    settings = cache_settings(plan)
    if settings is None or not settings.judges:
        return None
    return dataclasses.replace(settings, target=False)


def execute_rescore(
    plan: RescorePlan,
    on_row: Callable[[ResultRow], None] | None = None,
    writer: JsonlWriter | None = None,
    on_notice: Callable[[str], None] = log_notice,
) -> RunSummary:
    """Score the planned rows again and write them (and a manifest whose `derived_from` is the old
    run) as cases finish; returns the summary. `writer`: --out, opened by `open_rescore_results`;
    else a new default results file. Ctrl-C or SIGTERM: the rows written stay, the summary says
    `interrupted`. A failed write (OutputError) stops the run, its judges killed.

    When code or LLM judges run, a `Run` scores the rows with the run's worker threads (judges wait
    on processes and HTTP; the run kills what they started when it stops); otherwise the rows are
    scored in order on this thread, which for pure scoring is the fastest (measured: threads only
    contend for the interpreter)."""
    eval_plan = plan.eval_plan
    summary = RunSummary(total_selected=len(plan.cases), keep_all_lines=plan.request.verbose)
    summary.baseline_passed = eval_plan.baseline.passed if eval_plan.baseline is not None else None
    results = writer or open_results_file("", eval_plan.dataset.name)
    with results, contextlib.ExitStack() as stack:
        stored = StoredAnswers(plan.target.name, plan.request.results, plan.lines)
        run: Run | None = None
        if plan.judged:
            run = stack.enter_context(
                Run(
                    eval_plan.dataset,
                    plan.cases,
                    DRY_RUN_TARGET,
                    options=RunOptions(workers=plan.workers, max_retries=0, run_id=plan.run_id),
                    judges=eval_plan.judges,
                    default_judge=eval_plan.default_judge,
                    secrets=eval_plan.secrets,
                    catalog=eval_plan.catalog,
                    on_notice=on_notice,
                    cache=_judge_cache(eval_plan),
                )
            )
            run.runner = stored  # the run's target: the answers the old run stored, never a program
        summary.results_path = results.display

        def accept(row: ResultRow) -> None:
            try:
                results.write(row)
            except OSError as exc:
                what = "stdout was closed" if isinstance(exc, BrokenPipeError) else f"cannot write to {results.display}"
                raise OutputError(
                    f"{what} ({exc.strerror or exc}); re-scoring was stopped after "
                    f"{plural(summary.completed, 'row')} and its judges were killed"
                ) from None
            summary.add(row, plan.positions.get(row.eval_id))
            if on_row is not None:
                on_row(row)

        try:
            results.start()
        except OSError as exc:
            raise OutputError(f"cannot write to {results.display} ({exc.strerror or exc})") from None
        manifest = _start_manifest(plan, results)
        try:
            if run is not None:
                run.execute(accept)
            else:
                _score_in_order(plan, stored, accept)
        except Interrupted:
            summary.interrupted = True
        except BaseException:
            if manifest is not None:  # best effort: the failure itself is what is reported
                failed = finish_manifest(manifest, summary, None).model_copy(update={"status": "failed"})
                with contextlib.suppress(OutputError):
                    record_manifest(results, failed)
            raise
        if manifest is not None:
            finished = finish_manifest(
                manifest,
                summary,
                gate(summary, plan.request.threshold, plan.eval_plan.gates, plan.eval_plan.baseline),
            )
            record_manifest(results, finished)
    return summary


def _score_in_order(plan: RescorePlan, stored: StoredAnswers, accept: Callable[[ResultRow], None]) -> None:
    """Every row scored on this thread (no judge runs: nothing to wait on, nothing to kill).
    Ctrl-C or SIGTERM: Interrupted, after the last whole row."""
    dataset = plan.eval_plan.dataset
    with sigterm_interrupts():
        try:
            for prepared in plan.cases:
                outcome = stored.invoke(prepared, 1)
                accept(
                    score_case(
                        prepared,
                        prepared.evaluators,
                        outcome,
                        dataset=dataset,
                        target=stored.name,
                        attempts=1,
                        duration_ms=0.0,
                        run_id=plan.run_id,
                    )
                )
        except KeyboardInterrupt:
            raise Interrupted() from None
