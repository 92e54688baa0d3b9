"""Pure scoring of what a target did (agentv-reference §3.4, §3.5, §5): its tool calls against an
expected trajectory, and its duration, cost and token usage against limits. Every text is
AgentV's (cdf415031) where AgentV had one.

Values come from the target and are data: a tool call that is not an object, a tool name that is
not a string, a negative or non-finite count is never compared; it becomes a miss naming it
(`TraceProblem`), so a malformed trace can never pass a check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.scoring.match import json_type
from agentv_py.scoring.thresholds import at_most
from agentv_py.scoring.tool_args import ExpectedCall, args_match  # the `superset` and `subset` modes are there too
from agentv_py.scoring.trace import (
    DEFAULT_EXPLORATION_TOLERANCE,
    EXPLORATION_TOOLS,
    NO_COST,
    NO_DURATION,
    NO_SUMMARY,
    NO_TOKENS,
    Outcome,
    ToolCall,
    ToolCalls,
    count_problem,
    js_number,
    missing,
    money,
    to_fixed,
    unusable,
)

# --- tool_trajectory ----------------------------------------------------------------------------


def any_order(minimums: Mapping[str, float], calls: Sequence[ToolCall]) -> Outcome:
    """`mode: any_order`: each tool called at least its minimum; score = tools met / tools."""
    if not minimums:
        return Outcome(1.0, hits=["No tool requirements specified"])
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.name] = counts.get(call.name, 0) + 1
    hits: list[str] = []
    misses: list[str] = []
    for tool, required in minimums.items():
        actual = counts.get(tool, 0)
        text = f"{tool}: called {actual} times (required ≥{js_number(required)})"
        (hits if actual >= required else misses).append(text)
    return Outcome(len(hits) / len(minimums), hits, misses, details={"tool_calls_by_name": counts})


def _latency(step: ExpectedCall, call: ToolCall, hits: list[str], misses: list[str], skipped: list[str]) -> int:
    """Check a matched step's `max_duration_ms`; 1 when it counts as an assertion (pass or fail)."""
    limit = step.max_duration_ms
    if limit is None:
        return 0
    if call.duration_ms is None:
        skipped.append(f"No duration data for {step.tool}; latency assertion skipped")
        return 0
    took, most = js_number(call.duration_ms), js_number(limit)
    if at_most(call.duration_ms, limit):
        hits.append(f"{step.tool} completed in {took}ms (max: {most}ms)")
    else:
        misses.append(f"{step.tool} took {took}ms (max: {most}ms)")
    return 1


def _sequence_outcome(
    expected: Sequence[ExpectedCall], hits: list[str], misses: list[str], skipped: list[str], latency_checks: int
) -> Outcome:
    total = len(expected) + latency_checks
    matched = len(hits)  # every hit is a matched step or a latency assertion met
    return Outcome(
        matched / total if total else 1.0,
        hits,
        misses,
        reasoning="; ".join(skipped),
        details={"latency_skipped": skipped} if skipped else {},
    )


def in_order(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> Outcome:
    """`mode: in_order`: the expected steps in order, other calls allowed between them. A call of
    the right tool with the wrong arguments is a miss and is used up; score = (steps found +
    latency limits met) / (steps + latency limits checked)."""
    if not expected:
        return Outcome(1.0, hits=["No tool sequence specified"])
    hits: list[str] = []
    misses: list[str] = []
    skipped: list[str] = []
    checks = 0
    position = 0
    for i, step in enumerate(expected):
        while position < len(calls) and calls[position].name != step.tool:
            position += 1
        if position >= len(calls):
            misses.append(f"Expected {step.tool} at position {i}, not found in remaining trace")
            continue
        call = calls[position]
        if args_match(step.args, call.input, step.args_match):
            hits.append(f"Found {step.tool} at position {position}")
            checks += _latency(step, call, hits, misses, skipped)
        else:
            misses.append(f"Expected {step.tool} at position {i}: tool found at {position} but args mismatch")
        position += 1
    return _sequence_outcome(expected, hits, misses, skipped, checks)


def exact(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> Outcome:
    """`mode: exact`: call i is expected step i. A length difference is a miss of its own (the
    score counts steps only); score = (steps matched + latency limits met) / (steps + latency
    limits checked)."""
    if not expected:
        return Outcome(1.0, hits=["No tool sequence specified"])
    hits: list[str] = []
    misses: list[str] = []
    skipped: list[str] = []
    checks = 0
    if len(calls) != len(expected):
        misses.append(f"Expected {len(expected)} tool calls, got {len(calls)}")
    for i, step in enumerate(expected):
        if i >= len(calls):
            misses.append(f"Position {i}: expected {step.tool}, got nothing")
        elif calls[i].name != step.tool:
            misses.append(f"Position {i}: expected {step.tool}, got {calls[i].name}")
        elif not args_match(step.args, calls[i].input, step.args_match):
            misses.append(f"Position {i}: {step.tool} args mismatch")
        else:
            hits.append(f"Position {i}: {step.tool}")
            checks += _latency(step, calls[i], hits, misses, skipped)
    return _sequence_outcome(expected, hits, misses, skipped, checks)


# --- latency, cost, token_usage -----------------------------------------------------------------


def check_latency(duration_ms: Any, threshold: float) -> Outcome:
    """`latency`: pass iff the duration is at most the threshold (score 1 or 0)."""
    details = {"threshold": threshold, "duration_ms": duration_ms}
    if duration_ms is None:
        return missing(NO_DURATION, **details)
    problem = count_problem(duration_ms)
    if problem:
        return unusable(f"Duration in trace is {problem}", **details)
    d, t = js_number(duration_ms), js_number(threshold)
    passed = at_most(duration_ms, threshold)
    text = f"Duration {d}ms {'<=' if passed else '>'} {t}ms threshold"
    return Outcome(
        1.0 if passed else 0.0,
        [text] if passed else [],
        [] if passed else [text],
        f"Execution took {d}ms (threshold: {t}ms)",
        details,
    )


def check_cost(cost_usd: Any, budget: float) -> Outcome:
    """`cost`: pass iff the cost is at most the budget (score 1 or 0)."""
    details = {"budget": budget, "cost_usd": cost_usd}
    if cost_usd is None:
        return missing(NO_COST, **details)
    problem = count_problem(cost_usd)
    if problem:
        return unusable(f"Cost in trace is {problem}", **details)
    passed = at_most(cost_usd, budget)
    text = f"Cost {money(cost_usd)} {'<=' if passed else '>'} {money(budget)} budget"
    return Outcome(
        1.0 if passed else 0.0,
        [text] if passed else [],
        [] if passed else [text],
        f"Execution cost {money(cost_usd)} (budget: {money(budget)})",
        details,
    )


@dataclass(frozen=True)
class TokenUsage:
    input: float
    output: float
    cached: float = 0

    @property
    def total(self) -> float:
        return self.input + self.output + self.cached


def read_token_usage(raw: Any) -> TokenUsage | str | None:
    """The trace's token usage (`{input, output, cached?}`, cached default 0), None when there is
    none, or the reason it cannot be used (a text)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        return f"Token usage in trace is not an object (got {json_type(raw)})"
    counts: dict[str, Any] = {}
    for key in ("input", "output", "cached"):
        value = raw.get(key)
        if value is None:
            if key == "cached":
                value = 0
            else:
                return f"Token usage in trace has no {key} count"
        problem = count_problem(value)
        if problem:
            return f"Token usage {key} in trace is {problem}"
        counts[key] = value
    return TokenUsage(counts["input"], counts["output"], counts["cached"])


def check_token_usage(
    raw_usage: Any, *, max_input: float | None, max_output: float | None, max_total: float | None
) -> Outcome:
    """`token_usage`: input, output and total (input + output + cached) against the limits
    given, in that order; score 1 iff none is over."""
    limits = {"max_input": max_input, "max_output": max_output, "max_total": max_total}
    usage = read_token_usage(raw_usage)
    if usage is None:
        return missing(NO_TOKENS, **limits, token_usage=None)
    if isinstance(usage, str):
        return unusable(usage, **limits, token_usage=raw_usage)
    hits: list[str] = []
    misses: list[str] = []
    for label, value, limit in (
        ("Input", usage.input, max_input),
        ("Output", usage.output, max_output),
        ("Total", usage.total, max_total),
    ):
        if limit is not None:
            passed = at_most(value, limit)
            text = f"{label} tokens {js_number(value)} {'<=' if passed else '>'} {js_number(limit)}"
            (hits if passed else misses).append(text)
    i, o, c, t = (js_number(v) for v in (usage.input, usage.output, usage.cached, usage.total))
    return Outcome(
        0.0 if misses else 1.0,
        hits,
        misses,
        f"token_usage input={i}, output={o}, cached={c}, total={t}",
        {**limits, "token_usage": {"input": usage.input, "output": usage.output, "cached": usage.cached}},
    )


# --- execution_metrics --------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricLimits:
    """`execution_metrics` thresholds; None: not checked."""

    max_tool_calls: float | None = None
    max_llm_calls: float | None = None
    max_tokens: float | None = None
    max_cost_usd: float | None = None
    max_duration_ms: float | None = None
    target_exploration_ratio: float | None = None
    exploration_tolerance: float = DEFAULT_EXPLORATION_TOLERANCE

    def configured(self) -> dict[str, float]:
        """The thresholds given (the tolerance with a target ratio only), as AgentV listed them."""
        keys = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms")
        given = {k: getattr(self, k) for k in keys if getattr(self, k) is not None}
        if self.target_exploration_ratio is not None:
            given["target_exploration_ratio"] = self.target_exploration_ratio
            given["exploration_tolerance"] = self.exploration_tolerance
        return given


def exploration_ratio(calls: Sequence[ToolCall], tools: Sequence[str] = EXPLORATION_TOOLS) -> float | None:
    """Share of the tool calls made to exploration (read-only) tools; None without tool calls."""
    if not calls:
        return None
    return sum(1 for call in calls if call.name in tools) / len(calls)


def _at_most(
    label: str, value: float, limit: float, hits: list[str], misses: list[str], fmt: Any = js_number, unit: str = ""
) -> None:
    passed = at_most(value, limit)
    text = f"{label} {fmt(value)}{unit} {'<=' if passed else '>'} {fmt(limit)}{unit} max"
    (hits if passed else misses).append(text)


def check_execution_metrics(
    limits: MetricLimits,
    tool_calls: ToolCalls | None,
    *,
    token_usage: Any = None,
    cost_usd: Any = None,
    duration_ms: Any = None,
) -> Outcome:
    """`execution_metrics`: each threshold given is one check (tool calls, LLM calls = assistant
    messages, tokens = input + output, cost, duration, exploration ratio within tolerance of its
    target); score = checks met / checks. `tool_calls` None: no trace summary at all."""
    if tool_calls is None:
        return missing(NO_SUMMARY, config=limits.configured(), actual=None)
    hits: list[str] = []
    misses: list[str] = []
    actual: dict[str, Any] = {}
    calls_problem = tool_calls.problem
    if limits.max_tool_calls is not None:
        if calls_problem:
            misses.append(f"Tool calls not readable: {calls_problem}")
        else:
            actual["tool_calls"] = len(tool_calls.calls)
            _at_most("Tool calls", len(tool_calls.calls), limits.max_tool_calls, hits, misses)
    if limits.max_llm_calls is not None:
        actual["llm_calls"] = tool_calls.llm_calls
        _at_most("LLM calls", tool_calls.llm_calls, limits.max_llm_calls, hits, misses)
    if limits.max_tokens is not None:
        usage = read_token_usage(token_usage)
        if usage is None:
            misses.append("Token usage data not available")
        elif isinstance(usage, str):
            misses.append(usage)
        else:
            actual["tokens"] = usage.input + usage.output
            _at_most("Total tokens", usage.input + usage.output, limits.max_tokens, hits, misses)
    if limits.max_cost_usd is not None:
        problem = None if cost_usd is None else count_problem(cost_usd)
        if cost_usd is None:
            misses.append("Cost data not available")
        elif problem:
            misses.append(f"Cost in trace is {problem}")
        else:
            actual["cost_usd"] = cost_usd
            _at_most("Cost", cost_usd, limits.max_cost_usd, hits, misses, fmt=money)
    if limits.max_duration_ms is not None:
        problem = None if duration_ms is None else count_problem(duration_ms)
        if duration_ms is None:
            misses.append("Duration data not available")
        elif problem:
            misses.append(f"Duration in trace is {problem}")
        else:
            actual["duration_ms"] = duration_ms
            _at_most("Duration", duration_ms, limits.max_duration_ms, hits, misses, unit="ms")
    if limits.target_exploration_ratio is not None:
        ratio = None if calls_problem else exploration_ratio(tool_calls.calls)
        target, tolerance = limits.target_exploration_ratio, limits.exploration_tolerance
        if calls_problem:
            misses.append(f"Tool calls not readable: {calls_problem}")
        elif ratio is None:
            misses.append("Exploration ratio not available (no tool calls)")
        else:
            actual["exploration_ratio"] = ratio
            diff = abs(ratio - target)
            if diff <= tolerance:
                hits.append(f"Exploration ratio {to_fixed(ratio, 2)} within tolerance of target {js_number(target)}")
            else:
                misses.append(
                    f"Exploration ratio {to_fixed(ratio, 2)} outside tolerance of target {js_number(target)} "
                    f"(diff: {to_fixed(diff, 2)}, tolerance: {js_number(tolerance)})"
                )
    checks = len(hits) + len(misses)
    parts = []
    if "tool_calls" in actual:
        parts.append(f"tool_calls={actual['tool_calls']}")
    if "llm_calls" in actual:
        parts.append(f"llm_calls={actual['llm_calls']}")
    if "tokens" in actual:
        parts.append(f"tokens={js_number(actual['tokens'])}")
    if "cost_usd" in actual:
        parts.append(f"cost={money(actual['cost_usd'])}")
    if "duration_ms" in actual:
        parts.append(f"duration={js_number(actual['duration_ms'])}ms")
    if "exploration_ratio" in actual:
        parts.append(f"exploration_ratio={to_fixed(actual['exploration_ratio'], 2)}")
    return Outcome(
        len(hits) / checks if checks else 0.0,
        hits,
        misses,
        f"execution_metrics {', '.join(parts)}" if parts else "No metrics evaluated",
        {"config": limits.configured(), "actual": actual or None},
    )
