"""A multi-turn conversation case (AgentV v4.42's `mode: conversation`): the target answers each
turn with the conversation so far, each turn is scored by its own evaluators, and the turn scores
(with the case's own evaluators, run on the whole transcript) make the case's score.

In this tool's format a case says `conversation: {turns: [...], aggregation, on_turn_failure,
window_size}`; AgentV's `mode: conversation` with `turns` at the case level is translated into it
(`loading/agentv_442.py`). What runs is `runner/conversation.py`."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import AliasChoices, Field, ValidationInfo, field_validator, model_validator

from agentv_py.models.base import StrictModel
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.models.messages import Message, as_expected_messages, last_assistant_value

Aggregation = Literal["mean", "min", "max"]
TURN_TYPE = "conversation_turn"  # a row's result for one turn (its evaluators' results nested)
TRANSCRIPT_TYPE = "conversation"  # a row's result of the case's own evaluators on the whole transcript


class ConversationTurn(StrictModel):
    """One user turn: what the user says, and how the answer to it is scored (its own evaluators;
    without any, the default judge when the turn has an expected answer, else nothing: it scores 1)."""

    input: Any = Field(description="the user's message: text, or content sent as its JSON text")
    expected_messages: list[Message] = Field(
        default_factory=list, validation_alias=AliasChoices("expected_messages", "expected_output")
    )
    evaluators: list[EvaluatorConfig] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if isinstance(data, dict) and "expected_output" in data:
            data = {**data, "expected_output": as_expected_messages(data["expected_output"])}
        return data

    @field_validator("input")
    @classmethod
    def _given(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError("a turn needs an input (the user's message)")
        return value

    @property
    def user_text(self) -> str:
        """The user's message as sent: text as is, other content as JSON (as AgentV sent it)."""
        if isinstance(self.input, str):
            return self.input
        return json.dumps(self.input, ensure_ascii=False)

    @property
    def expected_value(self) -> Any:
        """The turn's expected answer: the content of its last expected assistant message."""
        return last_assistant_value(self.expected_messages)


class Conversation(StrictModel):
    turns: list[ConversationTurn] = Field(min_length=1)
    aggregation: Aggregation = "mean"  # how the turn scores (and the conversation's) make the case's
    on_turn_failure: Literal["continue", "stop"] = "continue"  # stop: later turns are skipped, scoring 0
    # the target is sent the system messages and the last `window_size` exchanges (user + answer)
    window_size: int | None = Field(default=None, ge=1)


def windowed(history: list[Message], window_size: int | None) -> list[Message]:
    """AgentV's window: every system message, then the last `window_size` * 2 other messages."""
    if window_size is None:
        return list(history)
    others = [m for m in history if m.role != "system"]
    return [*(m for m in history if m.role == "system"), *others[-window_size * 2 :]]


def transcript(history: list[Message]) -> str:
    """The conversation as one text, `role: content` blocks separated by a blank line (AgentV's)."""
    return "\n\n".join(f"{m.role}: {_text(m)}" for m in history)


def _text(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    dumped = message.model_dump(mode="json", exclude_none=True)
    return json.dumps(dumped.get("content", dumped.get("tool_calls")), ensure_ascii=False)


def aggregate(scores: list[float], how: Aggregation) -> float:
    """The case's score from its turn (and conversation) scores; 1.0 when there are none."""
    if not scores:
        return 1.0
    if how == "min":
        return min(scores)
    if how == "max":
        return max(scores)
    return sum(scores) / len(scores)
