"""`skill_trigger`: did the target invoke a skill? AgentV v4.42.4's `skill-trigger` grader
(graders/skill-trigger.ts), its detection and its texts word for word.

Every tool call is scanned, in order, until one shows the skill:

- a `Skill` call (the name in any case) whose `input.skill`, as JavaScript's `String()` reads it,
  contains the skill's name;
- a `Read` call (any case) whose `input.file_path` (else `input.path`) contains `skills/<name>/`;
- any call whose `output` (a string as it is, anything else as its JSON text) contains `skills/<name>/`.

An input that is not an object has no `skill`, `file_path` or `path`. Values come from the target
and are data: nested, cyclic or huge values are read without recursion, and a value quoted in a
hit or miss is cut to `QUOTE_CHARS` characters with control characters escaped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from typing import Any

from agentv_py.scoring.trace import Outcome, ToolCall, js_number

QUOTE_CHARS = 200  # a longer value quoted in a text is cut, with `...`


def _number(value: int | float, as_json: bool) -> str:
    if as_json and isinstance(value, float) and not math.isfinite(value):
        return "null"
    return js_number(value)  # a huge integer shortened: a number holds no path anyway


class _Text:
    """A piece of text waiting on the stack (a separator, a key, a closing bracket)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _container(item: dict[Any, Any] | list[Any] | tuple[Any, ...], as_json: bool, stack: list[Any]) -> str:
    """Push a container's entries (last first) with their separators; the text that opens it."""
    if isinstance(item, dict):
        stack.append(_Text("}"))
        entries = list(item.items())
        for k in range(len(entries) - 1, -1, -1):
            key, element = entries[k]
            stack.append(element)
            stack.append(_Text(("," if k else "") + _json_string(str(key)) + ":"))
        return "{"
    stack.append(_Text("]" if as_json else ""))
    elements = list(item)
    for k in range(len(elements) - 1, -1, -1):
        stack.append(elements[k])
        if k:
            stack.append(_Text(","))
    return "[" if as_json else ""


def _pieces(value: Any, as_json: bool) -> Iterator[str]:
    """The text of `value`, a piece at a time and without recursion: JavaScript's `JSON.stringify`
    (`as_json`) or `String()` (arrays joined by `,`, objects `[object Object]`, null empty). A
    container met a second time (a cycle or a shared one, which JSON never gives) is null / empty,
    so the time is linear in the value's size."""
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            yield item.text
        elif item is None:
            yield "null" if as_json else ""
        elif isinstance(item, bool):
            yield "true" if item else "false"
        elif isinstance(item, str):
            yield _json_string(item) if as_json else item
        elif isinstance(item, int | float):
            yield _number(item, as_json)
        elif isinstance(item, dict | list | tuple):
            if id(item) in seen:
                yield "null" if as_json else ""
            elif isinstance(item, dict) and not as_json:
                yield "[object Object]"
            else:
                seen.add(id(item))
                yield _container(item, as_json, stack)
        else:
            yield _json_string(str(item)) if as_json else str(item)


def _json_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def js_string(value: Any) -> str:
    """JavaScript's `String(value ?? '')`."""
    return value if isinstance(value, str) else "".join(_pieces(value, as_json=False))


def js_json(value: Any) -> str:
    """JavaScript's `JSON.stringify(value)` (compact), for the JSON values a target reports."""
    return "".join(_pieces(value, as_json=True))


def quoted(text: str) -> str:
    """A target's value as a hit or miss shows it: as it is, unless long (cut, `...`) or holding
    control characters (escaped, so a value can neither forge another line nor drive a terminal)."""
    cut = text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "..."
    if cut.isprintable():
        return cut
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in cut)


def find_skill(skill: str, calls: Sequence[ToolCall]) -> str | None:
    """The evidence that `skill` was invoked (AgentV's text), or None."""
    skill_path = f"skills/{skill}/"
    for call in calls:
        tool = call.name.lower()
        given: dict[Any, Any] = call.input if isinstance(call.input, dict) else {}
        if tool == "skill":
            argument = js_string(given.get("skill"))
            if skill in argument:
                return f'Skill tool invoked with skill="{quoted(argument)}"'
        elif tool == "read":
            path = given.get("file_path")
            file_path = js_string(path if path is not None else given.get("path"))
            if skill_path in file_path:
                return f"Read tool loaded skill file: {quoted(file_path)}"
        if call.output is not None:
            output = call.output if isinstance(call.output, str) else js_json(call.output)
            if skill_path in output:
                return f'Tool "{quoted(call.name)}" output referenced skill file for "{skill}"'
    return None


def skill_trigger(skill: str, should_trigger: bool, calls: Sequence[ToolCall]) -> Outcome:
    """Score 1 when the skill was invoked iff `should_trigger`, else 0: one hit (the evidence, or
    `Skill "X" correctly did not trigger`) or one miss (`Skill "X" not found in N tool call(s)`,
    `No tool calls recorded`, or the evidence that it triggered)."""
    evidence = find_skill(skill, calls)
    triggered = evidence is not None
    details = {"skill": skill, "should_trigger": should_trigger, "triggered": triggered, "tool_calls": len(calls)}
    if triggered == should_trigger:
        hit = evidence if evidence is not None else f'Skill "{skill}" correctly did not trigger'
        return Outcome(1.0, hits=[hit], details=details)
    if evidence is not None:
        return Outcome(0.0, misses=[evidence], details=details)
    miss = f'Skill "{skill}" not found in {len(calls)} tool call(s)' if calls else "No tool calls recorded"
    return Outcome(0.0, misses=[miss], details=details)
