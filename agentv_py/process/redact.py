"""Keeping secrets out of every message we show."""

from __future__ import annotations

import re

# Key-shaped tokens (OpenAI "sk-...", "sk-proj-...") can be masked even when a server echoes a key
# we did not substitute ourselves.
KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}")


class Redactor:
    """Removes substituted secrets (`${{ VAR }}` values, API keys) from any text we are about to
    show; with `mask_keys`, key-shaped tokens too (`sk-***`)."""

    def __init__(self, secrets: list[str], mask_keys: bool = False) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
        self._mask_keys = mask_keys

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return KEY_SHAPED.sub("sk-***", text) if self._mask_keys else text
