"""Model providers as targets and judges, through their official SDKs: what every provider's
client shares (`ModelClient`), and OpenAI-compatible chat endpoints (`OpenAIClient`, the `openai`
SDK). Azure, Anthropic and Gemini configure or extend it in `runner/azure.py`, `anthropic.py`,
`gemini.py`.

The SDK does the HTTP work, including retries with exponential backoff (and `Retry-After`) on
408/409/429/5xx, timeouts and connection errors. We count the attempts really made (every request
the SDK sends goes through our hook), cap a reply at `DEFAULT_OUTPUT_CAP` like a cli target's
stdout, read the body ourselves (strict JSON, any shape described in words), record token usage
and latency, and turn every failure into one line that never contains the API key.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from typing import Any, ClassVar

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.models.model_targets import ProviderTarget
from agentv_py.models.targets import ModelTarget
from agentv_py.process.redact import Redactor
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP
from agentv_py.runner.chat_messages import (
    api_key,
    to_openai,
    token_usage,
)
from agentv_py.scoring.jsontext import TOO_DEEP, loads


def retry_delay(config: ProviderTarget, retry: int) -> float:
    """Seconds before retry number `retry` (0 for the first), as AgentV waited: the initial delay
    times the factor per retry, at most the maximum, times a jitter in [0.75, 1.25)."""
    initial = 1000.0 if config.retry_initial_delay_ms is None else config.retry_initial_delay_ms
    ceiling = 60000.0 if config.retry_max_delay_ms is None else config.retry_max_delay_ms
    factor = 2.0 if config.retry_backoff_factor is None else config.retry_backoff_factor
    delay = min(ceiling, initial * factor ** min(retry, 60))
    return delay * (0.75 + random.random() / 2) / 1000


NEVER_RETRIED = (401, 403)  # as AgentV: a bad key or a refused one is not retried
DEFAULT_RETRY_STATUS_CODES = (500, 408, 429, 502, 503, 504)  # AgentV's, when the file names none


def retry_status_codes(config: ProviderTarget) -> list[int]:
    """The HTTP statuses retried when the file sets a retry policy: its list (AgentV's by
    default), never 401 or 403."""
    codes = DEFAULT_RETRY_STATUS_CODES if config.retry_status_codes is None else config.retry_status_codes
    return [code for code in codes if code not in NEVER_RETRIED]


class ReplyRefused(Exception):
    """A reply agentv will not read (over the cap, or compressed though none was asked for);
    raised inside the HTTP client, so the SDK neither retries nor wraps it."""


class _CappedStream:
    """A response body stream that stops with ReplyRefused (`refused`, a subclass an SDK lets
    through) once more than `cap` bytes came."""

    def __init__(self, stream: Any, cap: int, too_large: str, refused: type[ReplyRefused] = ReplyRefused) -> None:
        self._stream, self._cap, self._too_large, self._seen, self._refused = stream, cap, too_large, 0, refused

    def __iter__(self) -> Any:
        for chunk in self._stream:
            self._seen += len(chunk)
            if self._seen > self._cap:
                raise self._refused(self._too_large)
            yield chunk

    def close(self) -> None:
        self._stream.close()


def snippet(text: str, limit: int = 80) -> str:
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


def read_json_object(body: bytes, noun: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the body as a JSON object, None) or (None, why) in words: empty, not JSON (with its first
    80 characters), nested too deeply, or not an object (`noun` says what it should be)."""
    text = body.decode("utf-8", errors="replace")
    if not text.strip():
        return None, "the endpoint returned an empty body"
    try:
        data = loads(text)
    except ValueError as exc:
        if str(exc) == TOO_DEEP:
            return None, "the endpoint returned JSON nested too deeply to read"
        return None, f"the endpoint returned a body that is not JSON ({snippet(text.strip())})"
    if not isinstance(data, dict):
        return None, f"the endpoint returned JSON that is not {noun} ({_kind(data)}, not an object)"
    return data, None


def read_completion(body: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the completion as JSON, None) or (None, why) for a chat-completions body, in words: not
    JSON (with its first 80 characters), nested too deeply, or JSON of the wrong shape."""
    data, problem = read_json_object(body, "a chat completion")
    if data is None:
        return None, problem
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


class ModelClient:
    """One model target's client, shared by all workers (the SDK clients are thread-safe),
    created on first use so that an SDK is imported only by runs that use it. A provider says how
    to make its SDK client (`_make_sdk`, given `_http_client`), its request (`_request`), how to
    send it and get the raw body (`_send`), how to read the body (`_answer`) and its SDK's errors
    (`_describe_error`); the rest is here: attempts counted, replies capped and never compressed,
    usage and latency recorded, one-line errors with secrets masked."""

    label: ClassVar[str] = "the endpoint"  # where calls go when no base_url is set, for messages
    sdk_retries_by_headers: ClassVar[bool] = False  # a Stainless SDK: `retry_*` keys go through headers

    def __init__(self, config: ModelTarget, secrets: list[str] | None = None) -> None:
        self.name = config.name
        self.vision = config.vision
        self.config = config
        self._key = api_key(config)
        self.redact = Redactor([*(secrets or []), self._key], mask_keys=True)
        self._client: Any = None
        self._lock = threading.Lock()
        self._calls = threading.local()  # per calling thread: the requests this call has sent
        self.cap = DEFAULT_OUTPUT_CAP

    @property
    def where(self) -> str:
        """Where calls go, for messages: the base URL, else the provider's API."""
        return getattr(self.config, "base_url", None) or self.label

    def _sdk(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._make_sdk()
            return self._client

    def _make_sdk(self) -> Any:
        raise NotImplementedError

    def _request(self, messages: list[ChatMessage]) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, sdk: Any, request: dict[str, Any]) -> bytes:
        raise NotImplementedError

    def _answer(self, data: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any] | None, str | None]:
        """(text, why there is none, token usage, model) of a reply read as a JSON object."""
        raise NotImplementedError

    def _describe_error(self, exc: Exception, tries: str) -> str | None:
        """One line for an SDK's error (`tries`: " (3 attempts)" or ""), None if not the SDK's."""
        raise NotImplementedError

    def _refused(self) -> type[ReplyRefused]:
        """What the hooks raise to refuse a reply: an SDK that wraps other errors raised while
        sending (and retries them) needs a subclass of its own error type."""
        return ReplyRefused

    def _event_hooks(self) -> dict[str, list[Any]]:
        return {"request": [self._on_request], "response": [self._on_response]}

    def _on_request(self, request: Any) -> None:
        """Every request the SDK sends (first try and retries) on this thread: counted; asks for
        an uncompressed reply, so that the cap bounds the memory a reply takes."""
        self._calls.attempts = getattr(self._calls, "attempts", 0) + 1
        request.headers["accept-encoding"] = "identity"

    def _on_response(self, response: Any) -> None:
        """Before the body is read: refuse a compressed or an announced-too-large reply, and
        cap the body as it is read (a server may send no content-length)."""
        where = self.where
        too_large = f"the reply from {where} is larger than the {self.cap // (1024 * 1024)} MB cap"
        refused = self._refused()
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise refused(
                f"the reply from {where} is compressed (content-encoding: {snippet(encoding, 40)}) "
                "though agentv asked for none"
            )
        length = response.headers.get("content-length", "")
        if length.isascii() and length.isdigit() and int(length) > self.cap:
            raise refused(too_large)
        response.stream = _capped_stream(response.stream, self.cap, too_large, refused)
        if self.sdk_retries_by_headers and response.status_code >= 400:
            self._retry_headers(response)

    def _retry_headers(self, response: Any) -> None:
        """AgentV's retry keys for a Stainless SDK (openai, anthropic), through the two headers it
        obeys: `x-should-retry` (the statuses retried) and `retry-after-ms` (the backoff, unless
        the server set its own). Without those keys the SDK's own policy applies."""
        config = self.config
        if not isinstance(config, ProviderTarget) or not config.custom_retry:
            if response.status_code in NEVER_RETRIED:
                response.headers["x-should-retry"] = "false"
            return
        retry = response.status_code in retry_status_codes(config)
        response.headers["x-should-retry"] = "true" if retry else "false"
        if retry and "retry-after" not in response.headers and "retry-after-ms" not in response.headers:
            retries_taken = max(getattr(self._calls, "attempts", 1), 1) - 1
            response.headers["retry-after-ms"] = f"{retry_delay(config, retries_taken) * 1000:.3f}"

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        try:
            request = self._request(self._with_system(messages))
        except (OSError, ValueError) as exc:  # an image unreadable or over its cap since the load
            return ChatReply(None, self.redact(str(exc)))
        sdk = self._sdk()
        started = time.monotonic()
        self._calls.attempts = 0
        try:
            body = self._send(sdk, request)  # read already, within the cap
        except Exception as exc:  # noqa: BLE001 - every failure becomes a one-line error
            elapsed = (time.monotonic() - started) * 1000
            attempts = max(self._calls.attempts, 1)
            return ChatReply(
                None,
                self.redact(self._describe(exc, attempts)),
                duration_ms=elapsed,
                model=self.model,
                attempts=attempts,
            )
        elapsed = (time.monotonic() - started) * 1000
        attempts = max(self._calls.attempts, 1)
        data, problem = self._read(body)
        if data is None:
            return ChatReply(None, self.redact(problem or ""), None, elapsed, self.model, attempts)
        text, missing, usage, model = self._answer(data)
        model = model or self.model
        if not text:
            why = self.redact(missing or "the model returned no text")
            return ChatReply(None, why, usage, elapsed, model, attempts)
        return ChatReply(text, None, usage, elapsed, model, attempts)

    @property
    def model(self) -> str:
        """The model asked for (a reply may name the one that answered)."""
        return str(getattr(self.config, "model", ""))

    def _read(self, body: bytes) -> tuple[dict[str, Any] | None, str | None]:
        return read_json_object(body, "a reply")

    def _with_system(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        prompt = self.config.system_prompt
        if prompt and not any(m.role == "system" for m in messages):
            return [ChatMessage("system", [prompt]), *messages]
        return messages

    def _describe(self, exc: Exception, attempts: int) -> str:
        """One line for a failed call; `attempts` is the number of requests really sent."""
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        if isinstance(exc, ReplyRefused):
            return f"{exc}{tries}"
        return self._describe_error(exc, tries) or f"{type(exc).__name__}: {exc}"

    def _describe_stainless(self, sdk: Any, exc: Exception, tries: str) -> str | None:
        """The errors of the Stainless-generated SDKs (openai, anthropic), which share their names."""
        where = self.where
        if isinstance(exc, sdk.APITimeoutError):
            return f"no reply within {self.config.timeout_seconds:g}s from {where}{tries}"
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            return f"could not connect to {where}{tries}: {cause or exc}"
        if isinstance(exc, sdk.APIStatusError):
            return f"HTTP {exc.status_code} from {where}{tries}: {_status_message(exc)}"
        return None


class OpenAIClient(ModelClient):
    """An OpenAI-compatible chat-completions endpoint (`provider: openai`)."""

    label = "the OpenAI API"

    def _make_sdk(self) -> Any:
        import openai  # lazy: ~0.5 s, paid only by runs with an LLM target or judge

        return openai.OpenAI(base_url=getattr(self.config, "base_url", None), **self._sdk_options(openai))

    def _sdk_options(self, openai: Any) -> dict[str, Any]:
        """What the OpenAI and the Azure clients share."""
        config = self.config
        return {
            "api_key": self._key,
            "timeout": config.timeout_seconds,
            "max_retries": config.max_retries,
            "default_headers": getattr(config, "headers", None) or None,
            "http_client": openai.DefaultHttpxClient(event_hooks=self._event_hooks()),
        }

    @property
    def max_tokens(self) -> int | None:
        return getattr(self.config, "max_tokens", None)

    def _request(self, messages: list[ChatMessage]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": to_openai(messages)}
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        return request

    def _send(self, sdk: Any, request: dict[str, Any]) -> bytes:
        raw = sdk.chat.completions.with_raw_response.create(**request)
        body: bytes = raw.http_response.content
        return body

    def _read(self, body: bytes) -> tuple[dict[str, Any] | None, str | None]:
        return read_completion(body)

    def _answer(self, data: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any] | None, str | None]:
        usage = _usage(data.get("usage"))
        model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else None
        choices = data["choices"]
        if not choices:
            return None, "the endpoint returned no choices", usage, model
        text = choices[0]["message"].get("content")
        reason = choices[0].get("finish_reason")
        shown = snippet(reason, 40) if isinstance(reason, str) else reason
        return text, f"the model returned no text (finish_reason: {shown})", usage, model

    def _describe_error(self, exc: Exception, tries: str) -> str | None:
        import openai

        return self._describe_stainless(openai, exc, tries)


@functools.cache
def _capped_class() -> type[_CappedStream]:
    """`_CappedStream` as an httpx SyncByteStream (httpx checks the type); built on first use so
    that httpx is imported only by runs that call an endpoint."""
    import httpx2

    return type("CappedStream", (_CappedStream, httpx2.SyncByteStream), {})


def _capped_stream(stream: Any, cap: int, too_large: str, refused: type[ReplyRefused] = ReplyRefused) -> Any:
    return _capped_class()(stream, cap, too_large, refused)


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
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return token_usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), cached)
