"""Result models (SPEC §3 intro, §4.1): one evaluator result shape, one row shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agentv_py.models.field_results import DEFERRED_ROOTS, FieldOutcome, read_fields

Verdict = Literal["pass", "partial", "fail"]
EvaluatorStatus = Literal["processed", "error", "skipped"]
CaseStatus = Literal["ok", "error"]


class _Result(BaseModel):
    # Results are produced by us and read back from files written by other versions:
    # unknown keys are ignored on read, never silently invented on write. Built on first use
    # (`defer_build`): `validate` never makes a row (a run builds them before its workers start).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class EvaluatorResult(_Result):
    """The one result every evaluator returns, whatever its type."""

    name: str
    type: str
    status: EvaluatorStatus
    score: float | None
    passed: bool
    verdict: Verdict | None
    weight: float = 1.0
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    evaluator_results: list[EvaluatorResult] = Field(default_factory=list)  # a composite's members, nested
    # Failed for more than its score (a required rubric item, a critical field, an aggregator's
    # fail): it fails its case whatever the scores (`scoring.case.is_hard_failure`). Not written:
    # a row's verdict already says what it did.
    _failed_hard: bool = PrivateAttr(default=False)
    _fields: list[FieldOutcome] | None = PrivateAttr(default=None)  # `field_outcomes`, read once

    def __eq__(self, other: object) -> bool:
        """Pydantic's equality, less the `_fields` cache: whether `field_outcomes` was asked yet
        (or the outcomes kept, `keep_fields`) does not make two results differ."""
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and self._failed_hard == other.__pydantic_private__.get("_failed_hard")  # type: ignore[union-attr]
        )

    __hash__ = None  # type: ignore[assignment]  # as pydantic's models: mutable, not hashable

    @property
    def failed_hard(self) -> bool:
        return self._failed_hard

    def mark_failed_hard(self) -> None:
        self._failed_hard = True

    def field_outcomes(self) -> list[FieldOutcome]:
        """A `field_accuracy` result's fields as typed outcomes (`field_results.read_fields`),
        read once: metrics, the taxonomy and the reports each ask ([] for any other type)."""
        private = self.__pydantic_private__  # the cache, without pydantic's attribute lookup (a hot path)
        assert private is not None
        fields: list[FieldOutcome] | None = private["_fields"]
        if fields is None:
            fields = private["_fields"] = read_fields(self.details) if self.type == "field_accuracy" else []
        return fields

    def keep_fields(self, fields: list[FieldOutcome]) -> EvaluatorResult:
        """This result, with `fields` as what `field_outcomes` returns: the typed outcomes its
        `details["fields"]` were dumped from (so they are not read back from the dump)."""
        private = self.__pydantic_private__
        assert private is not None
        private["_fields"] = fields
        return self


def _without_empty_children(result: dict[str, Any]) -> dict[str, Any]:
    """An evaluator result as written: `evaluator_results` only where there are any (a composite's)."""
    children = result.pop("evaluator_results", None)
    if children:
        result["evaluator_results"] = [_without_empty_children(child) for child in children]
    return result


def _childless(results: list[EvaluatorResult]) -> dict[int, Any]:
    """`exclude` for `to_json_line`: each result's `evaluator_results` where it has none."""
    exclude: dict[int, Any] = {}
    for i, result in enumerate(results):
        if not result.evaluator_results:
            exclude[i] = {"evaluator_results": True}
        else:
            nested = _childless(result.evaluator_results)
            if nested:
                exclude[i] = {"evaluator_results": nested}
    return exclude


class Trace(_Result):
    """What a case cost: duration, token usage and cost (target-reported when valid), the model
    that answered, HTTP attempts, and the LLM judges' usage and latency, summed."""

    duration_ms: float | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    model: str | None = None  # model targets: the model that answered
    http_attempts: int | None = None  # model targets: HTTP attempts, SDK retries included
    judge_token_usage: dict[str, int] | None = None  # LLM judges of the case, summed
    judge_duration_ms: float | None = None
    # cli targets with `provider_batching: true`: how the case got its answer (runner/batch.py)
    batch: str | None = None
    cache: Literal["hit", "miss"] | None = None  # with the cache on: the answer came from it, or was stored
    # the last of what the target wrote on stderr (cli targets; at most STDERR_KEPT characters,
    # secrets masked), whether it answered or failed: the extractor's own words
    stderr: str | None = None


def run_label(eval_id: str, repeat: int | None, rejudge: int | None) -> str:
    """`inv-1`, `inv-1 #2` (its second run), `inv-1 #2.3` (its second run's third scoring), `inv-1 #1.3`."""
    if repeat is None and rejudge is None:
        return eval_id
    return f"{eval_id} #{repeat or 1}" + (f".{rejudge}" if rejudge is not None else "")


_OPTIONAL = ("error", "run_id", "output_messages", "xfail", "repeat", "rejudge", "metadata")  # written only when set


class ResultRow(_Result):
    """One JSONL row: everything known about one eval case."""

    timestamp: str
    eval_id: str
    dataset: str
    conversation_id: str | None = None
    target: str
    status: CaseStatus
    score: float
    verdict: Verdict
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str = ""
    candidate_answer: str | None = None
    # the target's own message list (tool calls), when it gave one: what trace evaluators and code
    # judges read, kept so that `agentv rescore` scores them exactly as the run did
    output_messages: list[Any] | None = None
    evaluator_results: list[EvaluatorResult] = Field(default_factory=list)
    error: str | None = None
    attempts: int = 1
    duration_ms: float = 0.0
    trace: Trace = Field(default_factory=Trace)
    run_id: str | None = None  # the run that wrote the row (its manifest: `<results>.meta.json`)
    # the case's `xfail:` reason: expected to fail, so not passing does not fail the gate (XFAIL),
    # and passing is an XPASS (`expected_outcome`); written only on such a case's row
    xfail: str | None = None
    # `--repeat K`: which of the K runs of the case this row is (from 1); `--rejudge J`: which of
    # the J scorings of one answer. Written only on a repeated (rejudged) run's rows.
    repeat: int | None = Field(default=None, ge=1)
    rejudge: int | None = Field(default=None, ge=1)
    # the case's `metadata:` (what the document is), for `agentv metrics --by KEY`; only when it has some
    metadata: dict[str, str | int | float | bool | None] | None = None

    @property
    def run_label(self) -> str:
        """The case id, with which run (`--repeat`) and scoring (`--rejudge`) the row is: `inv-1 #2.3`."""
        return run_label(self.eval_id, self.repeat, self.rejudge)

    @property
    def expected_outcome(self) -> str | None:
        """`xfail` (an xfail case that did not pass), `xpass` (one that passed), None (no mark)."""
        if self.xfail is None:
            return None
        return "xpass" if self.status == "ok" and self.verdict == "pass" else "xfail"

    def to_json_line(self) -> bytes | None:
        """`to_json_dict` as compact JSON, serialised by pydantic's Rust core straight from the
        model (no intermediate dicts: a third of a busy run's own CPU went there); None when it
        cannot serialise a value (a lone surrogate, a foreign type): write `to_json_dict` then."""
        exclude: dict[str, Any] = {name: True for name in _OPTIONAL if getattr(self, name) is None}
        empty_trace = {name for name, value in self.trace if value is None}
        if empty_trace:
            exclude["trace"] = empty_trace
        childless = _childless(self.evaluator_results)
        if childless:
            exclude["evaluator_results"] = childless
        try:
            return self.__pydantic_serializer__.to_json(self, exclude=exclude)
        except (ValueError, TypeError):  # pydantic_core.PydanticSerializationError is a ValueError
            return None

    def to_json_dict(self) -> dict[str, Any]:
        """The row as written to JSONL (`error` only present on error rows, `output_messages` only
        when the target gave them, an evaluator result's `evaluator_results` only on a composite's)."""
        data = self.model_dump()
        if data["error"] is None:
            del data["error"]
        if data["run_id"] is None:
            del data["run_id"]
        if data["output_messages"] is None:
            del data["output_messages"]
        for name in ("xfail", "repeat", "rejudge", "metadata"):
            if data[name] is None:
                del data[name]
        data["trace"] = {k: v for k, v in data["trace"].items() if v is not None}
        data["evaluator_results"] = [_without_empty_children(result) for result in data["evaluator_results"]]
        return data


def build_row_models() -> None:
    """Build the row models now. They are deferred (`validate` makes no row); a run calls this
    before its worker threads start, because older pydantic versions build a deferred model on
    first use without a lock (pydantic issue 11849: a racing thread may validate with the parent's)."""
    pending: list[type[BaseModel]] = [*DEFERRED_ROOTS, _Result]
    while pending:  # in the order defined, so a model's parts are built (and reused) before it
        model = pending.pop(0)
        pending.extend(model.__subclasses__())
        if not model.__pydantic_complete__:
            model.model_rebuild()
