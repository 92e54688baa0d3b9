"""The trace evaluators as configured in a dataset: load errors (exact, located) for configs
AgentV only warned about and skipped, and results for hostile traces (never raise, never pass)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from agentv_py.errors import ConfigError
from agentv_py.evaluators import run_evaluator
from agentv_py.evaluators.base import EvalContext
from agentv_py.loading import load_dataset
from agentv_py.models.results import Trace


def load_evaluator(ws, evaluator: str):
    ws.dataset(f"execution:\n  evaluators:\n    - {evaluator}\nevalcases:\n  - id: c1\n    input: hi\n")
    return load_dataset("dataset.yaml").cases[0].evaluators[0]


def problems(ws, evaluator: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_evaluator(ws, evaluator)
    return [str(p) for p in caught.value.problems]


AT = "dataset.yaml:3: execution.evaluators[0]"
INVALID = [
    (
        "trajectory-bad-mode",
        "{type: tool_trajectory, mode: sequence, expected: [{tool: a}]}",
        f"{AT}.mode: Invalid mode: sequence. Valid modes: any_order, in_order, exact, superset, subset",
    ),
    (
        "any-order-without-minimums",
        "{type: tool_trajectory, mode: any_order}",
        f"{AT}: mode any_order needs 'minimums' (tool name: minimum number of calls)",
    ),
    (
        "in-order-without-expected",
        "{type: tool_trajectory, mode: in_order}",
        f"{AT}: mode in_order needs 'expected' (the list of expected tool calls)",
    ),
    (
        "exact-with-minimums",
        "{type: tool_trajectory, mode: exact, minimums: {a: 1}, expected: [{tool: a}]}",
        f"{AT}: 'minimums' does not apply to mode exact (it checks 'expected')",
    ),
    (
        "any-order-with-expected",
        "{type: tool_trajectory, mode: any_order, minimums: {a: 1}, expected: [{tool: a}]}",
        f"{AT}: 'expected' does not apply to mode any_order (it checks 'minimums')",
    ),
    (
        "empty-minimums",
        "{type: tool_trajectory, mode: any_order, minimums: {}}",
        f"{AT}.minimums: minimums must name at least one tool",
    ),
    (
        "negative-minimum",
        "{type: tool_trajectory, mode: any_order, minimums: {search: -1}}",
        f"{AT}.minimums: minimums['search'] must be a number >= 0, got -1.0",
    ),
    (
        "empty-expected",
        "{type: tool_trajectory, mode: exact, expected: []}",
        f"{AT}.expected: expected must list at least one tool call",
    ),
    (
        "expected-without-tool",
        "{type: tool_trajectory, mode: exact, expected: [{args: any}]}",
        f"{AT}.expected[0].tool: missing required key 'tool'",
    ),
    (
        "bad-args",
        "{type: tool_trajectory, mode: exact, expected: [{tool: a, args: anything}]}",
        f"{AT}.expected[0].args: args must be 'any' or a mapping of argument names to expected values, got 'anything'",
    ),
    (
        "negative-max-duration",
        "{type: tool_trajectory, mode: exact, expected: [{tool: a, max_duration_ms: -5}]}",
        f"{AT}.expected[0].max_duration_ms: max_duration_ms must be a number >= 0, got -5.0",
    ),
    (
        "negative-threshold",
        "{type: latency, threshold: -1}",
        f"{AT}.threshold: threshold must be a number >= 0, got -1.0",
    ),
    ("negative-budget", "{type: cost, budget: -0.5}", f"{AT}.budget: budget must be a number >= 0, got -0.5"),
    (
        "token-usage-without-limits",
        "{type: token_usage}",
        f"{AT}: token_usage needs at least one of max_total, max_input, max_output",
    ),
    (
        "negative-token-limit",
        "{type: token_usage, maxInput: -1}",
        f"{AT}.maxInput: max_input must be a number >= 0, got -1.0",
    ),
    (
        "metrics-without-thresholds",
        "{type: execution_metrics, exploration_tolerance: 0.1}",
        f"{AT}: execution_metrics needs at least one threshold: max_tool_calls, max_llm_calls, max_tokens, "
        "max_cost_usd, max_duration_ms or target_exploration_ratio",
    ),
    (
        "tolerance-without-target",
        "{type: execution_metrics, max_tool_calls: 3, exploration_tolerance: 0.1}",
        f"{AT}: exploration_tolerance applies only with target_exploration_ratio",
    ),
    (
        "negative-metric",
        "{type: execution_metrics, max_tokens: -3}",
        f"{AT}.max_tokens: max_tokens must be a number >= 0, got -3.0",
    ),
]


@pytest.mark.parametrize(("evaluator", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_configs_are_load_errors(ws, evaluator, message):
    assert problems(ws, evaluator) == [message]


def test_camel_case_keys_are_accepted_as_agentv_accepted_them(ws):
    config = load_evaluator(ws, "{type: token_usage, maxTotal: 100, maxOutput: 20}")
    assert (config.max_total, config.max_output, config.max_input) == (100.0, 20.0, None)
    config = load_evaluator(ws, "{type: execution_metrics, maxToolCalls: 3, targetExplorationRatio: 0.5}")
    assert (config.max_tool_calls, config.target_exploration_ratio) == (3.0, 0.5)
    config = load_evaluator(ws, "{type: tool_trajectory, mode: exact, expected: [{tool: a, maxDurationMs: 9}]}")
    assert config.expected[0].max_duration_ms == 9.0


def test_input_and_output_on_expected_steps_load_and_are_ignored_as_in_agentv(ws):
    config = load_evaluator(
        ws, "{type: tool_trajectory, mode: in_order, expected: [{tool: a, input: {q: x}, output: {r: 1}}]}"
    )
    result = run_evaluator(config, context([{"role": "assistant", "tool_calls": [{"tool": "a", "input": {"q": "y"}}]}]))
    assert (result.score, result.hits) == (1.0, ["Found a at position 0"])


def context(messages=None, **trace) -> EvalContext:
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=Path("."),
        answer="done",
        expected=None,
        output_messages=messages,
        trace=Trace(**trace),
    )


def run(ws, evaluator: str, ctx: EvalContext):
    return run_evaluator(load_evaluator(ws, evaluator), ctx)


def test_no_trace_at_all_is_agentvs_miss_with_score_0(ws):
    ctx = context()
    ctx.trace = None
    result = run(ws, "{type: tool_trajectory, mode: any_order, minimums: {a: 1}}", ctx)
    assert (result.status, result.score, result.verdict) == ("processed", 0.0, "fail")
    assert result.misses == ["No trace available for evaluation"]
    metrics = run(ws, "{type: execution_metrics, max_tool_calls: 1}", ctx)
    assert metrics.misses == ["No trace summary available"]
    assert metrics.reasoning == "Execution metrics not available - no trace summary provided"


def test_a_plain_answer_is_one_assistant_message_without_tool_calls(ws):
    result = run(ws, "{type: tool_trajectory, mode: exact, expected: [{tool: a}]}", context(None, duration_ms=5.0))
    assert result.misses == ["Expected 1 tool calls, got 0", "Position 0: expected a, got nothing"]
    metrics = run(ws, "{type: execution_metrics, max_llm_calls: 1, max_tool_calls: 0}", context(None))
    assert (metrics.score, metrics.hits) == (1.0, ["Tool calls 0 <= 0 max", "LLM calls 1 <= 1 max"])


HOSTILE_CALLS = [
    (
        "calls-not-a-list",
        [{"role": "assistant", "tool_calls": {"tool": "a"}}],
        "Tool calls not readable: output_messages[0].tool_calls is not a list (got object)",
    ),
    (
        "name-not-a-string",
        [{"role": "assistant", "tool_calls": [{"tool": "a"}, {"tool": ["a"]}]}],
        "Tool calls not readable: output_messages[0].tool_calls[1].tool is not a string (got array)",
    ),
    ("messages-not-a-list", {"tool_calls": []}, "Tool calls not readable: output_messages is not a list (got object)"),
]


@pytest.mark.parametrize(("messages", "miss"), [c[1:] for c in HOSTILE_CALLS], ids=[c[0] for c in HOSTILE_CALLS])
@pytest.mark.parametrize(
    "evaluator",
    [
        "{type: tool_trajectory, mode: any_order, minimums: {a: 0}}",
        "{type: tool_trajectory, mode: in_order, expected: [{tool: a}]}",
        "{type: tool_trajectory, mode: exact, expected: [{tool: a}]}",
        "{type: execution_metrics, max_tool_calls: 100}",
    ],
    ids=["any-order", "in-order", "exact", "execution-metrics"],
)
def test_unreadable_tool_calls_are_a_miss_never_a_pass(ws, evaluator, messages, miss):
    result = run(ws, evaluator, context(messages))
    assert (result.status, result.score, result.hits, result.misses) == ("processed", 0.0, [], [miss])


HOSTILE_TRACE = [
    (
        "latency-nan",
        "{type: latency, threshold: 1000}",
        {"duration_ms": math.nan},
        "Duration in trace is not a finite number (got NaN)",
    ),
    (
        "latency-negative",
        "{type: latency, threshold: 1000}",
        {"duration_ms": -1.0},
        "Duration in trace is negative (got -1)",
    ),
    ("cost-negative", "{type: cost, budget: 1}", {"cost_usd": -0.5}, "Cost in trace is negative (got -0.5)"),
    (
        "tokens-string",
        "{type: token_usage, max_total: 1000}",
        {"token_usage": {"input": "5", "output": 1}},
        "Token usage input in trace is not a number (got string '5')",
    ),
    (
        "tokens-nan",
        "{type: token_usage, max_total: 1000}",
        {"token_usage": {"input": 5, "output": math.nan}},
        "Token usage output in trace is not a finite number (got NaN)",
    ),
    (
        "tokens-huge",
        "{type: token_usage, max_input: 1000}",
        {"token_usage": {"input": 10**40, "output": 0}},
        "Input tokens 100000000000...(41 digits) > 1000",
    ),
]


@pytest.mark.parametrize(
    ("evaluator", "trace", "miss"), [c[1:] for c in HOSTILE_TRACE], ids=[c[0] for c in HOSTILE_TRACE]
)
def test_hostile_trace_values_are_a_miss_never_a_pass(ws, evaluator, trace, miss):
    result = run(ws, evaluator, context([], **trace))
    assert (result.status, result.score, result.verdict, result.misses) == ("processed", 0.0, "fail", [miss])


def test_metrics_report_what_they_compared(ws):
    result = run(ws, "{type: cost, budget: 0.1, weight: 2}", context([], cost_usd=0.05))
    assert (result.name, result.type, result.weight, result.score, result.verdict) == ("cost", "cost", 2.0, 1.0, "pass")
    assert result.hits == ["Cost $0.0500 <= $0.1000 budget"]
    assert result.reasoning == "Execution cost $0.0500 (budget: $0.1000)"
    assert result.details == {"budget": 0.1, "cost_usd": 0.05}


@pytest.mark.parametrize(
    ("reported", "expected_duration", "expected_cost"),
    [
        pytest.param({"duration_ms": 12.5, "cost_usd": 0.25}, 12.5, 0.25, id="reported-kept"),
        pytest.param({"duration_ms": -5, "cost_usd": -0.1}, 7.0, None, id="negative-dropped-measured-used"),
        pytest.param({"duration_ms": "5", "cost_usd": "0.1"}, 7.0, None, id="strings-dropped"),
        pytest.param({"duration_ms": True, "cost_usd": False}, 7.0, None, id="booleans-dropped"),
    ],
)
def test_target_reported_trace_values(reported: dict, expected_duration: float, expected_cost: float | None) -> None:
    """A negative duration or cost from a target is dropped (AgentV dropped it): the row keeps
    agentv's own measurement, and `latency`/`cost` never see a negative number."""
    from agentv_py.runner.case_row import outcome_trace
    from agentv_py.runner.outcome import TargetOutcome

    trace = outcome_trace(TargetOutcome("answer", trace=reported, duration_ms=7.0))
    assert (trace.duration_ms, trace.cost_usd) == (expected_duration, expected_cost)
