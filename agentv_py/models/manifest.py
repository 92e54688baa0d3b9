"""The run manifest (`<results>.meta.json`): what a results file was made from, so a later
command can tell whether it may reuse it (resume, rescore) and a reader what produced it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

MANIFEST_VERSION = 1
RunStatus = Literal["running", "completed", "interrupted", "failed"]


class _Part(BaseModel):
    # Manifests are written by us and read back by later versions: unknown keys are ignored.
    # Built on first use (`defer_build`): `validate` writes no manifest.
    model_config = ConfigDict(extra="ignore", defer_build=True)


class DatasetInfo(_Part):
    path: str  # absolute
    name: str
    sha256: str  # of the file's bytes (a JSONL dataset: its bytes, then its sidecar's)
    cases: int  # cases in the file
    case_ids: list[str] = Field(default_factory=list)  # the cases this run selected, in dataset order
    # the hash of every case's evaluator list, the whole file's (not only the selected cases'): the
    # same for every shard of a dataset, so `agentv merge` can tell shards of one eval
    evaluators_sha256: str = ""


class ShardInfo(_Part):
    """`--shard K/N`: the run holds the cases of shard `index` (from 1) of `count`."""

    index: int
    count: int


class EvaluatorInfo(_Part):
    type: str
    name: str


class TargetFingerprint(_Part):
    """What a target's answers depend on besides the case, part by part, as the answer cache keys
    it (docs/incremental.md): each part a SHA-256, so that reusing or merging results can say
    which part changed without recording any value (an environment variable's may be a secret)."""

    command: str = ""  # the command template (cli), the callable (python); "" for a model target
    settings: dict[str, str] = Field(default_factory=dict)  # every other setting that can change an answer
    scripts: dict[str, str] = Field(default_factory=dict)  # the program's files, by path from the dataset's dir
    env: dict[str, str] = Field(default_factory=dict)  # the variables it runs with (inherited, then `env:`)


class TargetInfo(_Part):
    name: str
    provider: str
    sha256: str  # of `config` (secrets masked: a new API key does not make another target)
    config: dict[str, Any] = Field(default_factory=dict)
    # the eval target's (None: a judge target, or a manifest of an agentv that did not record one)
    fingerprint: TargetFingerprint | None = None

    @model_serializer(mode="wrap")
    def _without_no_fingerprint(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A judge target reads as it did before fingerprints existed (no `fingerprint` key)."""
        data: dict[str, Any] = handler(self)
        if data.get("fingerprint") is None:
            data.pop("fingerprint", None)
        return data


class Counts(_Part):
    selected: int = 0
    written: int = 0
    passed: int = 0
    partial: int = 0
    failed: int = 0
    target_errors: int = 0
    evaluator_errors: int = 0
    mean_score: float | None = None


class GateCheckInfo(_Part):
    """One gate (--threshold, the dataset's `gates:`, --baseline) with the run's value."""

    name: str
    value: float | None  # None: nothing to measure (fails)
    op: str  # >= a minimum, <= a maximum drop
    limit: float
    passed: bool
    shown: str | None = None  # the value as agentv shows it (`3` for a count, `n/a (why)`)
    detail: str | None = None  # what the value is made of: the cases that flipped, why a field dropped


class GateInfo(_Part):
    rule: str
    outcome: str  # ok, gate_failed, errors, interrupted
    passed: bool
    message: str = ""
    checks: list[GateCheckInfo] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_empty_checks(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A run without gates: the gate reads as it did before gates existed (no `checks` key)."""
        data: dict[str, Any] = handler(self)
        if not data.get("checks"):
            data.pop("checks", None)
        return data


class RunManifest(_Part):
    """Written when a run starts (`status: running`) and again when it ends."""

    manifest_version: int = MANIFEST_VERSION
    run_id: str
    tool: dict[str, str]  # {name, version}
    results: str  # the results file, absolute
    dataset: DatasetInfo
    # evaluator config hash -> what it is; each selected case -> the hash of its evaluator list
    evaluators: dict[str, EvaluatorInfo] = Field(default_factory=dict)
    case_evaluators: dict[str, str] = Field(default_factory=dict)
    evaluators_sha256: str = ""  # of `case_evaluators`: one value to compare
    files: dict[str, str] = Field(default_factory=dict)  # judge scripts and prompt files: path -> sha256
    target: TargetInfo
    judges: dict[str, TargetInfo] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    started_at: str
    ended_at: str | None = None
    status: RunStatus = "running"
    counts: Counts = Field(default_factory=Counts)
    gate: GateInfo | None = None
    derived_from: str | None = None  # rescore / rerun: the run whose answers this run reused
    shard: ShardInfo | None = None  # --shard K/N
    merged_from: list[str] = Field(default_factory=list)  # `agentv merge`: the runs (ids) merged, in order
    skipped: dict[str, str] = Field(default_factory=dict)  # `skip:` cases (not run): id -> reason
    stopped_early: dict[str, Any] | None = None  # --stop-early: cases, run, decided, seed (and the sequence)
    repeats: int | None = None  # --repeat K: each case ran K times (rows say which run: `repeat`)
    rejudges: int | None = None  # --rejudge J: each answer scored J times (rows: `rejudge`)

    @model_serializer(mode="wrap")
    def _without_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`shard`, `merged_from` and `skipped` only on runs that have them (other manifests read as before)."""
        data: dict[str, Any] = handler(self)
        if data.get("shard") is None:
            data.pop("shard", None)
        if not data.get("merged_from"):
            data.pop("merged_from", None)
        if not data.get("skipped"):
            data.pop("skipped", None)
        for name in ("stopped_early", "repeats", "rejudges"):
            if data.get(name) is None:
                data.pop(name, None)
        return data
