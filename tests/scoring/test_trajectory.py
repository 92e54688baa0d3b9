"""Pure trajectory and budget checks: AgentV's (cdf415031) scores and texts, and hostile values."""

from __future__ import annotations

import math

import pytest

from agentv_py.scoring.trace import ToolCall, ToolCalls, js_number, money, read_tool_calls, to_fixed, trace_summary
from agentv_py.scoring.trajectory import (
    ExpectedCall,
    MetricLimits,
    any_order,
    args_match,
    check_cost,
    check_execution_metrics,
    check_latency,
    check_token_usage,
    exact,
    in_order,
)


def calls(*names: str, **inputs: object) -> list[ToolCall]:
    return [ToolCall(name, inputs.get(name)) for name in names]


@pytest.mark.parametrize(
    ("value", "text"),
    [(45, "45"), (45.0, "45"), (45.5, "45.5"), (0.05, "0.05"), (1e-7, "1e-7"), (1e21, "1e+21"), (10**30, "10**30")],
    ids=["int", "integral-float", "fraction", "small", "tiny", "huge-float", "huge-int"],
)
def test_js_number(value, text):
    expected = str(10**30) if text == "10**30" else text
    assert js_number(value) == expected


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [(0.05, 4, "0.0500"), (0.125, 2, "0.13"), (0.6666, 2, "0.67"), (0.00005, 4, "0.0001"), (12, 4, "12.0000")],
    ids=["cents", "half-away-from-zero", "round-up", "tiny-half", "int"],
)
def test_to_fixed(value, digits, text):
    assert to_fixed(value, digits) == text


def test_money():
    assert money(0.1) == "$0.1000"


ANY_ORDER = [
    (
        "all-met",
        {"knowledgeSearch": 2, "documentRetrieve": 1},
        calls("knowledgeSearch", "knowledgeSearch", "documentRetrieve"),
        1.0,
        ["knowledgeSearch: called 2 times (required ≥2)", "documentRetrieve: called 1 times (required ≥1)"],
        [],
    ),
    (
        "one-missing",
        {"knowledgeSearch": 1, "generateReport": 1},
        calls("knowledgeSearch"),
        0.5,
        ["knowledgeSearch: called 1 times (required ≥1)"],
        ["generateReport: called 0 times (required ≥1)"],
    ),
    ("too-few", {"a": 3.0}, calls("a", "a"), 0.0, [], ["a: called 2 times (required ≥3)"]),
    ("zero-minimum", {"a": 0}, [], 1.0, ["a: called 0 times (required ≥0)"], []),
    ("empty-minimums", {}, calls("a"), 1.0, ["No tool requirements specified"], []),
    ("names-are-case-sensitive", {"Read": 1}, calls("read"), 0.0, [], ["Read: called 0 times (required ≥1)"]),
]


@pytest.mark.parametrize(
    ("minimums", "actual", "score", "hits", "misses"), [c[1:] for c in ANY_ORDER], ids=[c[0] for c in ANY_ORDER]
)
def test_any_order(minimums, actual, score, hits, misses):
    outcome = any_order(minimums, actual)
    assert (outcome.score, outcome.hits, outcome.misses) == (score, hits, misses)


E = ExpectedCall

IN_ORDER = [
    (
        "gaps-allowed",
        [E("webSearch"), E("fetchPage")],
        calls("webSearch", "x", "fetchPage", "summarize"),
        1.0,
        ["Found webSearch at position 0", "Found fetchPage at position 2"],
        [],
    ),
    (
        "wrong-order",
        [E("b"), E("a")],
        calls("a", "b"),
        0.5,
        ["Found b at position 1"],
        ["Expected a at position 1, not found in remaining trace"],
    ),
    (
        "args-mismatch-consumes-call",
        [E("s", {"q": "x"}), E("s")],
        calls("s", "s", s={"q": "y"}),
        0.5,
        ["Found s at position 1"],
        ["Expected s at position 0: tool found at 0 but args mismatch"],
    ),
    (
        "args-partial-match",
        [E("s", {"q": "x"})],
        [ToolCall("s", {"q": "x", "n": 5})],
        1.0,
        ["Found s at position 0"],
        [],
    ),
    ("args-any", [E("s", "any")], [ToolCall("s", None)], 1.0, ["Found s at position 0"], []),
    (
        "nothing-called",
        [E("a"), E("b")],
        [],
        0.0,
        [],
        [
            "Expected a at position 0, not found in remaining trace",
            "Expected b at position 1, not found in remaining trace",
        ],
    ),
    ("empty-expected", [], calls("a"), 1.0, ["No tool sequence specified"], []),
    (
        "latency-met",
        [E("Read", max_duration_ms=200)],
        [ToolCall("Read", None, 45)],
        1.0,
        ["Found Read at position 0", "Read completed in 45ms (max: 200ms)"],
        [],
    ),
    (
        "latency-exceeded",
        [E("Read", max_duration_ms=10)],
        [ToolCall("Read", None, 45)],
        0.5,
        ["Found Read at position 0"],
        ["Read took 45ms (max: 10ms)"],
    ),
    (
        "latency-without-data-is-neutral",
        [E("Read", max_duration_ms=10)],
        [ToolCall("Read")],
        1.0,
        ["Found Read at position 0"],
        [],
    ),
    (
        "latency-not-checked-on-a-miss",
        [E("Read", {"p": 1}, 10)],
        [ToolCall("Read", {"p": 2}, 45)],
        0.0,
        [],
        ["Expected Read at position 0: tool found at 0 but args mismatch"],
    ),
]


@pytest.mark.parametrize(
    ("expected", "actual", "score", "hits", "misses"), [c[1:] for c in IN_ORDER], ids=[c[0] for c in IN_ORDER]
)
def test_in_order(expected, actual, score, hits, misses):
    outcome = in_order(expected, actual)
    assert (outcome.score, outcome.hits, outcome.misses) == (score, hits, misses)


def test_a_skipped_latency_assertion_is_reported_in_the_reasoning():
    outcome = in_order([E("Read", max_duration_ms=10)], [ToolCall("Read")])
    assert outcome.reasoning == "No duration data for Read; latency assertion skipped"
    assert outcome.details == {"latency_skipped": ["No duration data for Read; latency assertion skipped"]}


EXACT = [
    ("match", [E("a"), E("b")], calls("a", "b"), 1.0, ["Position 0: a", "Position 1: b"], []),
    (
        "extra-call-does-not-lower-the-score",
        [E("a")],
        calls("a", "b"),
        1.0,
        ["Position 0: a"],
        ["Expected 1 tool calls, got 2"],
    ),
    (
        "too-few",
        [E("a"), E("b")],
        calls("a"),
        0.5,
        ["Position 0: a"],
        ["Expected 2 tool calls, got 1", "Position 1: expected b, got nothing"],
    ),
    ("wrong-tool", [E("a")], calls("b"), 0.0, [], ["Position 0: expected a, got b"]),
    ("args-mismatch", [E("a", {"k": True})], [ToolCall("a", {"k": 1})], 0.0, [], ["Position 0: a args mismatch"]),
    ("args-on-a-call-without-input", [E("a", {})], [ToolCall("a")], 0.0, [], ["Position 0: a args mismatch"]),
    (
        "latency",
        [E("a", None, 100), E("b", None, 50)],
        [ToolCall("a", None, 20), ToolCall("b", None, 60)],
        3 / 4,
        ["Position 0: a", "a completed in 20ms (max: 100ms)", "Position 1: b"],
        ["b took 60ms (max: 50ms)"],
    ),
]


@pytest.mark.parametrize(
    ("expected", "actual", "score", "hits", "misses"), [c[1:] for c in EXACT], ids=[c[0] for c in EXACT]
)
def test_exact(expected, actual, score, hits, misses):
    outcome = exact(expected, actual)
    assert (outcome.score, outcome.hits, outcome.misses) == (score, hits, misses)


@pytest.mark.parametrize(
    ("expected", "actual", "result"),
    [
        ({"n": 1}, {"n": 1.0}, True),
        ({"n": 1}, {"n": True}, False),
        ({"n": [1, {"a": 2}]}, {"n": [1, {"a": 2}], "x": 0}, True),
        ({"n": {"a": 1}}, {"n": {"a": 1, "b": 2}}, False),
        ({"n": None}, {}, False),
        ({"n": 1}, "n=1", False),
        ("any", 5, True),
    ],
    ids=[
        "int-equals-float",
        "bool-is-not-1",
        "nested-deep-equal",
        "nested-objects-compare-whole",
        "key-absent",
        "input-not-an-object",
        "any",
    ],
)
def test_args_match(expected, actual, result):
    assert args_match(expected, actual) is result


READ = [
    (
        "calls-in-order",
        [
            {"role": "user"},
            {"role": "assistant", "tool_calls": [{"tool": "a", "input": {"x": 1}}]},
            {"role": "assistant", "tool_calls": [{"tool": "b", "duration_ms": 5}]},
        ],
        ToolCalls((ToolCall("a", {"x": 1}), ToolCall("b", None, 5)), llm_calls=2),
    ),
    ("null-tool-calls", [{"role": "assistant", "tool_calls": None}], ToolCalls((), 1)),
    ("message-not-an-object", ["hi", {"role": "tool"}], ToolCalls((), 0)),
    ("not-a-list", "hello", ToolCalls(problem="output_messages is not a list (got string)")),
    (
        "tool-calls-not-a-list",
        [{"role": "assistant", "tool_calls": "search"}],
        ToolCalls(problem="output_messages[0].tool_calls is not a list (got string)"),
    ),
    (
        "call-not-an-object",
        [{"tool_calls": [{"tool": "a"}, ["b"]]}],
        ToolCalls(problem="output_messages[0].tool_calls[1] is not an object (got array)"),
    ),
    (
        "name-not-a-string",
        [{}, {"tool_calls": [{"tool": 42}]}],
        ToolCalls(problem="output_messages[1].tool_calls[0].tool is not a string (got number 42)"),
    ),
    (
        "name-missing",
        [{"tool_calls": [{"name": "a"}]}],
        ToolCalls(problem="output_messages[0].tool_calls[0].tool is not a string (got null)"),
    ),
    (
        "duration-a-string",
        [{"tool_calls": [{"tool": "a", "duration_ms": "5"}]}],
        ToolCalls(problem="output_messages[0].tool_calls[0].duration_ms is not a number (got string '5')"),
    ),
    (
        "duration-negative",
        [{"tool_calls": [{"tool": "a", "duration_ms": -1}]}],
        ToolCalls(problem="output_messages[0].tool_calls[0].duration_ms is negative (got -1)"),
    ),
    (
        "duration-nan",
        [{"tool_calls": [{"tool": "a", "duration_ms": math.nan}]}],
        ToolCalls(problem="output_messages[0].tool_calls[0].duration_ms is not a finite number (got NaN)"),
    ),
]


@pytest.mark.parametrize(("messages", "result"), [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_read_tool_calls(messages, result):
    assert read_tool_calls(messages) == result


def test_trace_summary_is_agentvs_with_snake_cased_counts_and_ignores_malformed_calls():
    messages = [
        {"tool_calls": [{"tool": "knowledgeSearch"}, {"tool": "knowledgeSearch"}, {"tool": 5}, "x"]},
        {"tool_calls": "nope"},
        "junk",
        {"tool_calls": [{"tool": "Read"}]},
    ]
    assert trace_summary(messages) == {
        "event_count": 3,
        "tool_names": ["Read", "knowledgeSearch"],
        "tool_calls_by_name": {"knowledge_search": 2, "Read": 1},
        "error_count": 0,
    }


LATENCY = [
    ("within", 41, 100, 1.0, ["Duration 41ms <= 100ms threshold"], [], "Execution took 41ms (threshold: 100ms)"),
    ("equal", 100.0, 100, 1.0, ["Duration 100ms <= 100ms threshold"], [], "Execution took 100ms (threshold: 100ms)"),
    (
        "over",
        150.25,
        100,
        0.0,
        [],
        ["Duration 150.25ms > 100ms threshold"],
        "Execution took 150.25ms (threshold: 100ms)",
    ),
    (
        "no-data",
        None,
        100,
        0.0,
        [],
        ["No duration data available in trace"],
        "Execution duration not reported by provider",
    ),
    (
        "negative",
        -5.0,
        100,
        0.0,
        [],
        ["Duration in trace is negative (got -5)"],
        "Duration in trace is negative (got -5)",
    ),
    (
        "nan",
        math.nan,
        100,
        0.0,
        [],
        ["Duration in trace is not a finite number (got NaN)"],
        "Duration in trace is not a finite number (got NaN)",
    ),
]


@pytest.mark.parametrize(
    ("duration", "threshold", "score", "hits", "misses", "reasoning"),
    [c[1:] for c in LATENCY],
    ids=[c[0] for c in LATENCY],
)
def test_latency(duration, threshold, score, hits, misses, reasoning):
    outcome = check_latency(duration, threshold)
    assert (outcome.score, outcome.hits, outcome.misses, outcome.reasoning) == (score, hits, misses, reasoning)


COST = [
    ("within", 0.05, 0.1, 1.0, ["Cost $0.0500 <= $0.1000 budget"], [], "Execution cost $0.0500 (budget: $0.1000)"),
    ("over", 0.15, 0.05, 0.0, [], ["Cost $0.1500 > $0.0500 budget"], "Execution cost $0.1500 (budget: $0.0500)"),
    ("no-data", None, 1, 0.0, [], ["No cost data available in trace"], "Execution cost not reported by provider"),
    (
        "string",
        "0.01",
        1,
        0.0,
        [],
        ["Cost in trace is not a number (got string '0.01')"],
        "Cost in trace is not a number (got string '0.01')",
    ),
    (
        "negative-never-passes",
        -1,
        1,
        0.0,
        [],
        ["Cost in trace is negative (got -1)"],
        "Cost in trace is negative (got -1)",
    ),
    (
        "bool",
        True,
        1,
        0.0,
        [],
        ["Cost in trace is not a number (got boolean True)"],
        "Cost in trace is not a number (got boolean True)",
    ),
]


@pytest.mark.parametrize(
    ("cost", "budget", "score", "hits", "misses", "reasoning"), [c[1:] for c in COST], ids=[c[0] for c in COST]
)
def test_cost(cost, budget, score, hits, misses, reasoning):
    outcome = check_cost(cost, budget)
    assert (outcome.score, outcome.hits, outcome.misses, outcome.reasoning) == (score, hits, misses, reasoning)


TOKENS = [
    (
        "all-limits",
        {"input": 100, "output": 50, "cached": 10},
        (200, 40, 150),
        0.0,
        ["Input tokens 100 <= 200"],
        ["Output tokens 50 > 40", "Total tokens 160 > 150"],
        "token_usage input=100, output=50, cached=10, total=160",
    ),
    (
        "cached-defaults-to-0",
        {"input": 1, "output": 2},
        (None, None, 3),
        1.0,
        ["Total tokens 3 <= 3"],
        [],
        "token_usage input=1, output=2, cached=0, total=3",
    ),
    (
        "no-data",
        None,
        (None, None, 3),
        0.0,
        [],
        ["No token usage data available in trace"],
        "Token usage not reported by provider",
    ),
    (
        "negative",
        {"input": -5, "output": 3},
        (10, None, None),
        0.0,
        [],
        ["Token usage input in trace is negative (got -5)"],
        "Token usage input in trace is negative (got -5)",
    ),
    (
        "string",
        {"input": "100", "output": 3},
        (1000, None, None),
        0.0,
        [],
        ["Token usage input in trace is not a number (got string '100')"],
        "Token usage input in trace is not a number (got string '100')",
    ),
    (
        "nan",
        {"input": 1, "output": math.nan},
        (None, None, 10),
        0.0,
        [],
        ["Token usage output in trace is not a finite number (got NaN)"],
        "Token usage output in trace is not a finite number (got NaN)",
    ),
    (
        "missing-output",
        {"input": 1},
        (None, None, 10),
        0.0,
        [],
        ["Token usage in trace has no output count"],
        "Token usage in trace has no output count",
    ),
    (
        "not-an-object",
        [1, 2],
        (None, None, 10),
        0.0,
        [],
        ["Token usage in trace is not an object (got array)"],
        "Token usage in trace is not an object (got array)",
    ),
    (
        "huge-count-compares-exactly",
        {"input": 10**30, "output": 1},
        (None, None, 10**6),
        0.0,
        [],
        [f"Total tokens {10**30 + 1} > 1000000"],
        f"token_usage input={10**30}, output=1, cached=0, total={10**30 + 1}",
    ),
]


@pytest.mark.parametrize(
    ("usage", "limits", "score", "hits", "misses", "reasoning"), [c[1:] for c in TOKENS], ids=[c[0] for c in TOKENS]
)
def test_token_usage(usage, limits, score, hits, misses, reasoning):
    max_input, max_output, max_total = limits
    outcome = check_token_usage(usage, max_input=max_input, max_output=max_output, max_total=max_total)
    assert (outcome.score, outcome.hits, outcome.misses, outcome.reasoning) == (score, hits, misses, reasoning)


READ_ONLY = ToolCalls((ToolCall("Read"), ToolCall("Grep"), ToolCall("Glob"), ToolCall("Edit"), ToolCall("Bash")), 1)
USAGE = {"input": 450, "output": 380, "cached": 120}
METRICS = [
    (
        "all-within",
        MetricLimits(max_tool_calls=10, max_tokens=2000, max_duration_ms=10000),
        READ_ONLY,
        1.0,
        ["Tool calls 5 <= 10 max", "Total tokens 830 <= 2000 max", "Duration 3420ms <= 10000ms max"],
        [],
        "execution_metrics tool_calls=5, tokens=830, duration=3420ms",
    ),
    (
        "some-over",
        MetricLimits(max_tool_calls=3, max_llm_calls=1, max_cost_usd=0.001),
        READ_ONLY,
        1 / 3,
        ["LLM calls 1 <= 1 max"],
        ["Tool calls 5 > 3 max", "Cost $0.0042 > $0.0010 max"],
        "execution_metrics tool_calls=5, llm_calls=1, cost=$0.0042",
    ),
    (
        "exploration-within",
        MetricLimits(target_exploration_ratio=0.6),
        READ_ONLY,
        1.0,
        ["Exploration ratio 0.60 within tolerance of target 0.6"],
        [],
        "execution_metrics exploration_ratio=0.60",
    ),
    (
        "exploration-outside",
        MetricLimits(target_exploration_ratio=0.1, exploration_tolerance=0.3),
        READ_ONLY,
        0.0,
        [],
        ["Exploration ratio 0.60 outside tolerance of target 0.1 (diff: 0.50, tolerance: 0.3)"],
        "execution_metrics exploration_ratio=0.60",
    ),
    (
        "exploration-without-calls",
        MetricLimits(target_exploration_ratio=0.5),
        ToolCalls((), 1),
        0.0,
        [],
        ["Exploration ratio not available (no tool calls)"],
        "No metrics evaluated",
    ),
    (
        "unreadable-calls",
        MetricLimits(max_tool_calls=3, max_llm_calls=2),
        ToolCalls(problem="output_messages is not a list (got string)"),
        0.5,
        ["LLM calls 0 <= 2 max"],
        ["Tool calls not readable: output_messages is not a list (got string)"],
        "execution_metrics llm_calls=0",
    ),
    (
        "no-trace-summary",
        MetricLimits(max_tool_calls=3),
        None,
        0.0,
        [],
        ["No trace summary available"],
        "Execution metrics not available - no trace summary provided",
    ),
]


@pytest.mark.parametrize(
    ("limits", "tool_calls", "score", "hits", "misses", "reasoning"),
    [c[1:] for c in METRICS],
    ids=[c[0] for c in METRICS],
)
def test_execution_metrics(limits, tool_calls, score, hits, misses, reasoning):
    outcome = check_execution_metrics(limits, tool_calls, token_usage=USAGE, cost_usd=0.0042, duration_ms=3420.0)
    assert (outcome.score, outcome.hits, outcome.misses, outcome.reasoning) == (score, hits, misses, reasoning)


METRICS_MISSING = [
    (
        "no-data",
        None,
        None,
        None,
        ["Token usage data not available", "Cost data not available", "Duration data not available"],
    ),
    (
        "hostile",
        {"input": -1, "output": 2},
        "0.01",
        -3,
        [
            "Token usage input in trace is negative (got -1)",
            "Cost in trace is not a number (got string '0.01')",
            "Duration in trace is negative (got -3)",
        ],
    ),
]


@pytest.mark.parametrize(
    ("usage", "cost", "duration", "misses"), [c[1:] for c in METRICS_MISSING], ids=[c[0] for c in METRICS_MISSING]
)
def test_execution_metrics_without_usable_data_never_passes(usage, cost, duration, misses):
    limits = MetricLimits(max_tokens=10**9, max_cost_usd=100, max_duration_ms=10**9)
    outcome = check_execution_metrics(limits, ToolCalls(), token_usage=usage, cost_usd=cost, duration_ms=duration)
    assert (outcome.score, outcome.hits, outcome.misses, outcome.reasoning) == (0.0, [], misses, "No metrics evaluated")
    assert outcome.details == {
        "config": {"max_tokens": 10**9, "max_cost_usd": 100, "max_duration_ms": 10**9},
        "actual": None,
    }
