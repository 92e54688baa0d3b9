"""Keeping secrets out of everything agentv writes: rows, terminal output and messages.

A secret is the value of every `${{ VAR }}` a target or judge target uses and every API key
agentv sends. `Redactor` masks each secret as `***` in the forms an echo is likely to take:

- the value itself;
- JSON-escaped, as it appears inside a JSON string (with and without `\\uXXXX` for non-ASCII),
  so a target or judge that echoes the secret inside JSON text is caught too;
- URL-encoded (`%XX`, and `+` for spaces), as in an echoed query string;
- base64 (standard and URL-safe alphabets), at each of the three byte alignments, so the secret is
  found inside a longer encoded string such as an echoed `Authorization: Basic base64(user:secret)`
  header. Only the characters that depend on the secret alone are matched.

Messages cut long texts (a stderr tail keeps its end, a quoted value its start), which can cut a
secret in two. So the start of a secret (or of its JSON-escaped form) at least 8 characters long,
and its end as long, are masked too wherever they occur: `...Z9xK2mQ4` left of a cut stderr tail
or `"sk-live-AbC...` in a quoted value shows neither part. A stretch from the middle of a secret,
cut on both sides, is not masked; `reveals` finds one, for messages that quote configuration values.

Values shorter than 4 characters are never masked: such values (a port digit, `on`, a region code)
are not credentials, and masking them would garble every answer and number in the results (masking
`1` would rewrite every score). The base64 forms are matched only for secrets of at least 8
characters: a shorter secret's encoding is short enough to occur by chance in encoded data such as
an image.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"
MIN_SECRET_LENGTH = 4  # shorter values are not masked (see the module docstring)
MIN_BASE64_LENGTH = 8  # shorter secrets are not searched for in base64
FRAGMENT_LENGTH = 8  # a secret's start or end this long is masked; `reveals` looks for stretches this long

# Key-shaped tokens (OpenAI "sk-...", "sk-proj-...") can be masked even when a server echoes a key
# we did not substitute ourselves.
KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}")


def secret_forms(secret: str) -> set[str]:
    """The texts that show `secret`: itself and its JSON-escaped, URL-encoded and base64 forms."""
    forms = {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
    }
    data = secret.encode("utf-8", "surrogatepass")
    if len(secret) >= MIN_BASE64_LENGTH:
        for pad in range(3):  # the secret may start at any byte offset of the encoded data
            encoded = base64.b64encode(b"\0" * pad + data).decode("ascii")
            # character i holds bits [6i, 6i + 6): keep those made of the secret's bits only
            core = encoded[-(-8 * pad // 6) : (8 * (pad + len(data))) // 6]
            forms.add(core)
            forms.add(core.replace("+", "-").replace("/", "_"))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Redactor:
    """Masks secrets (`${{ VAR }}` values, API keys) in any text or JSON data we are about to
    write or show; with `mask_keys`, key-shaped tokens too (`sk-***`)."""

    def __init__(self, secrets: Iterable[str], mask_keys: bool = False) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        forms: set[str] = set()
        for secret in self._secrets:
            forms |= secret_forms(secret)
        # longest first, so that a secret containing another is masked whole
        self._forms = sorted(forms, key=lambda form: (-len(form), form))
        # the forms a cut quote shows the start or end of: the value, as is and JSON-escaped
        cut: set[str] = set()
        for secret in self._secrets:
            cut |= {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
        self._cut_forms = sorted((f for f in cut if len(f) > FRAGMENT_LENGTH), key=lambda form: (-len(form), form))
        # what any of the above looks like inside a JSON string (`in_json`)
        anchors = {*self._forms, *(c[:FRAGMENT_LENGTH] for c in self._cut_forms)}
        anchors |= {c[-FRAGMENT_LENGTH:] for c in self._cut_forms}
        self._json_anchors = sorted({json.dumps(a, ensure_ascii=False)[1:-1] for a in anchors})
        self._mask_keys = mask_keys

    @property
    def active(self) -> bool:
        """Does this redactor mask anything at all? (No secrets: callers can skip the work.)"""
        return bool(self._forms) or self._mask_keys

    def __call__(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, MASK)
        for form in self._cut_forms:
            text = _mask_ends(text, form)
        return KEY_SHAPED.sub("sk-***", text) if self._mask_keys else text

    def in_json(self, text: str) -> bool:
        """Could the data that `text` is the JSON of (strings escaped as `json.dumps` does, non-ASCII
        as is) need masking? False means `data` would return it unchanged: a fast check (a few
        substring searches in one string) before the walk."""
        return self._mask_keys or any(anchor in text for anchor in self._json_anchors)

    def data(self, value: Any) -> Any:
        """`value` (JSON-like data: dicts, lists, strings, numbers) with every string masked,
        dict keys included, at any depth (no recursion: any nesting is fine). Returns `value`
        itself when nothing needed masking, else a copy (the input is never modified).

        Two keys that become equal once masked are both kept: the later one gets ` (2)`, ` (3)`...
        """
        if not self.active:
            return value
        changed = False
        holder: list[Any] = [None]
        stack: list[tuple[Any, Any, Any]] = [(holder, 0, value)]  # (container, slot, node to put there)
        while stack:
            parent, slot, node = stack.pop()
            if isinstance(node, str):
                masked = self(node)
                changed = changed or masked != node
                parent[slot] = masked
            elif isinstance(node, dict):
                copy: dict[Any, Any] = {}
                parent[slot] = copy
                for key, child in node.items():
                    if isinstance(key, str):
                        masked_key = self(key)
                        if masked_key != key:
                            changed = True
                            masked_key = _unique(masked_key, copy, node)
                        key = masked_key
                    copy[key] = None  # keeps the key order; the value is filled in below
                    stack.append((copy, key, child))
            elif isinstance(node, list | tuple):
                items: list[Any] = [None] * len(node)
                parent[slot] = items
                stack.extend((items, index, child) for index, child in enumerate(node))
            else:
                parent[slot] = node
        return holder[0] if changed else value

    def reveals(self, text: str) -> bool:
        """Does `text` hold a secret or any 8 consecutive characters of one (a truncated quote)?"""
        for secret in self._secrets:
            width = min(FRAGMENT_LENGTH, len(secret))
            if any(secret[i : i + width] in text for i in range(len(secret) - width + 1)):
                return True
        return False


def _unique(key: str, taken: dict[Any, Any], original: dict[Any, Any]) -> str:
    """`key`, or `key (n)` for the smallest n >= 2 that is free in both dicts."""
    if key not in taken and key not in original:
        return key
    n = 2
    while f"{key} ({n})" in taken or f"{key} ({n})" in original:
        n += 1
    return f"{key} ({n})"


def _mask_ends(text: str, form: str) -> str:
    """`text` with every stretch that starts like `form` or ends like it (at least FRAGMENT_LENGTH
    characters matching) masked."""
    head, tail = form[:FRAGMENT_LENGTH], form[-FRAGMENT_LENGTH:]
    if head not in text and tail not in text:  # the usual case: two fast searches
        return text
    spans: list[tuple[int, int]] = []
    start = text.find(head)
    while start != -1:  # a start of the secret, as long as it goes on matching
        end = start + FRAGMENT_LENGTH
        while end < len(text) and end - start < len(form) and text[end] == form[end - start]:
            end += 1
        spans.append((start, end))
        start = text.find(head, end)
    stop = text.find(tail)
    while stop != -1:  # an end of the secret, as far back as it goes on matching
        begin, stop = stop, stop + FRAGMENT_LENGTH
        while begin > 0 and stop - begin < len(form) and text[begin - 1] == form[len(form) - (stop - begin) - 1]:
            begin -= 1
        spans.append((begin, stop))
        stop = text.find(tail, stop)
    parts: list[str] = []
    done = 0
    for begin, end in sorted(spans):  # overlapping stretches become one mask
        if begin >= done:
            parts += [text[done:begin], MASK]
        done = max(done, end)
    parts.append(text[done:])
    return "".join(parts)
