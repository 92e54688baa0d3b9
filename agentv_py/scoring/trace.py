"""What a target's trace holds, read as AgentV read it (agentv-reference §3.4, §3.5, §5): its tool
calls (`read_tool_calls`), a summary of them, numbers printed as AgentV printed them, and the
outcome every trace check gives. Values are data: a malformed call or count is never compared, it
becomes a miss naming it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from agentv_py.scoring.match import describe_value, json_type

EXPLORATION_TOOLS: tuple[str, ...] = (
    "read",
    "grep",
    "glob",
    "search",
    "list",
    "Read",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
)
"""AgentV's DEFAULT_EXPLORATION_TOOLS: read-only tools for `execution_metrics`' exploration ratio."""

DEFAULT_EXPLORATION_TOLERANCE = 0.2

NO_TRACE = "No trace available for evaluation"
NO_DURATION = ("No duration data available in trace", "Execution duration not reported by provider")
NO_COST = ("No cost data available in trace", "Execution cost not reported by provider")
NO_TOKENS = ("No token usage data available in trace", "Token usage not reported by provider")
NO_SUMMARY = ("No trace summary available", "Execution metrics not available - no trace summary provided")


# --- numbers as AgentV printed them -------------------------------------------------------------


def js_number(value: float) -> str:
    """A number as JavaScript's `${n}` printed it: `45`, `45.5`, `0.05`, `1e-7`, `1e+21`."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 10**21:
            return str(value)
        return describe_value(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if float(value).is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"
    return text


def to_fixed(value: float, digits: int) -> str:
    """JavaScript's `n.toFixed(digits)`: the exact binary value rounded half away from zero."""
    if not math.isfinite(value):
        return js_number(value)
    quantum = Decimal(1).scaleb(-digits)
    return str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))


def money(value: float) -> str:
    """`$` and 4 decimals, as AgentV's cost texts: `$0.0500`."""
    return "$" + to_fixed(value, 4)


def count_problem(value: Any) -> str | None:
    """Why `value` is not a usable count or measure (a finite number >= 0), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = f" {describe_value(value)}" if isinstance(value, str | int | float) else ""
        return f"not a number (got {json_type(value)}{shown})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"not a finite number (got {js_number(value)})"
    if value < 0:
        return f"negative (got {js_number(value)})"
    return None


# --- tool calls ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the target: its name, its input (None when it gave none), its duration and
    its output (None when it gave none; `skill_trigger` reads it)."""

    name: str
    input: Any = None
    duration_ms: float | None = None
    output: Any = None


@dataclass(frozen=True)
class ToolCalls:
    """The target's tool calls in order, its assistant messages (AgentV's LLM calls), and the
    first reason the calls cannot be read (then `calls` must not be scored)."""

    calls: tuple[ToolCall, ...] = ()
    llm_calls: int = 0
    problem: str | None = None

    def counts(self) -> dict[str, int]:
        """Calls per tool name, names as the target wrote them."""
        counts: dict[str, int] = {}
        for call in self.calls:
            counts[call.name] = counts.get(call.name, 0) + 1
        return counts


def read_tool_calls(messages: Any) -> ToolCalls:
    """The tool calls of a target's `output_messages` (`tool_calls[*]` with `tool`, `input`,
    `duration_ms`, `output`), in order. A message that is not an object holds none. A `tool_calls` that is
    not a list, a call that is not an object, a `tool` that is not a string or a `duration_ms`
    that is not a number >= 0 is a problem: the calls are then unreadable, never guessed."""
    if not isinstance(messages, list):
        return ToolCalls(problem=f"output_messages is not a list (got {json_type(messages)})")
    calls: list[ToolCall] = []
    llm_calls = 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            llm_calls += 1
        raw_calls = message.get("tool_calls")
        if raw_calls is None:
            continue
        where = f"output_messages[{i}].tool_calls"
        if not isinstance(raw_calls, list):
            return ToolCalls(problem=f"{where} is not a list (got {json_type(raw_calls)})")
        for j, call in enumerate(raw_calls):
            if not isinstance(call, dict):
                return ToolCalls(problem=f"{where}[{j}] is not an object (got {json_type(call)})")
            name = call.get("tool")
            if not isinstance(name, str):
                shown = f" {describe_value(name)}" if isinstance(name, int | float) else ""
                return ToolCalls(problem=f"{where}[{j}].tool is not a string (got {json_type(name)}{shown})")
            duration = call.get("duration_ms")
            if duration is not None:
                problem = count_problem(duration)
                if problem:
                    return ToolCalls(problem=f"{where}[{j}].duration_ms is {problem}")
            calls.append(ToolCall(name, call.get("input"), duration, call.get("output")))
    return ToolCalls(tuple(calls), llm_calls)


def snake_key(key: str) -> str:
    """A key as AgentV's deep snake_case conversion left it: `knowledgeSearch` ->
    `knowledge_search`; a key starting with an uppercase letter (A-Z) is kept as it is."""
    if "A" <= key[:1] <= "Z":
        return key
    return "".join("_" + ch.lower() if "A" <= ch <= "Z" else ch for ch in key)


def trace_summary(messages: Sequence[Any]) -> dict[str, Any]:
    """AgentV's `trace_summary` of the output messages (agentv-reference §5): `event_count` = the
    number of tool calls, `tool_names` sorted unique, `tool_calls_by_name` (keys snake_cased, as
    AgentV's payload conversion did), `error_count` 0. A tool call counts when it is an object
    with a string `tool`; anything else in the target's messages is ignored."""
    counts: dict[str, int] = {}
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            tool = call.get("tool") if isinstance(call, dict) else None
            if isinstance(tool, str):
                counts[tool] = counts.get(tool, 0) + 1
    by_name: dict[str, int] = {}
    for tool, count in counts.items():
        key = snake_key(tool)
        by_name[key] = by_name.get(key, 0) + count
    return {
        "event_count": sum(counts.values()),
        "tool_names": sorted(counts),
        "tool_calls_by_name": by_name,
        "error_count": 0,
    }


# --- outcomes -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """A check's score, hits, misses and reasoning, and the values it looked at."""

    score: float
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    reasoning: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def missing(texts: tuple[str, str], **details: Any) -> Outcome:
    """AgentV's "no data" result: score 0, one miss, its reasoning."""
    miss, reasoning = texts
    return Outcome(0.0, misses=[miss], reasoning=reasoning, details=details)


def unusable(problem: str, **details: Any) -> Outcome:
    """Data the target reported but that cannot be compared: score 0, the problem as miss and reasoning."""
    return Outcome(0.0, misses=[problem], reasoning=problem, details=details)
