"""Dataset models (SPEC §1): eval cases, messages, content items."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel
from agentv_py.models.evaluators import EvaluatorConfig

Role = Literal["system", "user", "assistant", "tool"]
ContentType = Literal["text", "file", "image", "image_url"]


class ContentItem(StrictModel):
    type: ContentType
    value: str
    detail: Literal["low", "high", "auto"] | None = None

    @model_validator(mode="after")
    def _detail_for_images(self) -> ContentItem:
        if self.detail is not None and self.type not in ("image", "image_url"):
            raise ValueError(f"'detail' applies to image and image_url items, not to {self.type}")
        return self


CONTENT_TAGS = ("text", "items", "object", "data")  # how message content is read, by shape


def _content_kind(value: Any) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        # A list of {type: ...} objects is a list of content items (validated strictly, so a
        # typo such as `valeu:` is reported); any other list is structured ground truth.
        if value and all(isinstance(item, dict) and "type" in item for item in value):
            return "items"
        return "data"
    return "text"  # let the str member report the type error


MessageContent = Annotated[
    Annotated[str, Tag("text")]
    | Annotated[list[ContentItem], Tag("items")]
    | Annotated[dict[str, Any], Tag("object")]
    | Annotated[list[Any], Tag("data")],
    Discriminator(_content_kind),
]


class Message(StrictModel):
    role: Role
    content: MessageContent

    @property
    def items(self) -> list[ContentItem]:
        content = self.content
        if isinstance(content, list) and content and all(isinstance(i, ContentItem) for i in content):
            return content
        return []


def _both_given(data: dict[str, Any], *keys: str) -> None:
    present = [k for k in keys if k in data]
    if len(present) > 1:
        raise PydanticCustomError(
            "alias_conflict",
            f"give only one of {', '.join(repr(k) for k in present)} (they are aliases)",
            {"agentv_key": present[1]},
        )


class CaseExecution(StrictModel):
    evaluators: list[EvaluatorConfig] | None = None


class EvalCase(StrictModel):
    id: str
    conversation_id: str | None = None
    expected_outcome: str | None = Field(default=None, validation_alias=AliasChoices("expected_outcome", "outcome"))
    input_messages: list[Message] = Field(
        default_factory=list, validation_alias=AliasChoices("input_messages", "input")
    )
    expected_messages: list[Message] = Field(
        default_factory=list, validation_alias=AliasChoices("expected_messages", "expected_output")
    )
    evaluators: list[EvaluatorConfig] | None = None
    execution: CaseExecution | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise_aliases(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if not isinstance(data, dict):
            return data
        _both_given(data, "input_messages", "input")
        _both_given(data, "expected_messages", "expected_output")
        _both_given(data, "expected_outcome", "outcome")
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
        expected = data.get("expected_output")
        if expected is not None and not _is_message_list(expected):
            data["expected_output"] = [{"role": "assistant", "content": expected}]
        return data

    @field_validator("id")
    @classmethod
    def _non_empty_id(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("id must not be empty")
        return value

    @property
    def case_evaluators(self) -> list[EvaluatorConfig] | None:
        """Evaluators given on the case (either spelling); None means "use the suite's"."""
        if self.evaluators is not None:
            return self.evaluators
        if self.execution is not None:
            return self.execution.evaluators
        return None

    @property
    def expected_value(self) -> Any:
        """Ground truth: content of the last assistant message in expected_messages (SPEC §1)."""
        for message in reversed(self.expected_messages):
            if message.role == "assistant":
                return message.content
        return None

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


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


class SuiteExecution(StrictModel):
    target: str | None = None
    judge_target: str | None = None
    evaluators: list[EvaluatorConfig] = Field(default_factory=list)


class Dataset(StrictModel):
    schema_: Any = Field(None, validation_alias="$schema")  # AgentV files name their JSON schema; ignored
    description: str | None = None
    dataset: str | None = None
    execution: SuiteExecution = Field(default_factory=SuiteExecution)
    evalcases: list[EvalCase]

    @field_validator("evalcases")
    @classmethod
    def _non_empty(cls, value: list[EvalCase]) -> list[EvalCase]:
        if not value:
            raise ValueError("evalcases must be a non-empty list of cases")
        return value
