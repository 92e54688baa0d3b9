"""What an eval is asked to do (`EvalRequest`: the command line, or a `run_eval` call) and what
planning made of it (`EvalPlan`: the dataset, the selected cases, the target and judges resolved,
a reused results file's `Reuse`, the `RunSpec` to run). `session.plan_eval` builds the plan;
`pipeline.execute` runs its spec."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # annotations only: `validate` builds an EvalRequest without importing the runner
    from collections.abc import Mapping, Sequence

    from agentv_py.errors import Problem
    from agentv_py.locate import Role
    from agentv_py.models.dataset import Gates
    from agentv_py.models.manifest import RunManifest
    from agentv_py.models.results import ResultRow
    from agentv_py.models.targets import TargetConfig
    from agentv_py.prepared import LoadedDataset, PreparedCase
    from agentv_py.report.gates import Baseline
    from agentv_py.run_spec import RunSpec
    from agentv_py.runner.engine import Shard

ReuseMode = Literal["resume", "rerun_failed", "retry_errors"]


@dataclass
class EvalRequest:
    dataset: Path
    target: str | None = None
    targets: Path | None = None
    out: str | None = None
    workers: int = 4
    max_retries: int = 1
    eval_ids: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)  # --exclude GLOB: cases left out (each glob must match)
    strict_xfail: bool = False  # --strict-xfail: an xfail case that passes (XPASS) fails the gate
    confidence: float = 0.95  # --confidence: the level of the summary's intervals (and of --stop-early)
    stop_early: bool = False  # --stop-early: a random order, stopped once the gate is settled
    repeats: int | None = None  # --repeat K: each case run K times (None: not given; --resume keeps the run's)
    rejudges: int | None = None  # --rejudge J: each answer scored J times (None: not given)
    verbose: bool = False
    dry_run: bool = False
    judge_target: str | None = None  # --judge-target: the default judge for LLM evaluators
    # When nothing else names the default judge (not --judge-target, execution.judge_target nor
    # the eval target): this one, from `fallback_origin` (rescore: the judge the old run used)...
    fallback_judge: str | None = None
    fallback_origin: str = ""
    # ...else why there is none, and what to do about it (rescore's own words; None: eval's)
    no_judge_reason: str | None = None
    no_judge_hint: str | None = None
    threshold: float | None = None  # --threshold: the gate the manifest records (the CLI applies it)
    baseline: Path | None = None  # --baseline BASE.jsonl: gate against a previous run (with max_drop)
    max_drop: float | None = None  # --max-drop (default 0.0 with --baseline)
    allow_flips: int = 0  # --allow-flips: cases the baseline passed that may not pass now
    cache: bool | None = None  # --cache / --no-cache; None: the dataset's and targets' `cache:` decide
    cache_dir: Path | None = None  # --cache-dir (default: .agentv/cache/ of the current directory)
    reuse: Path | None = None  # --resume / --rerun-failed / --retry-errors RESULTS (`reuse_mode` says which)
    reuse_mode: ReuseMode | None = None
    force: bool = False  # --force: reuse the rows although the inputs changed or the manifest is gone
    allow_target_change: bool = False  # --allow-target-change: reuse rows another version of the target made
    shard: Shard | None = None  # --shard K/N: only the cases of that shard (`runner.engine.shard_of`)
    executor: Literal["local", "ray"] = "local"  # --executor: threads here, or Ray tasks (runner/ray_executor.py)
    ray_address: str | None = None  # --ray-address (else $RAY_ADDRESS, else a local Ray instance)
    # the files the run writes, with their options (--out and its manifest, the reports): planning
    # refuses one that is an input (`EvalPlan.inputs`), before the healthcheck
    outputs: list[Role] = field(default_factory=list)


@dataclass(frozen=True)
class EvalPlan:
    """What planning made of a request: the pieces the CLI shows, and the frozen `spec` the
    pipeline runs (`pipeline.execute`). Nothing reads the request after planning."""

    spec: RunSpec
    dataset: LoadedDataset
    cases: Sequence[PreparedCase]  # those that run (a re-run: those left to run)
    target: TargetConfig
    judges: Mapping[str, TargetConfig]  # judge targets by name
    default_judge: str | None
    targets_file: Path | None  # the targets file read (None: none, in a dry run)
    out: str  # the results file ("-": stdout)
    dry_run: bool
    shard: Shard | None = None
    baseline_path: Path | None = None  # --baseline's file
    reuse: Reuse | None = None  # --resume / --rerun-failed / --retry-errors: `cases` are those to run
    baseline: Baseline | None = None  # --baseline, read when planning (a bad one: exit 2 before anything runs)

    @property
    def rows_to_write(self) -> int:
        """The rows the run will write: a row per case, per run of it (--repeat), per scoring (--rejudge)."""
        execution = self.spec.execution
        return len(execution.cases) * execution.options.rejudges

    @property
    def gates(self) -> Gates | None:
        """The dataset's `gates:`."""
        return self.dataset.model.gates

    def inputs(self, outputs: list[Role] | None = None) -> list[Role]:
        """Every file the run reads, with its role (what no output may replace, `locate.output_clash`):
        the dataset, the targets file, --baseline and a reused results file with their manifests,
        the judges' scripts and prompt files, the files the target's command names (its program),
        and of the cases' input files, those one of `outputs` already is (`locate.inputs_among`).
        --resume's file is the output itself, not an input."""
        from agentv_py.loading.inputs import judge_files
        from agentv_py.locate import inputs_among, working_dir
        from agentv_py.models.targets import CliTarget
        from agentv_py.report.manifest import manifest_path
        from agentv_py.runner.cache_keys import named_files

        roles: list[Role] = [("the dataset", self.dataset.path), ("the targets file", self.targets_file)]
        for role, path in (("--baseline", self.baseline_path), (self._reused_role(), self._reused())):
            if path is not None:
                roles += [(f"the {role} results", path), (f"the {role} manifest", manifest_path(path))]
        target = self.target
        if isinstance(target, CliTarget):
            cwd = working_dir(self.dataset.directory, target.cwd)
            roles += [
                (f"the program of target '{target.name}'", path)
                for path in named_files(target.command_template, cwd).values()
            ]
        case_files = (
            (f"an input file of case '{case.case.id}'", Path(path))
            for case in self.cases
            for path in [*case.file_paths, *(image.value for image in case.images if image.source == "file")]
        )
        return roles + judge_files(self.dataset) + inputs_among(outputs or [], case_files)

    def _reused(self) -> Path | None:
        reuse = self.reuse
        return reuse.source if reuse is not None and reuse.mode != "resume" else None

    def _reused_role(self) -> str:
        return f"--{self.reuse.mode.replace('_', '-')}" if self.reuse is not None else ""

    @property
    def warnings(self) -> list[Problem]:
        return self.dataset.warnings

    @property
    def target_origin(self) -> str:
        """Where the target came from, for the run's header: `from .agentv/targets.yaml`."""
        from agentv_py.loading import display_path

        shown = display_path(self.targets_file) if self.targets_file is not None else None
        if not self.dry_run:
            return f"from {shown}" if shown else "(no targets file)"
        return f"(dry run, judge targets from {shown})" if shown else "(dry run, no targets file read)"


@dataclass
class Reuse:
    """A results file reused by `--resume`, `--rerun-failed` or `--retry-errors` (docs/incremental.md)."""

    mode: ReuseMode
    source: Path
    shown: str  # the file as the user gave it
    selected: Sequence[PreparedCase]  # every selected case (the manifest's); `to_run` are those that run
    to_run: Sequence[PreparedCase]
    kept: Sequence[ResultRow]  # resume: the file's rows; a re-run: the rows copied into the new file (on disk)
    stored: RunManifest | None  # None: missing or unreadable, reused with --force
    run_id: str | None  # resume: the run's own id (rows and manifest keep it); None: a new one
    derived_from: str | None = None  # a re-run: the run whose rows it copies
    notes: list[str] = field(default_factory=list)  # warnings for the user: a cut line, rows of unknown cases
    repeats: int = 1  # resume: the runs of each case the run was started with (`repeat_plan.resumed`)
    rejudges: int = 1
