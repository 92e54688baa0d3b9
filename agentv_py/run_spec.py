"""The frozen spec of one run: everything planning resolved and all that running it reads.

`session.plan_eval` (eval, resume and the re-runs, either executor) and `rescore_plan.plan_rescore`
each end in a `RunSpec`; `pipeline.execute` runs any of them the same way: the results file
opened (`ResultsFile`), the executor built (`Execution`), the manifest written from its seed when
the run starts and again when it ends (`ManifestSeed`), the rows of an earlier run counted or
copied (`kept`), the summary gated. Nothing after planning reads a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # annotations only: `validate` imports this module through eval_plan, not the runner
    from collections.abc import Mapping, Sequence

    from agentv_py.models.dataset import Gates
    from agentv_py.models.manifest import ShardInfo, TargetFingerprint, TargetInfo
    from agentv_py.models.results import ResultRow
    from agentv_py.models.targets import TargetConfig
    from agentv_py.prepared import LoadedDataset, PreparedCase
    from agentv_py.report.gates import Baseline
    from agentv_py.runner.cache import CacheSettings
    from agentv_py.runner.engine import RunOptions
    from agentv_py.runner.run import TargetCatalog
    from agentv_py.runner.stop_early import StopEarly
    from agentv_py.runner.worker_target import WarmWorkers

# local: worker threads here (`runner.run.Run`); ray: Ray tasks of a few cases each (`runner.ray_executor`);
# inline: each case scored in turn on the calling thread (`runner.executor.InlineRun`: re-scoring
# stored answers with no judge to wait on)
ExecutorKind = Literal["local", "ray", "inline"]


@dataclass(frozen=True)
class StoredSource:
    """The rows of an earlier run that stand for the target (`agentv rescore`): which line of
    `path` answers which case (`stored_rows.StoredAnswers` reads them as the run asks)."""

    name: str  # the target that gave the answers
    path: Path
    lines: Mapping[int, str]


@dataclass(frozen=True)
class Execution:
    """What the executor is built from: the cases, the target (or the stored answers standing
    for it), the judges and their secrets, the proxy catalog, the cache and the run's options."""

    kind: ExecutorKind
    dataset: LoadedDataset
    cases: Sequence[PreparedCase]
    target: TargetConfig
    options: RunOptions
    judges: Mapping[str, TargetConfig]
    default_judge: str | None
    secrets: Sequence[str]
    catalog: TargetCatalog | None
    cache: CacheSettings | None
    answers: StoredSource | None = None  # rescore: no target is called, these rows answer
    warm: WarmWorkers | None = None  # a worker target's workers, started by its start check: the run adopts them


@dataclass(frozen=True)
class ResultsFile:
    """Where the rows go when the caller opened no file: `out` ("-": stdout), else a new file in
    .agentv/results/ named after the dataset; `resume`: the file an interrupted run is finished in."""

    out: str | None
    dataset_name: str
    resume: Path | None = None


@dataclass(frozen=True)
class ManifestSeed:
    """What the manifest records of the run (`recorder.start_manifest` adds the results file and
    the start time): the selected cases, the target and judges, the options that shape the run."""

    dataset: LoadedDataset
    cases: Sequence[PreparedCase]  # every selected case, run now or reused
    target: TargetConfig
    judges: Mapping[str, TargetConfig]
    secrets: Sequence[str]
    options: Mapping[str, object]
    started_at: str | None = None  # resume: the run's own start; None: now
    derived_from: str | None = None  # a re-run or a re-score: the run whose rows it builds on
    shard: ShardInfo | None = None
    recorded_target: TargetInfo | None = None  # rescore: the target that gave the answers
    fingerprint: TargetFingerprint | None = None  # the target's (`runner.target_fingerprint`)
    skipped: Sequence[tuple[str, str]] = ()  # (id, reason) of the selected cases that say `skip:`
    repeats: int = 1  # --repeat K: runs of each case
    rejudges: int = 1  # --rejudge J: scorings of each answer


@dataclass(frozen=True)
class RunSpec:
    run_id: str  # every row's and the manifest's (resume: the resumed run's own)
    execution: Execution
    results: ResultsFile
    manifest: ManifestSeed
    kept: Sequence[ResultRow] = ()  # rows of an earlier run: counted (resume) or copied (re-runs)
    copy_kept: bool = False
    positions: Mapping[str, int] | None = None  # case id -> its place in the summary (None: run order)
    threshold: float | None = None  # the gate the manifest records
    gates: Gates | None = None
    baseline: Baseline | None = None
    verbose: bool = False  # the summary keeps every case's line
    excluded: int = 0  # cases --exclude left out
    strict_xfail: bool = False  # --strict-xfail: an xfail case that passes fails the gate
    confidence: float = 0.95  # --confidence: the level of the summary's intervals (pass rate, mean score)
    stop_early: StopEarly | None = None  # --stop-early: fed each row; the cases stop once it decides
