"""Google's Gemini API (`provider: gemini`) through the official `google-genai` SDK: `POST
/v1beta/models/<model>:generateContent` with the `x-goog-api-key` header. The SDK's retry options
take every one of AgentV's retry keys. What every provider shares is `ModelClient`'s."""

from __future__ import annotations

import base64
from typing import Any

from agentv_py.chat import ChatMessage
from agentv_py.models.model_targets import GeminiTarget
from agentv_py.runner.chat_messages import image_data, token_usage
from agentv_py.runner.llm import ModelClient, read_json_object, retry_status_codes, snippet


def to_gemini(messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """(the system instruction, the contents) in the Gemini format: roles `user` and `model`,
    text parts and `inline_data` images. An image URL is refused: Gemini takes only images it is
    sent (agentv does not fetch URLs)."""
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            if message.images:
                raise ValueError("the gemini provider takes no images in a system message; put them in a user message")
            system.append(message.text)
            continue
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, str):
                parts.append({"text": part})
            elif part.source == "url":
                raise ValueError(
                    f"image {part.name} is a URL, which the gemini provider cannot send "
                    "(agentv does not fetch URLs); give it as a local file or a data URI"
                )
            else:
                media_type, data = image_data(part)
                parts.append({"inline_data": {"mime_type": media_type, "data": base64.b64decode(data)}})
        contents.append({"role": "model" if message.role == "assistant" else "user", "parts": parts})
    return ("\n\n".join(system) if system else None), contents


class GeminiClient(ModelClient):
    """One Gemini model target (or judge)."""

    label = "the Gemini API"
    config: GeminiTarget

    def __init__(self, config: GeminiTarget, secrets: list[str] | None = None) -> None:
        super().__init__(config, secrets)

    def _make_sdk(self) -> Any:
        import httpx2  # the SDK's own HTTP client library, with our hooks
        from google import genai  # lazy: paid only by runs with a gemini target or judge
        from google.genai import types

        config = self.config
        retry: dict[str, Any] = {"attempts": config.max_retries + 1, "http_status_codes": retry_status_codes(config)}
        if config.retry_initial_delay_ms is not None:
            retry["initial_delay"] = config.retry_initial_delay_ms / 1000
        if config.retry_max_delay_ms is not None:
            retry["max_delay"] = config.retry_max_delay_ms / 1000
        if config.retry_backoff_factor is not None:
            retry["exp_base"] = config.retry_backoff_factor
        # The SDK adds a random 0..jitter seconds; a quarter of the first delay, near AgentV's ±25 %.
        retry["jitter"] = retry.get("initial_delay", 1.0) / 4
        options = types.HttpOptions(
            base_url=config.base_url,
            timeout=max(int(config.timeout_seconds * 1000), 1),  # milliseconds
            retry_options=types.HttpRetryOptions(**retry),
            httpx_client=httpx2.Client(event_hooks=self._event_hooks()),
        )
        return genai.Client(api_key=self._key, vertexai=False, http_options=options)

    def _request(self, messages: list[ChatMessage]) -> dict[str, Any]:
        config = self.config
        system, contents = to_gemini(messages)
        settings: dict[str, Any] = {
            "should_return_http_response": True,  # the raw body: we read it ourselves
            "automatic_function_calling": {"disable": True},
        }
        if system:
            settings["system_instruction"] = system
        if config.temperature is not None:
            settings["temperature"] = config.temperature
        if config.max_output_tokens is not None:
            settings["max_output_tokens"] = config.max_output_tokens
        return {"model": config.model, "contents": contents, "config": settings}

    def _send(self, sdk: Any, request: dict[str, Any]) -> bytes:
        response = sdk.models.generate_content(**request)
        raw = response.sdk_http_response
        body = raw.body if raw is not None else None
        return (body or "").encode("utf-8")

    def _read(self, body: bytes) -> tuple[dict[str, Any] | None, str | None]:
        return read_json_object(body, "a Gemini response")

    def _answer(self, data: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any] | None, str | None]:
        usage = data.get("usageMetadata")
        counts = None
        if isinstance(usage, dict):
            output, thoughts = usage.get("candidatesTokenCount"), usage.get("thoughtsTokenCount")
            # Thinking tokens are output tokens, as OpenAI counts reasoning tokens.
            if isinstance(output, int) and isinstance(thoughts, int) and thoughts > 0:
                output += thoughts
            counts = token_usage(usage.get("promptTokenCount"), output, usage.get("cachedContentTokenCount"))
        model = data.get("modelVersion") if isinstance(data.get("modelVersion"), str) else None
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
            feedback = data.get("promptFeedback")
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            shown = snippet(reason, 40) if isinstance(reason, str) else reason
            return None, f"the model returned no candidates (blockReason: {shown})", counts, model
        first = candidates[0]
        content = first.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        texts = [
            part["text"]
            for part in (parts if isinstance(parts, list) else [])
            if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")
        ]
        reason = first.get("finishReason")
        shown = snippet(reason, 40) if isinstance(reason, str) else reason
        return "".join(texts), f"the model returned no text (finishReason: {shown})", counts, model

    def _describe_error(self, exc: Exception, tries: str) -> str | None:
        import httpx2
        from google.genai import errors

        where = self.where
        if isinstance(exc, errors.APIError):
            message = exc.message or exc.status or ""
            return f"HTTP {exc.code} from {where}{tries}: {str(message).strip().replace(chr(10), ' ')[:300]}"
        if isinstance(exc, httpx2.TimeoutException):
            return f"no reply within {self.config.timeout_seconds:g}s from {where}{tries}"
        if isinstance(exc, httpx2.TransportError):
            return f"could not connect to {where}{tries}: {exc}"
        return None
