"""Keys an answer invents beyond its ground truth (`field_accuracy`'s `extra_fields: penalise`):
KIE entity F1 (CORD, SROIE) counts a predicted key the document does not have as a false
positive; so does the case score with that option. Pure."""

from __future__ import annotations

import json
from typing import Any

from agentv_py.scoring.paths import is_empty


def invented(candidate: Any, expected: Any, limit: int = 1000) -> list[tuple[str, Any]]:
    """Where the answer has a key the ground truth does not (`extra_fields: penalise`): (path,
    value) of each non-empty value under such a key, found by walking both together — objects key
    by key, lists item by item — in the answer's order, at most `limit`. A key the ground truth
    has (even as null) is not invented; below an invented key nothing more is counted."""
    found: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any, Any]] = [("", candidate, expected)]
    while stack and len(found) < limit:
        path, got, want = stack.pop()
        if isinstance(got, dict) and isinstance(want, dict):
            children = []
            for key, value in got.items():
                where = _key_path(path, str(key))
                if key not in want:
                    if not is_empty(value):
                        found.append((where, value))
                else:
                    children.append((where, value, want[key]))
            stack.extend(reversed(children))
        elif isinstance(got, list) and isinstance(want, list):
            stack.extend(reversed([(f"{path}[{i}]", g, w) for i, (g, w) in enumerate(zip(got, want, strict=False))]))
    return found[:limit]


def _key_path(path: str, key: str) -> str:
    """`a.b`; a key that is empty or holds `.`, `[` or `]` as `a["x.y"]` (a label, never resolved)."""
    if not key or any(mark in key for mark in ".[]"):
        return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
    return f"{path}.{key}" if path else key
