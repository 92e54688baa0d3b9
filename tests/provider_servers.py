"""Stand-ins for the Azure OpenAI, Anthropic and Gemini APIs on 127.0.0.1: `ChatServer`
(tests/chat_server.py) writing each provider's reply format, and the targets that call them.

Azure: `POST /openai/deployments/<deployment>/chat/completions?api-version=...` (`api-key`
header), the chat-completions format. Anthropic: `POST /v1/messages` (`x-api-key`,
`anthropic-version`). Gemini: `POST /v1beta/models/<model>:generateContent` (`x-goog-api-key`).
A scripted `text(...)` reply's usage is given in OpenAI's names and written in each provider's.
"""

from __future__ import annotations

from typing import Any

from tests.chat_server import ChatServer, Recorded, Reply, openai_body

PROVIDERS = ("azure", "anthropic", "gemini")
KEY = "sk-provider-SECRET-0123456789"


def anthropic_body(reply: Reply, request: Recorded) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": request.body.get("model", "m"),
        "content": [{"type": "text", "text": reply.content}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.usage["prompt_tokens"],
            "output_tokens": reply.usage["completion_tokens"],
        },
    }


def gemini_body(reply: Reply, request: Recorded) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": reply.content}]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": reply.usage["prompt_tokens"],
            "candidatesTokenCount": reply.usage["completion_tokens"],
            "totalTokenCount": sum(reply.usage.values()),
        },
        "modelVersion": request.path.split("/models/", 1)[-1].split(":", 1)[0],
    }


WIRES = {"azure": openai_body, "anthropic": anthropic_body, "gemini": gemini_body}


def server_for(provider: str) -> ChatServer:
    """A scripted server speaking `provider`'s format (use it as a context manager)."""
    return ChatServer(WIRES[provider])


def target_config(provider: str, server: ChatServer, **extra: Any) -> dict[str, Any]:
    """A targets-file entry for `provider` that calls `server` with KEY; `extra` keys win."""
    base: dict[str, Any] = {"name": provider, "provider": provider, "api_key": KEY}
    if provider == "azure":
        base.update(endpoint=server.root_url, deployment="dep-1")
    elif provider == "anthropic":
        base.update(model="claude-test", base_url=server.root_url)
    else:
        base.update(model="gemini-test", base_url=server.root_url)
    return {**base, **extra}


def expected_path(provider: str, version: str = "2024-12-01-preview") -> str:
    """The path (and query) each provider's SDK posts to, with target_config's names."""
    return {
        "azure": f"/openai/deployments/dep-1/chat/completions?api-version={version}",
        "anthropic": "/v1/messages",
        "gemini": "/v1beta/models/gemini-test:generateContent",
    }[provider]
