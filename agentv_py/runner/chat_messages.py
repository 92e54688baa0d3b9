"""What a model target or judge is sent: a case as chat messages (its files inlined, its images as
data), in OpenAI's shape; the API key it sends; token usage as AgentV recorded it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentv_py.chat import ChatMessage
from agentv_py.errors import TargetError
from agentv_py.media import ImageRef
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.models.targets import ModelTarget
from agentv_py.prepared import PreparedCase
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP

NO_KEY = "no-key-required"  # sent to servers that need none (most local ones)


def case_messages(case: PreparedCase) -> list[ChatMessage]:
    """The case's input messages as chat messages: text as is, structured content as JSON,
    `file` items inlined as text, `image`/`image_url` items as images (in the dataset's order).
    Tool calls (a case replaying an agent's turns) follow as a `[tool calls]` text part holding
    their JSON: the chat API's own tool-call fields would need tool definitions the case lacks.
    Guideline files (`.agentv/config.yaml`) are not inlined where they stand: as in AgentV's lm mode,
    their text goes into one `[[ ## Guidelines ## ]]` block that opens the first system message
    (a new one when there is none), and a message left empty without them is dropped."""
    files = iter(case.files)
    images = iter(case.images)
    file_item = -1
    messages: list[ChatMessage] = []
    for message in case.case.input_messages:
        parts: list[str | ImageRef] = []
        skipped = False  # a guideline file was left out of this message
        content = message.content
        if content is None:
            pass  # a tool-use-only message: its calls follow
        elif isinstance(content, str):
            parts.append(content)
        elif message.items:
            for item in message.items:
                if item.type == "text":
                    parts.append(item.value)
                elif item.type == "file":
                    file_item += 1
                    if file_item in case.guideline_items:
                        skipped = True
                    else:
                        parts.append(_inline_file(next(files)))
                else:
                    parts.append(next(images))
        else:
            parts.append(json.dumps(content, indent=2, ensure_ascii=False))
        if message.tool_calls:
            parts.append("[tool calls]\n" + json.dumps(message.tool_calls_value, indent=2, ensure_ascii=False))
        role = message.role
        if role == "tool":  # chat APIs need a tool_call_id for tool messages; send it as context
            role, parts = "user", ["[tool output]", *parts]
        if parts or not skipped:
            messages.append(ChatMessage(role, parts))
    guidelines = case.guidelines()
    if guidelines:
        block = f"[[ ## Guidelines ## ]]\n\n{guidelines}"
        if messages and messages[0].role == "system":
            messages[0] = ChatMessage("system", [block, *messages[0].parts])
        else:
            messages.insert(0, ChatMessage("system", [block]))
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


def api_key(config: ModelTarget) -> str:
    """The key to send: `api_key`, else the provider's environment variables (`key_env`, in order),
    else (servers of one's own, at `base_url`) a placeholder. Raises TargetError when the
    provider's own API would be called without a key."""
    key = config.api_key or next((os.environ[var] for var in config.key_env if os.environ.get(var)), None)
    if not key and not config.key_optional:
        names = config.key_env
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        raise TargetError(
            f"target '{config.name}' has no API key: set api_key (e.g. api_key: ${{{{ {names[0]} }}}}) "
            f"or the {listed} environment variable",
            hint="local OpenAI-compatible servers need only base_url" if isinstance(config, OpenAITarget) else None,
        )
    return key or NO_KEY


def image_data(image: ImageRef) -> tuple[str, str]:
    """(media type, base64 data) of a local file or a data URI, for providers that take images
    inline (a URL is the caller's to handle)."""
    uri = image.url()  # a file is read here (at most MAX_IMAGE_BYTES)
    header, _, payload = uri.partition(",")
    return image.media_type or header.removeprefix("data:").split(";", 1)[0], payload


def token_usage(input_tokens: Any, output_tokens: Any, cached: Any = None) -> dict[str, Any] | None:
    """{input, output, cached} from a provider's counts; a count that is not a whole number of
    tokens (a string, a float, a negative) is left out."""
    data = {"input": input_tokens, "output": output_tokens, "cached": cached}
    return {k: v for k, v in data.items() if _count(v)} or None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
