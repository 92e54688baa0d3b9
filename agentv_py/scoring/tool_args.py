"""How an expected tool call's `args` are compared with a call's input (AgentV v4.42.4's
`args_match` in graders/tool-trajectory.ts), and the `superset` and `subset` trajectory modes.

`args_match` is one of:

- `exact`: the input is the expected mapping, deep-equal, no key more or less (AgentV's default);
- `superset`: the input holds every expected key, deep-equal (extra keys allowed: agentv's
  default, AgentV's before v4.42);
- `subset`: every key of the input is expected, deep-equal (expected keys may be missing);
- `ignore`: the input is not checked;
- a list of fields (dot paths, `a.b`; a list index as a number, `items.0`): only those fields,
  deep-equal, and only those the expected mapping gives.

`args` missing or `any` is never checked, whatever the mode. Deep equality is JSON's
(`scoring.match.json_equal`): key order is irrelevant, `1 == 1.0`, `true != 1`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.models.trace_evaluators import ArgsMode
from agentv_py.scoring.match import json_equal
from agentv_py.scoring.trace import Outcome, ToolCall

ArgsMatch = ArgsMode | tuple[str, ...]

_ABSENT = object()


def _field(value: Any, path: str) -> Any:
    """The value at a dot path (`_ABSENT` when there is none), as AgentV's getNestedValue reads
    it: each part a key of an object or an index of an array."""
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part, _ABSENT)
        elif isinstance(value, list) and part.isdigit() and str(int(part)) == part and int(part) < len(value):
            value = value[int(part)]
        else:
            return _ABSENT
    return value


def _holds(bigger: Mapping[str, Any], smaller: Mapping[str, Any]) -> bool:
    return all(key in bigger and json_equal(value, bigger[key]) for key, value in smaller.items())


def args_match(expected: str | Mapping[str, Any] | None, actual: Any, mode: ArgsMatch = "superset") -> bool:
    """Whether a call's input `actual` meets the expected `args` under `mode`. An input that is
    not an object never meets an expected mapping (except with `ignore`, or a field list whose
    fields the mapping does not give)."""
    if expected is None or expected == "any" or mode == "ignore":
        return True
    if not isinstance(expected, Mapping) or actual is None:
        return False
    try:
        if isinstance(mode, tuple):
            for path in mode:
                want = _field(expected, path)
                if want is _ABSENT:
                    continue
                got = _field(actual, path)
                if got is _ABSENT or not json_equal(want, got):
                    return False
            return True
        if not isinstance(actual, dict):
            return False
        if mode == "exact":
            return json_equal(dict(expected), actual)
        if mode == "subset":
            return _holds(expected, actual)
        return _holds(actual, expected)
    except RecursionError:
        return False


@dataclass(frozen=True)
class ExpectedCall:
    """One expected step: a tool, its arguments (`None`: unchecked, `"any"`: unchecked, a mapping:
    compared with the call's input by `args_match`), an optional latency limit (`in_order`,
    `exact`) and how the arguments are compared (the step's, else the evaluator's)."""

    tool: str
    args: str | Mapping[str, Any] | None = None
    max_duration_ms: float | None = None
    args_match: ArgsMatch = "superset"

    def matches(self, call: ToolCall) -> bool:
        return call.name == self.tool and args_match(self.args, call.input, self.args_match)


def superset(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> Outcome:
    """`mode: superset`: every expected step is some call, in any order, each call used once
    (the first unused call that matches); other calls allowed. Score = steps found / steps."""
    if not expected:
        return Outcome(1.0, hits=["No expected tools specified"])
    hits: list[str] = []
    misses: list[str] = []
    used: set[int] = set()
    for step in expected:
        found = next((j for j, call in enumerate(calls) if j not in used and step.matches(call)), None)
        if found is None:
            misses.append(f"Expected {step.tool} not found in actual trajectory")
        else:
            used.add(found)
            hits.append(f"Found {step.tool} at position {found}")
    return Outcome(len(hits) / len(expected), hits, misses)


def subset(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> Outcome:
    """`mode: subset`: every call is one of the expected steps (an allowed set: each step may be
    used any number of times, and need not be used). Score = allowed calls / calls; no calls is 1."""
    if not expected:
        if not calls:
            return Outcome(1.0, hits=["No tool calls and no expected tools"])
        return Outcome(0.0, misses=[f"{len(calls)} unexpected tool call(s) with empty allowed list"])
    if not calls:
        return Outcome(1.0, hits=["No actual tool calls (trivially a subset)"])
    hits: list[str] = []
    misses: list[str] = []
    for i, call in enumerate(calls):
        if any(step.matches(call) for step in expected):
            hits.append(f"Position {i}: {call.name} is in allowed set")
        else:
            misses.append(f"Position {i}: {call.name} is not in allowed set")
    return Outcome(len(hits) / len(calls), hits, misses)
