"""What a target gives back for one case (`TargetOutcome`), how an answer is taken out of
AgentV's envelope, and how a failed command is described."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.models.results import ResultRow
from agentv_py.prepared import PreparedCase
from agentv_py.process.redact import Redactor
from agentv_py.process.spawn import ProcResult
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.jsontext import dumps, loads

# Keys that may sit beside `text` in an AgentV answer envelope. An object with other keys is an
# answer in its own right (an extractor may well emit a `text` field) and is not unwrapped.
ENVELOPE_KEYS = frozenset(
    {"text", "output", "output_messages", "token_usage", "cost_usd", "duration_ms", "metadata", "raw"}
)


@dataclass
class TargetOutcome:
    """What one target call produced: an answer, or a one-line error."""

    answer: str | None
    error: str | None = None
    parsed: Any = NOT_JSON  # the answer already parsed as JSON, when it was
    output_messages: list[Any] | None = None  # the target's own message list, when it gave one
    trace: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    retryable: bool = True  # False: trying again cannot help (the program is missing, not executable)
    # where the answer came from, for the row (`engine.score_case`): the cache (a stored answer, or
    # one stored now), or a row of an earlier run replayed (`agentv rescore`: its target, attempts,
    # duration and notes stand; a row whose target failed is that row again)
    cache: Literal["hit", "miss"] | None = None
    origin: ResultRow | None = None
    stderr: str | None = None  # what the target said on stderr (cli targets): kept in the row's trace


@dataclass
class CliCall:
    """One run of a cli target's command: the answer's text, or a one-line error."""

    text: str | None
    error: str | None = None
    retryable: bool = True  # False: the program cannot start; trying again cannot help
    duration_ms: float = 0.0
    stderr: str | None = None  # the last of its stderr (`ProcResult.stderr_text`), secrets masked


class TargetRunner(Protocol):
    name: str
    vision: bool

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome: ...

    def complete(self, messages: list[ChatMessage]) -> ChatReply: ...


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [i.get("value") or i.get("text") for i in content if isinstance(i, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(texts)  # type: ignore[arg-type]
    return dumps(content)


def unwrap_answer(text: str) -> TargetOutcome:
    """The outcome for a raw target answer: its text, the text parsed as JSON when it is, and
    what an AgentV envelope carried.

    An envelope (an `output_messages` list; AgentV v4.42's `output` list of messages, each with a
    `role`; or a `text` field with only envelope keys beside it) is unwrapped; its `token_usage`,
    `cost_usd` and `duration_ms` go to the trace.
    """
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return TargetOutcome(text)
    try:
        data = loads(stripped)
    except ValueError:
        return TargetOutcome(text)
    if not isinstance(data, dict):
        return TargetOutcome(text, parsed=data)
    trace = {k: data[k] for k in ("token_usage", "cost_usd", "duration_ms") if k in data}
    messages = data.get("output") if _messages(data.get("output")) else data.get("output_messages")
    if isinstance(messages, list) and messages:
        assistant = [m for m in messages if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
        dicts = assistant or [m for m in messages if isinstance(m, dict)]
        content = dicts[-1].get("content") if dicts else None
        if isinstance(content, (dict, list)):
            return TargetOutcome(dumps(content), parsed=content, trace=trace, output_messages=messages)
        answer = _message_text(content) if content is not None else ""
        return TargetOutcome(answer, trace=trace, output_messages=messages)
    if isinstance(data.get("text"), str) and data.keys() <= ENVELOPE_KEYS:
        return TargetOutcome(data["text"], trace=trace)
    return TargetOutcome(text, parsed=data)


def _messages(value: Any) -> bool:
    """AgentV v4.42's `output`: a non-empty list of messages, each a mapping with a text `role`
    (else the JSON is an answer of its own, as AgentV's schema check would have it)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value)
    )


def decode_output(raw: bytes, what: str) -> tuple[str | None, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"{what} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"


def describe_failure(result: ProcResult, timeout: float, cap: int, redact: Redactor) -> str | None:
    """One-line reason a process run failed, or None when it succeeded."""
    tail = result.stderr_tail()
    suffix = f": {redact(tail)}" if tail else ""
    abnormal = result.abnormal_end(timeout, cap)
    if abnormal:
        return redact(abnormal) + (suffix if result.timed_out else "")
    if result.returncode != 0:
        return f"{result.killed_by_signal() or f'exit code {result.returncode}'}{suffix}"
    return None
