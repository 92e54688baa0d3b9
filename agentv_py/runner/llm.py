"""OpenAI-compatible chat endpoints as targets and judges (the official `openai` SDK).

The SDK does the HTTP work, including retries with exponential backoff (and `Retry-After`) on
408/409/429/5xx, timeouts and connection errors. We count the attempts really made (every request
the SDK sends goes through our hook), cap a reply at `DEFAULT_OUTPUT_CAP` like a cli target's
stdout, read the body ourselves (strict JSON, any shape described in words), record token usage
and latency, and turn every failure into one line that never contains the API key.
"""

from __future__ import annotations

import functools
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
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP
from agentv_py.scoring.jsontext import TOO_DEEP, loads

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
    """The file as a `<file>` text part: at most DEFAULT_OUTPUT_CAP bytes of UTF-8 text."""
    with Path(path).open("rb") as handle:
        data = handle.read(DEFAULT_OUTPUT_CAP + 1)
    if len(data) > DEFAULT_OUTPUT_CAP:
        raise ValueError(
            f"file {os.path.basename(path)} is over the {DEFAULT_OUTPUT_CAP // (1024 * 1024)} MB limit "
            "for a file inlined into a message"
        )
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


class ReplyRefused(Exception):
    """A reply agentv will not read (over the cap, or compressed though none was asked for);
    raised inside the HTTP client, so the SDK neither retries nor wraps it."""


class _CappedStream:
    """A response body stream that stops with ReplyRefused once more than `cap` bytes came."""

    def __init__(self, stream: Any, cap: int, too_large: str) -> None:
        self._stream, self._cap, self._too_large, self._seen = stream, cap, too_large, 0

    def __iter__(self) -> Any:
        for chunk in self._stream:
            self._seen += len(chunk)
            if self._seen > self._cap:
                raise ReplyRefused(self._too_large)
            yield chunk

    def close(self) -> None:
        self._stream.close()


def _snippet(text: str, limit: int = 80) -> str:
    """The first `limit` characters of a body on one line, control characters escaped."""
    head = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return head + ("..." if len(text) > limit else "")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "text"


def read_completion(body: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the completion as JSON, None) or (None, why) for a chat-completions body, in words: not
    JSON (with its first 80 characters), nested too deeply, or JSON of the wrong shape."""
    text = body.decode("utf-8", errors="replace")
    if not text.strip():
        return None, "the endpoint returned an empty body"
    try:
        data = loads(text)
    except ValueError as exc:
        if str(exc) == TOO_DEEP:
            return None, "the endpoint returned JSON nested too deeply to read"
        return None, f"the endpoint returned a body that is not JSON ({_snippet(text.strip())})"
    if not isinstance(data, dict):
        return None, f"the endpoint returned JSON that is not a chat completion ({_kind(data)}, not an object)"
    choices = data.get("choices")
    if not isinstance(choices, list):
        return None, 'the endpoint returned JSON that is not a chat completion (no "choices" list)'
    if choices:
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            return None, 'the endpoint returned JSON that is not a chat completion (choices[0] has no "message" object)'
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            return None, (
                "the endpoint returned JSON that is not a chat completion "
                f"(choices[0].message.content is {_kind(content)}, not text)"
            )
    return data, None


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
        self._calls = threading.local()  # per calling thread: the requests this call has sent
        self.cap = DEFAULT_OUTPUT_CAP

    def _sdk(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai  # lazy: ~0.5 s, paid only by runs with an LLM target or judge

                http_client = openai.DefaultHttpxClient(
                    event_hooks={"request": [self._on_request], "response": [self._on_response]}
                )
                self._client = openai.OpenAI(
                    api_key=self._key,
                    base_url=self.config.base_url,
                    timeout=self.config.timeout_seconds,
                    max_retries=self.config.max_retries,
                    default_headers=self.config.headers or None,
                    http_client=http_client,
                )
            return self._client

    def _on_request(self, request: Any) -> None:
        """Every request the SDK sends (first try and retries) on this thread: counted; asks for
        an uncompressed reply, so that the cap bounds the memory a reply takes."""
        self._calls.attempts = getattr(self._calls, "attempts", 0) + 1
        request.headers["accept-encoding"] = "identity"

    def _on_response(self, response: Any) -> None:
        """Before the body is read: refuse a compressed or an announced-too-large reply, and
        cap the body as it is read (a server may send no content-length)."""
        where = self.config.base_url or "the OpenAI API"
        too_large = f"the reply from {where} is larger than the {self.cap // (1024 * 1024)} MB cap"
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise ReplyRefused(
                f"the reply from {where} is compressed (content-encoding: {_snippet(encoding, 40)}) "
                "though agentv asked for none"
            )
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.cap:
            raise ReplyRefused(too_large)
        response.stream = _capped_stream(response.stream, self.cap, too_large)

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        config = self.config
        try:
            wire = to_openai(self._with_system(messages))
        except (OSError, ValueError) as exc:  # an image unreadable or over its cap since the load
            return ChatReply(None, self.redact(str(exc)))
        request: dict[str, Any] = {"model": config.model, "messages": wire}
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.max_tokens is not None:
            request["max_tokens"] = config.max_tokens
        sdk = self._sdk()
        started = time.monotonic()
        self._calls.attempts = 0
        try:
            raw = sdk.chat.completions.with_raw_response.create(**request)
            body = raw.http_response.content  # read already, within the cap
        except Exception as exc:  # noqa: BLE001 - every failure becomes a one-line error
            elapsed = (time.monotonic() - started) * 1000
            attempts = max(self._calls.attempts, 1)
            return ChatReply(
                None,
                self.redact(self._describe(exc, attempts)),
                duration_ms=elapsed,
                model=config.model,
                attempts=attempts,
            )
        elapsed = (time.monotonic() - started) * 1000
        attempts = max(self._calls.attempts, 1)
        data, problem = read_completion(body)
        if data is None:
            return ChatReply(None, self.redact(problem or ""), None, elapsed, config.model, attempts)
        usage = _usage(data.get("usage"))
        model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else config.model
        choices = data["choices"]
        if not choices:
            return ChatReply(None, "the endpoint returned no choices", usage, elapsed, model, attempts)
        text = choices[0]["message"].get("content")
        if not text:
            reason = choices[0].get("finish_reason")
            shown = _snippet(reason, 40) if isinstance(reason, str) else reason
            return ChatReply(
                None, f"the model returned no text (finish_reason: {shown})", usage, elapsed, model, attempts
            )
        return ChatReply(text, None, usage, elapsed, model, attempts)

    def _with_system(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        prompt = self.config.system_prompt
        if prompt and not any(m.role == "system" for m in messages):
            return [ChatMessage("system", [prompt]), *messages]
        return messages

    def _describe(self, exc: Exception, attempts: int) -> str:
        """One line for a failed call; `attempts` is the number of requests really sent."""
        import openai

        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        where = self.config.base_url or "the OpenAI API"
        if isinstance(exc, ReplyRefused):
            return f"{exc}{tries}"
        if isinstance(exc, openai.APITimeoutError):
            return f"no reply within {self.config.timeout_seconds:g}s from {where}{tries}"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            return f"could not connect to {where}{tries}: {cause or exc}"
        if isinstance(exc, openai.APIStatusError):
            return f"HTTP {exc.status_code} from {where}{tries}: {_status_message(exc)}"
        return f"{type(exc).__name__}: {exc}"


@functools.cache
def _capped_class() -> type[_CappedStream]:
    """`_CappedStream` as an httpx SyncByteStream (httpx checks the type); built on first use so
    that httpx is imported only by runs that call an endpoint."""
    import httpx2

    return type("CappedStream", (_CappedStream, httpx2.SyncByteStream), {})


def _capped_stream(stream: Any, cap: int, too_large: str) -> Any:
    return _capped_class()(stream, cap, too_large)


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
    """Token counts from a completion's `usage` object; a count that is not a whole number
    of tokens (a string, a float, a negative) is left out."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details")
    data = {
        "input": usage.get("prompt_tokens"),
        "output": usage.get("completion_tokens"),
        "cached": details.get("cached_tokens") if isinstance(details, dict) else None,
    }
    return {k: v for k, v in data.items() if _count(v)} or None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
