"""A provider-neutral chat exchange: what LLM targets and judges send and get back.

Messages hold text and images (ImageRef); each client turns them into its own wire format
(OpenAI image parts, a command's {PROMPT} and {IMAGES}, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentv_py.media import ImageRef

Part = str | ImageRef


@dataclass
class ChatMessage:
    role: str  # system, user or assistant
    parts: list[Part] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(p for p in self.parts if isinstance(p, str))

    @property
    def images(self) -> list[ImageRef]:
        return [p for p in self.parts if isinstance(p, ImageRef)]


@dataclass
class ChatReply:
    """The model's text, or a one-line error; usage and latency when known."""

    text: str | None
    error: str | None = None
    usage: dict[str, Any] | None = None  # {input, output, cached} tokens
    duration_ms: float = 0.0
    model: str | None = None
    attempts: int = 1  # HTTP attempts, retries included
    cached: bool = False  # served from the judge cache: no call was made (runner/cache.py)
    # Set by the judge cache: the evaluator says whether the reply was valid, so that only a valid
    # reply is kept and a stored one that no longer validates is forgotten.
    settle: Callable[[bool], None] | None = field(default=None, repr=False, compare=False)

    def metadata(self) -> dict[str, Any]:
        """What a result records about the call (never the prompt, never a key)."""
        data: dict[str, Any] = {
            "model": self.model,
            "attempts": self.attempts,
            "duration_ms": round(self.duration_ms, 3),
        }
        if self.usage:
            data["token_usage"] = self.usage
        return {k: v for k, v in data.items() if v is not None}


def sum_usage(usages: Iterable[Mapping[str, Any] | None]) -> dict[str, int]:
    """Token counts added up key by key ({input, output, cached}); anything but a whole number
    of tokens >= 0 is ignored."""
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in (usage or {}).items():
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                total[key] = total.get(key, 0) + value
    return total


class ChatClient(Protocol):
    """Anything that answers a list of chat messages (a model endpoint, a command, a mock). A
    client that samples at a temperature (a model endpoint) may also have `with_temperature(t)`:
    the same client at temperature `t` (`at_temperature`)."""

    name: str
    vision: bool

    def complete(self, messages: list[ChatMessage]) -> ChatReply: ...


def at_temperature(client: ChatClient, temperature: float | None) -> ChatClient:
    """`client` sampling at `temperature` (an llm_judge's own, AgentV v4.42's), in place of its
    target's: its `with_temperature`, when it has one. A client without one (a command, a mock:
    nothing samples) and a temperature of None leave `client` as it is."""
    make = getattr(client, "with_temperature", None)
    if temperature is None or not callable(make):
        return client
    made: ChatClient = make(temperature)
    return made
