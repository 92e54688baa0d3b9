"""Chat messages and their content items (SPEC §1): a case's input and expected messages."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Tag, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel

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


class ToolCall(StrictModel):
    """One tool call of a message, in AgentV's shape (`{tool, input?, output?, id?, timestamp?}`)."""

    tool: str
    input: Any = None
    output: Any = None
    id: str | None = None
    timestamp: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _agentv_shape(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and "function" in data and "tool" not in data:
            raise PydanticCustomError(
                "invalid_option",
                "write a tool call as {tool: <name>, input: <arguments>} (AgentV's shape), "
                "not in the chat API's {type: function, function: {name, arguments}}",
                {},
            )
        return cls.strip_unknown_keys(data, info)

    @field_validator("tool")
    @classmethod
    def _non_empty_tool(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("tool must not be empty")
        return value


class Message(StrictModel):
    """A chat message: `content`, or (AgentV: expected tool use) only a non-empty `tool_calls`."""

    role: Role
    content: MessageContent | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None

    @model_validator(mode="after")
    def _content_or_tool_calls(self) -> Message:
        if self.content is None and not self.tool_calls:
            raise ValueError("a message needs 'content' (or, for tool use, a non-empty 'tool_calls')")
        return self

    @property
    def items(self) -> list[ContentItem]:
        content = self.content
        if isinstance(content, list) and content and all(isinstance(i, ContentItem) for i in content):
            return content
        return []

    @property
    def tool_calls_value(self) -> list[dict[str, Any]]:
        """The tool calls as plain JSON values (what judges and the reference answer see)."""
        return [call.model_dump(exclude_none=True) for call in self.tool_calls or []]

    @property
    def value(self) -> Any:
        """The message's answer: its content, else (a tool-use-only message) its tool calls."""
        if self.content is None and self.tool_calls:
            return self.tool_calls_value
        return self.content


def last_assistant_value(messages: list[Message]) -> Any:
    """The content (or tool calls) of the last assistant message: a case's or a turn's expected answer."""
    for message in reversed(messages):
        if message.role == "assistant":
            return message.value
    return None


def is_message_list(value: Any) -> bool:
    """A non-empty list of mappings that each have a `role`: messages, not one message's content."""
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def as_expected_messages(value: Any) -> Any:
    """AgentV's `expected_output` shorthand: a value that is not a message list is the content
    of one assistant message."""
    if value is not None and not is_message_list(value):
        return [{"role": "assistant", "content": value}]
    return value
