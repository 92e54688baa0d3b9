"""Anthropic's Messages API (`provider: anthropic`) through the official `anthropic` SDK: `POST
/v1/messages` with the `x-api-key` and `anthropic-version` headers. What every provider shares
(attempts, the reply cap, one-line errors without the key) is `ModelClient`'s."""

from __future__ import annotations

import functools
from typing import Any

from agentv_py.chat import ChatMessage
from agentv_py.models.model_targets import DEFAULT_ANTHROPIC_MAX_TOKENS, AnthropicTarget
from agentv_py.runner.chat_messages import image_data, token_usage
from agentv_py.runner.llm import ModelClient, ReplyRefused, read_json_object, snippet


def to_anthropic(messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """(the system prompt, the messages) in the Messages API's format: system messages joined into
    `system` (text only), a message's text as a string, or text and `image` blocks (files and data
    URIs as base64, URLs as `url` sources, which Anthropic fetches)."""
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            if message.images:
                raise ValueError(
                    "the anthropic provider takes no images in a system message; put them in a user message"
                )
            system.append(message.text)
            continue
        if not message.images:
            wire.append({"role": message.role, "content": message.text})
            continue
        blocks: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, str):
                blocks.append({"type": "text", "text": part})
            elif part.source == "url":
                blocks.append({"type": "image", "source": {"type": "url", "url": part.value}})
            else:
                media_type, data = image_data(part)
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        wire.append({"role": message.role, "content": blocks})
    return ("\n\n".join(system) if system else None), wire


@functools.cache
def _refused_type() -> type[ReplyRefused]:
    """ReplyRefused as an `AnthropicError`: the SDK wraps any other error raised while sending in
    a connection error, which it retries; its own errors pass through."""
    import anthropic

    return type("AnthropicReplyRefused", (ReplyRefused, anthropic.AnthropicError), {})


class AnthropicClient(ModelClient):
    """One Anthropic model target (or judge)."""

    label = "the Anthropic API"
    sdk_retries_by_headers = True
    config: AnthropicTarget

    def __init__(self, config: AnthropicTarget, secrets: list[str] | None = None) -> None:
        super().__init__(config, secrets)

    def _refused(self) -> type[ReplyRefused]:
        return _refused_type()

    def _make_sdk(self) -> Any:
        import anthropic  # lazy: paid only by runs with an anthropic target or judge

        return anthropic.Anthropic(
            api_key=self._key,
            base_url=self.config.base_url,
            timeout=self.config.timeout_seconds,
            max_retries=self.config.max_retries,
            http_client=anthropic.DefaultHttpxClient(event_hooks=self._event_hooks()),
        )

    def _request(self, messages: list[ChatMessage]) -> dict[str, Any]:
        config = self.config
        system, wire = to_anthropic(messages)
        answer_tokens = config.max_output_tokens or DEFAULT_ANTHROPIC_MAX_TOKENS
        request: dict[str, Any] = {"model": config.model, "messages": wire, "max_tokens": answer_tokens}
        if system:
            request["system"] = system
        if config.temperature is not None:  # in the body as the API takes it, whatever the SDK's signature
            request["extra_body"] = {"temperature": config.temperature}
        if config.thinking_budget is not None:
            # As AgentV's SDK did: the thinking budget comes on top of the answer's tokens.
            request["thinking"] = {"type": "enabled", "budget_tokens": config.thinking_budget}
            request["max_tokens"] = answer_tokens + config.thinking_budget
        return request

    def _send(self, sdk: Any, request: dict[str, Any]) -> bytes:
        raw = sdk.messages.with_raw_response.create(**request)
        body: bytes = raw.http_response.content
        return body

    def _read(self, body: bytes) -> tuple[dict[str, Any] | None, str | None]:
        data, problem = read_json_object(body, "an Anthropic message")
        if data is not None and not isinstance(data.get("content"), list):
            return None, 'the endpoint returned JSON that is not an Anthropic message (no "content" list)'
        return data, problem

    def _answer(self, data: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any] | None, str | None]:
        texts = [
            block["text"]
            for block in data["content"]
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        usage = data.get("usage")
        counts = None
        if isinstance(usage, dict):
            read, written = usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")
            prompt = usage.get("input_tokens")
            # Anthropic counts cached prompt tokens apart; `input` is the whole prompt, as for OpenAI.
            if isinstance(prompt, int) and not isinstance(prompt, bool):
                prompt += sum(n for n in (read, written) if isinstance(n, int) and not isinstance(n, bool) and n > 0)
            counts = token_usage(prompt, usage.get("output_tokens"), read)
        model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else None
        reason = data.get("stop_reason")
        shown = snippet(reason, 40) if isinstance(reason, str) else reason
        return "".join(texts), f"the model returned no text (stop_reason: {shown})", counts, model

    def _describe_error(self, exc: Exception, tries: str) -> str | None:
        import anthropic

        return self._describe_stainless(anthropic, exc, tries)
