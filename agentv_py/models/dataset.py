"""Dataset models (SPEC §1): eval cases, messages, content items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar

from pydantic import AliasChoices, Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, check_metadata
from agentv_py.models.conversation import Conversation
from agentv_py.models.evaluators import CompositeConfig, EvaluatorConfig
from agentv_py.models.fields import DateOrder, FieldAccuracyConfig, FieldSpec
from agentv_py.models.judges import RubricConfig, RubricFields, RubricItem
from agentv_py.models.messages import (
    CONTENT_TAGS,
    ContentItem,
    Message,
    ToolCall,
    as_expected_messages,
    last_assistant_value,
)
from agentv_py.models.preprocessors import Preprocessor

__all__ = ["CONTENT_TAGS", "ContentItem", "Dataset", "EvalCase", "Message", "ToolCall"]


def _both_given(data: dict[str, Any], *keys: str) -> None:
    present = [k for k in keys if k in data]
    if len(present) > 1:
        raise PydanticCustomError(
            "alias_conflict",
            f"give only one of {', '.join(repr(k) for k in present)} (they are aliases)",
            {"agentv_key": present[1]},
        )


class CaseExecution(StrictModel):
    # AgentV's schema documented a per-case target, but its loader ignored it (one target per file):
    # accepted, and the loader warns that it is ignored.
    target: str | None = None
    evaluators: list[EvaluatorConfig] | None = None


class CaseRubric(RubricFields):
    """One item of a case's `rubrics:` (AgentV's inline rubrics). `expected_outcome` is AgentV's other
    spelling of `description`; an item without an `id` gets AgentV's `rubric-N` (N = its position)."""

    description: str | None = Field(default=None, validation_alias=AliasChoices("description", "expected_outcome"))

    _needs_description: ClassVar[str] = "a rubric item needs a description (AgentV also spells it expected_outcome)"

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if isinstance(data, dict):
            _both_given(data, "description", "expected_outcome")
        return data


def _rubric_kind(value: Any) -> str:
    return "text" if isinstance(value, str) else "object"  # tags the loader drops from error locations


RubricEntry = Annotated[
    Annotated[str, Tag("text")] | Annotated[CaseRubric, Tag("object")],
    Discriminator(_rubric_kind),
]


def _rubric_items(entries: list[str | CaseRubric]) -> list[RubricItem]:
    """The case's rubric items with AgentV's ids: an item's own, else `rubric-<position>`."""
    items: list[RubricItem] = []
    for position, entry in enumerate(entries, 1):
        if isinstance(entry, str):
            items.append(RubricItem(id=f"rubric-{position}", description=entry))
        else:  # `required` passed on only when written: it gates a score_ranges item only then
            given = entry.model_dump(include={"required"} & entry.model_fields_set)
            items.append(
                RubricItem(
                    id=entry.id or f"rubric-{position}",
                    description=entry.description,
                    weight=entry.weight,
                    score_ranges=entry.score_ranges,
                    required_min_score=entry.required_min_score,
                    min_score=entry.min_score,
                    operator=entry.operator,
                    **given,
                )
            )
    return items


class EvalCase(StrictModel):
    id: str
    conversation_id: str | None = None
    expected_outcome: str | None = Field(
        default=None, validation_alias=AliasChoices("expected_outcome", "outcome", "criteria")
    )
    input_messages: list[Message] = Field(
        default_factory=list, validation_alias=AliasChoices("input_messages", "input")
    )
    expected_messages: list[Message] = Field(
        default_factory=list, validation_alias=AliasChoices("expected_messages", "expected_output")
    )
    evaluators: list[EvaluatorConfig] | None = None
    # entries merged into the suite's list by name (loading.overrides): a full evaluator (with
    # `type`) replaces or adds one; `{name, ...options}` changes options, `fields` by path
    extend_evaluators: list[dict[str, Any]] | None = None
    execution: CaseExecution | None = None
    rubrics: list[RubricEntry] | None = None  # AgentV's inline rubrics: a `rubric` evaluator, first
    # pytest's marks (agentv's): `skip` does not run the case; `xfail` runs it, and its not passing
    # does not fail the gate (its passing is an XPASS). Each: true, or the reason.
    skip: bool | str | None = None
    xfail: bool | str | None = None
    description: str | None = None  # documentation only, as in AgentV
    note: str | None = None  # documentation only, as in AgentV
    reference_answer: Any = None  # in AgentV's examples, ignored by its loader: accepted, with a warning
    conversation: Conversation | None = None  # a multi-turn case (models/conversation.py)
    # what the document is (`{vendor: acme, doc_type: receipt}`): written on its rows, so `agentv
    # metrics --by KEY` breaks every number down by it; each value one text, number, boolean or null
    metadata: dict[str, str | int | float | bool | None] | None = None

    _scalar_metadata = field_validator("metadata", mode="before")(check_metadata)

    @model_validator(mode="before")
    @classmethod
    def _normalise_aliases(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if not isinstance(data, dict):
            return data
        _both_given(data, "input_messages", "input")
        _both_given(data, "expected_messages", "expected_output")
        _both_given(data, "expected_outcome", "outcome", "criteria")
        if "extend_evaluators" in data and (
            "evaluators" in data or (isinstance(data.get("execution"), dict) and "evaluators" in data["execution"])
        ):
            raise PydanticCustomError(
                "alias_conflict",
                "give either 'evaluators' (replaces the suite's list) or 'extend_evaluators' (adds to it and "
                "changes its evaluators by name), not both",
                {"agentv_key": "extend_evaluators"},
            )
        if "evaluators" in data and isinstance(data.get("execution"), dict) and "evaluators" in data["execution"]:
            raise PydanticCustomError(
                "alias_conflict",
                "give case evaluators either as 'evaluators' or as 'execution.evaluators', not both",
                {"agentv_key": "execution"},
            )
        data = dict(data)
        # Newer AgentV shorthands: `input: "text"` and `expected_output: {...}` (not a message list).
        if isinstance(data.get("input"), str):
            data["input"] = [{"role": "user", "content": data["input"]}]
        if "expected_output" in data:
            data["expected_output"] = as_expected_messages(data["expected_output"])
        return data

    @field_validator("skip", "xfail", mode="before")
    @classmethod
    def _reason(cls, value: Any, info: ValidationInfo) -> Any:
        if (isinstance(value, str) and not value.strip()) or not isinstance(value, (bool, str, type(None))):
            shown = "an empty string" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
            raise ValueError(f"{info.field_name} is true, or the reason (a non-empty string), not {shown}")
        return value

    @model_validator(mode="after")
    def _one_mark(self) -> EvalCase:
        if self.skip not in (None, False) and self.xfail not in (None, False):
            raise PydanticCustomError(
                "alias_conflict",
                "a case is either skipped (skip: does not run) or expected to fail (xfail: runs, may fail), not both",
                {"agentv_key": "xfail"},
            )
        return self

    @property
    def skip_reason(self) -> str | None:
        """Why the case does not run (`skip:`), or None: it runs."""
        return _mark_reason(self.skip, "skip: true")

    @property
    def xfail_reason(self) -> str | None:
        """Why the case is expected to fail (`xfail:`), or None: it is expected to pass."""
        return _mark_reason(self.xfail, "xfail: true")

    @field_validator("extend_evaluators", mode="before")
    @classmethod
    def _named_entries(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        for entry in value:
            if not isinstance(entry, dict):
                raise ValueError(f"each entry is a mapping (an evaluator, or {{name: ..., options}}), got {entry!r}")
            if "type" not in entry and not (isinstance(entry.get("name"), str) and entry["name"].strip()):
                raise ValueError(
                    "an entry without 'type' changes a suite evaluator and needs its 'name' "
                    "(give 'type' to add an evaluator)"
                )
        return value

    @field_validator("id")
    @classmethod
    def _non_empty_id(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("id must not be empty")
        return value

    @field_validator("rubrics")
    @classmethod
    def _rubric_set(cls, value: list[str | CaseRubric] | None) -> list[str | CaseRubric] | None:
        if not value:
            return value  # `rubrics: []` adds no evaluator, as in AgentV
        for entry in value:
            if isinstance(entry, str) and not entry.strip():
                raise ValueError("a rubric must not be empty")
        items = _rubric_items(value)
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                raise ValueError(f"duplicate rubric id '{item.id}'")
            seen.add(item.id)
        if sum(item.weight for item in items) <= 0:
            raise ValueError("the rubric weights add up to 0; give at least one a weight > 0")
        return value

    def rubric_evaluator(self) -> RubricConfig | None:
        """AgentV's evaluator for the case's `rubrics:` — named `rubric`, judged by the default
        judge; string items get ids `rubric-1`, `rubric-2`, ... (None: the case has no rubrics)."""
        if not self.rubrics:
            return None
        return RubricConfig(type="rubric", name="rubric", rubrics=_rubric_items(self.rubrics))

    @property
    def case_evaluators(self) -> list[EvaluatorConfig] | None:
        """Evaluators given on the case (either spelling); None means "use the suite's"."""
        if self.evaluators is not None:
            return self.evaluators
        if self.execution is not None:
            return self.execution.evaluators
        return None

    @property
    def own_key(self) -> str:
        """Where the case's own list is written: `evaluators`, or `extend_evaluators` (merged into the suite's)."""
        return "evaluators" if self.extend_evaluators is None else "extend_evaluators"

    @property
    def expected_value(self) -> Any:
        """Ground truth: content of the last assistant message in expected_messages (SPEC §1)."""
        return last_assistant_value(self.expected_messages)

    def input_items(self, *kinds: str) -> list[ContentItem]:
        return [item for m in self.input_messages for item in m.items if item.type in kinds]

    @property
    def question(self) -> str:
        """The case's text input: string contents and text items, in order, one per line."""
        parts: list[str] = []
        for message in self.input_messages:
            if isinstance(message.content, str):
                parts.append(message.content)
            else:
                parts.extend(item.value for item in message.items if item.type == "text")
        return "\n".join(parts)


def _mark_reason(value: bool | str | None, default: str) -> str | None:
    if value is None or value is False:
        return None
    return default if value is True else str(value)


class SuiteExecution(StrictModel):
    target: str | None = None
    judge_target: str | None = None
    evaluators: list[EvaluatorConfig] = Field(default_factory=list)
    cache: bool = False  # cache target answers and judge replies (docs/incremental.md); --no-cache wins
    # the day/month order of every `match: date` field that says neither its own nor `formats`
    date_order: DateOrder | None = None


def settle_dates(configs: Sequence[Any], order: DateOrder) -> None:
    """Give `order` to each date field of these evaluators (composite members and `match: items`
    sub-fields included) that has neither `date_order` nor `formats`."""
    for config in configs:
        if isinstance(config, CompositeConfig):
            settle_dates(config.evaluators, order)
        elif isinstance(config, FieldAccuracyConfig):
            _settle_fields(config.fields, order)


def _settle_fields(specs: Sequence[FieldSpec], order: DateOrder) -> None:
    for spec in specs:
        if spec.match == "date" and spec.date_unsettled:
            spec.date_order = order
        if spec.fields:
            _settle_fields(spec.fields, order)


Fraction = Annotated[float, Field(ge=0, le=1)]


class FieldGate(StrictModel):
    """Minimum precision / recall / F1 of one field, over the whole run."""

    precision: Fraction | None = None
    recall: Fraction | None = None
    f1: Fraction | None = None


class EvaluatorGate(StrictModel):
    min_mean: Fraction


class Gates(StrictModel):
    """The dataset's CI gates (docs/metrics.md#gates): each must hold, or the run exits 1."""

    min_mean_score: Fraction | None = None
    min_pass_rate: Fraction | None = None
    evaluators: dict[str, EvaluatorGate] = Field(default_factory=dict)
    fields: dict[str, FieldGate] = Field(default_factory=dict)


class Dataset(StrictModel):
    schema_: Any = Field(None, validation_alias="$schema")  # AgentV files name their JSON schema; ignored
    description: str | None = None
    dataset: str | None = None
    execution: SuiteExecution = Field(default_factory=SuiteExecution)
    # AgentV's legacy default evaluator kind (its basic-jsonl sidecar writes `evaluator: llm_judge`):
    # a case without evaluators gets the default llm_judge, which is the only kind it can name.
    evaluator: str | None = None
    # AgentV's legacy root-level target: used when execution.target is not given.
    target: str | None = None
    gates: Gates | None = None
    # A case passes at or above this mark (SPEC §4.1's 0.8 when absent); partial from 0.6 below it.
    pass_threshold: float | None = None
    # files the answers name turned into text for every LLM judge (models/preprocessors.py)
    preprocessors: list[Preprocessor] | None = None
    evalcases: list[EvalCase]

    @field_validator("pass_threshold")
    @classmethod
    def _pass_threshold(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"pass_threshold must be between 0 and 1, got {value!r}")
        return value

    @property
    def target_name(self) -> str | None:
        """The dataset's target: `execution.target`, else the legacy root-level `target`."""
        return self.execution.target or self.target

    @field_validator("evaluator")
    @classmethod
    def _legacy_evaluator(cls, value: str | None) -> str | None:
        if value is not None and value != "llm_judge":
            raise ValueError(
                f"the legacy 'evaluator' key names the default evaluator kind, and only llm_judge can be one "
                f"(got {value!r}); list evaluators under execution.evaluators"
            )
        return value

    @field_validator("evalcases")
    @classmethod
    def _non_empty(cls, value: list[EvalCase]) -> list[EvalCase]:
        if not value:
            raise ValueError("evalcases must be a non-empty list of cases")
        return value

    @model_validator(mode="after")
    def _date_order(self) -> Dataset:
        """`execution.date_order` reaches every date field of the suite's and the cases' lists."""
        order = self.execution.date_order
        if order is not None:
            settle_dates(self.execution.evaluators, order)
            for case in self.evalcases:
                settle_dates(case.case_evaluators or [], order)
        return self
