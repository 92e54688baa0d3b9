"""OpenAI-compatible chat endpoints as targets and judges (the official `openai` SDK).

The SDK does the HTTP work, including retries with exponential backoff (and `Retry-After`) on
408/409/429/5xx, timeouts and connection errors. We count the attempts, record token usage and
latency, and turn every failure into one line that never contains the API key.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.errors import TargetError
from agentv_py.media import ImageRef
from agentv_py.models.targets import OpenAITarget
from agentv_py.prepared import PreparedCase
from agentv_py.process.redact import Redactor

NO_KEY = "no-key-required"  # sent to servers that need none (most local ones)


def case_messages(case: PreparedCase) -> list[ChatMessage]:
    """The case's input messages as chat messages: text as is, structured content as JSON,
    `file` items inlined as text, `image`/`image_url` items as images (in the dataset's order)."""
    files = iter(case.files)
    images = iter(case.images)
    messages: list[ChatMessage] = []
    for message in case.case.input_messages:
        parts: list[str | ImageRef] = []
        content = message.content
        if isinstance(content, str):
            parts.append(content)
        elif message.items:
            for item in message.items:
                if item.type == "text":
                    parts.append(item.value)
                elif item.type == "file":
                    parts.append(_inline_file(next(files)))
                else:
                    parts.append(next(images))
        else:
            parts.append(json.dumps(content, indent=2, ensure_ascii=False))
        role = message.role
        if role == "tool":  # chat APIs need a tool_call_id for tool messages; send it as context
            role, parts = "user", ["[tool output]", *parts]
        messages.append(ChatMessage(role, parts))
    return messages


def _inline_file(path: str) -> str:
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(
            f"file {os.path.basename(path)} is not UTF-8 text and cannot be inlined; give images as type: image"
        ) from None
    return f'<file name="{os.path.basename(path)}">\n{text}\n</file>'


def to_openai(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Chat messages in the chat-completions format: a plain string when a message is text only,
    else text and `image_url` parts (local files as base64 data URIs)."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if not message.images:
            wire.append({"role": message.role, "content": message.text})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            else:
                image: dict[str, Any] = {"url": part.url()}
                if part.detail:
                    image["detail"] = part.detail
                parts.append({"type": "image_url", "image_url": image})
        wire.append({"role": message.role, "content": parts})
    return wire


def api_key(config: OpenAITarget) -> str:
    """The key to send: `api_key`, else $OPENAI_API_KEY, else (servers that need none) a placeholder.
    Raises TargetError when the OpenAI API itself would be called without a key."""
    key = config.api_key or os.environ.get("OPENAI_API_KEY")
    if not key and not config.base_url:
        raise TargetError(
            f"target '{config.name}' has no API key: set api_key (e.g. api_key: ${{{{ OPENAI_API_KEY }}}}) "
            "or the OPENAI_API_KEY environment variable",
            hint="local OpenAI-compatible servers need only base_url",
        )
    return key or NO_KEY


class OpenAIClient:
    """One endpoint, shared by all workers (the SDK client is thread-safe); created on first use
    so that `openai` is imported only by runs that use it."""

    def __init__(self, config: OpenAITarget, secrets: list[str] | None = None) -> None:
        self.name = config.name
        self.vision = config.vision
        self.config = config
        self._key = api_key(config)
        self.redact = Redactor([*(secrets or []), self._key], mask_keys=True)
        self._client: Any = None
        self._lock = threading.Lock()

    def _sdk(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai  # lazy: ~0.5 s, paid only by runs with an LLM target or judge

                self._client = openai.OpenAI(
                    api_key=self._key,
                    base_url=self.config.base_url,
                    timeout=self.config.timeout_seconds,
                    max_retries=self.config.max_retries,
                    default_headers=self.config.headers or None,
                )
            return self._client

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        config = self.config
        request: dict[str, Any] = {"model": config.model, "messages": to_openai(self._with_system(messages))}
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.max_tokens is not None:
            request["max_tokens"] = config.max_tokens
        sdk = self._sdk()
        started = time.monotonic()
        try:
            raw = sdk.chat.completions.with_raw_response.create(**request)
            response = raw.parse()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a one-line error
            elapsed = (time.monotonic() - started) * 1000
            return ChatReply(
                None,
                self.redact(self._describe(exc)),
                duration_ms=elapsed,
                model=config.model,
                attempts=self._attempts_after_failure(exc),
            )
        elapsed = (time.monotonic() - started) * 1000
        attempts = 1 + int(getattr(raw, "retries_taken", 0) or 0)
        usage = _usage(getattr(response, "usage", None))
        model = getattr(response, "model", None) or config.model
        choices = getattr(response, "choices", None) or []
        if not choices:
            return ChatReply(None, "the endpoint returned no choices", usage, elapsed, model, attempts)
        text = choices[0].message.content
        if not text:
            reason = choices[0].finish_reason
            return ChatReply(
                None, f"the model returned no text (finish_reason: {reason})", usage, elapsed, model, attempts
            )
        return ChatReply(text, None, usage, elapsed, model, attempts)

    def _with_system(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        prompt = self.config.system_prompt
        if prompt and not any(m.role == "system" for m in messages):
            return [ChatMessage("system", [prompt]), *messages]
        return messages

    def _attempts_after_failure(self, exc: Exception) -> int:
        import openai

        retryable = isinstance(exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError))
        if isinstance(exc, openai.APIStatusError) and exc.status_code in (408, 409):
            retryable = True
        return 1 + self.config.max_retries if retryable else 1

    def _describe(self, exc: Exception) -> str:
        import openai

        attempts = self._attempts_after_failure(exc)
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        where = self.config.base_url or "the OpenAI API"
        if isinstance(exc, openai.APITimeoutError):
            return f"no reply within {self.config.timeout_seconds:g}s from {where}{tries}"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            return f"could not connect to {where}{tries}: {cause or exc}"
        if isinstance(exc, openai.APIStatusError):
            return f"HTTP {exc.status_code} from {where}{tries}: {_status_message(exc)}"
        return f"{type(exc).__name__}: {exc}"


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)  # the SDK passes the error object (or the whole body)
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else body.get("message")
        if isinstance(message, str) and message:
            return message[:300]
    text = getattr(getattr(exc, "response", None), "text", "") or str(exc)
    return text.strip().replace("\n", " ")[:300]


def _usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    data = {"input": getattr(usage, "prompt_tokens", None), "output": getattr(usage, "completion_tokens", None)}
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is not None:
        data["cached"] = cached
    return {k: v for k, v in data.items() if v is not None} or None
