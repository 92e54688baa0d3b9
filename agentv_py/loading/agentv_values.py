"""Values of AgentV v4.42's cases as AgentV reads them: the `input` and `expected_output`
shorthands, `{{ name }}` references filled from a case's `vars`, the suite's default name; and
the strings of a parsed file that hold a marker (`strings_containing`); a case's `metadata`."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_TEMPLATE_VAR = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


def input_messages(value: Any) -> list[Any]:
    """AgentV's `input` shorthands: text is one user message, a mapping without `role` one user
    message with that content, a message is itself; a list is a list of messages."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, dict):
        return [value] if "role" in value else [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else [value]


def expected_messages(value: Any) -> Any:
    """AgentV's `expected_output` shorthands: a message (a mapping with `role`) is a list of one."""
    if isinstance(value, dict) and "role" in value:
        return [value]
    return value


def render(value: Any, variables: dict[str, Any] | None) -> Any:
    """A case's `{{ name }}` references filled from its `vars` (AgentV's interpolateTemplateVars):
    a string that is one reference takes the value itself, others the value as text; names not in
    `vars` are left as written; dotted names reach into mappings."""
    if not variables or value is None:
        return value
    if isinstance(value, str):
        whole = _TEMPLATE_VAR.fullmatch(value)
        if whole is not None:
            found = _lookup(variables, whole.group(1))
            return value if found is _MISSING else found
        return _TEMPLATE_VAR.sub(lambda m: _text(_lookup(variables, m.group(1)), m.group(0)), value)
    if isinstance(value, list):
        return [render(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: render(item, variables) for key, item in value.items()}
    return value


_MISSING = object()


def _lookup(variables: dict[str, Any], name: str) -> Any:
    current: Any = variables
    for part in name.split("."):
        if not isinstance(current, dict) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _text(value: Any, written: str) -> str:
    if value is _MISSING:
        return written
    if isinstance(value, str):
        return value
    return json.dumps(value)


def default_name(path: Path) -> str:
    """AgentV's suite name for a file without `name`: the file name less `.eval.yaml` / `.yaml`."""
    name = re.sub(r"\.eval\.ya?ml$", "", path.name, flags=re.IGNORECASE)
    return re.sub(r"\.ya?ml$", "", name, flags=re.IGNORECASE) or "eval"


def strings_containing(
    value: Any, marker: str, where: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path, text) of every string under `value` (a parsed file, written at `where`) that holds
    `marker`, walked without recursion."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            stack.extend((item, (*path, key)) for key, item in node.items())
        elif isinstance(node, list):
            stack.extend((item, (*path, j)) for j, item in enumerate(node))
        elif isinstance(node, str) and marker in node:
            yield path, node


def agentv_metadata(value: Any) -> Any:
    """A v4.42 case's `metadata` (AgentV: any object) as this tool's case metadata: a text, number,
    true/false or null kept as it is, any other value (a list, a mapping, a non-finite number) as
    its JSON text, so `--by` can still slice by it; keys as texts. Not a mapping: returned as is,
    for the case model to refuse with its message."""
    if not isinstance(value, dict):
        return value
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, (list, dict)) or (isinstance(item, float) and not math.isfinite(item)):
            item = json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)
        elif not isinstance(item, (str, int, float, bool)) and item is not None:
            item = str(item)  # a date YAML read
        kept[str(key)] = item
    return kept
