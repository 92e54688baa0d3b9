"""`agentv rescore`: the stored answers of a results file scored again with the dataset's current
evaluators, without one target call, into a new results file with its own manifest.

The results file is read twice, streaming: a quick scan (each line's case id and nothing else,
`rescore_plan.plan_rescore`) decides which row stands for each case (the last one), what is
missing, dropped or unreadable, and whether the file belongs to the dataset at all, before any
judge runs; then the one run loop (`pipeline.execute`) scores the chosen rows, its "target" being
`stored_rows.StoredAnswers`, which hands each case the answer, trace and `output_messages` its row
holds (with worker threads when judges run, else inline). Rows whose target failed are copied.
Nothing holds more than a few rows at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from agentv_py import pipeline
from agentv_py.errors import AgentvError
from agentv_py.models.results import ResultRow
from agentv_py.pipeline import log_notice
from agentv_py.recorder import open_results
from agentv_py.report.jsonl import JsonlWriter
from agentv_py.report.manifest import manifest_path
from agentv_py.report.summary import RunSummary
from agentv_py.rescore_plan import RescorePlan, RescoreRequest


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


def execute_rescore(
    plan: RescorePlan,
    on_row: Callable[[ResultRow], None] | None = None,
    writer: JsonlWriter | None = None,
    on_notice: Callable[[str], None] = log_notice,
) -> RunSummary:
    """Score the planned rows again and write them (and a manifest whose `derived_from` is the old
    run) as cases finish; returns the summary. `writer`: --out, opened by `open_rescore_results`;
    else a new default results file. Ctrl-C or SIGTERM: the rows written stay, the summary says
    `interrupted`. A failed write (OutputError) stops the run, its judges killed."""
    return pipeline.execute(plan.spec, on_row, writer, on_notice)
