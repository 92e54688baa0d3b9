"""`latency`, `cost`, `token_usage` (agentv-reference §3.5) and `execution_metrics` (AgentV
2026-02-13): what the target call took and cost, from the case's `Trace` (target-reported, or
measured for the duration) and its output messages, against limits. The checks and texts are
`agentv_py.scoring.trajectory`'s.

A metric the target did not report is AgentV's miss (`No cost data available in trace`, ...)
with score 0, a processed result: the evaluator ran, and the target did not give what the eval
asks of it (like an answer that is not JSON for `field_accuracy`). A reported value that is not a
number >= 0 is a score-0 miss naming it, never compared.
"""

from __future__ import annotations

from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.tool_trajectory import outcome_result, output_messages
from agentv_py.models.results import EvaluatorResult
from agentv_py.models.trace_evaluators import CostConfig, ExecutionMetricsConfig, LatencyConfig, TokenUsageConfig
from agentv_py.scoring.trace import DEFAULT_EXPLORATION_TOLERANCE, read_tool_calls
from agentv_py.scoring.trajectory import (
    MetricLimits,
    check_cost,
    check_execution_metrics,
    check_latency,
    check_token_usage,
)


def evaluate_latency(config: LatencyConfig, context: EvalContext) -> EvaluatorResult:
    """Pass iff the target call's duration is at most `threshold` ms."""
    duration = context.trace.duration_ms if context.trace else None
    return outcome_result(config, check_latency(duration, config.threshold))


def evaluate_cost(config: CostConfig, context: EvalContext) -> EvaluatorResult:
    """Pass iff the target-reported cost is at most `budget` USD."""
    cost = context.trace.cost_usd if context.trace else None
    return outcome_result(config, check_cost(cost, config.budget))


def evaluate_token_usage(config: TokenUsageConfig, context: EvalContext) -> EvaluatorResult:
    """Pass iff no target-reported token count (input, output, total) is over its limit."""
    usage = context.trace.token_usage if context.trace else None
    outcome = check_token_usage(
        usage, max_input=config.max_input, max_output=config.max_output, max_total=config.max_total
    )
    return outcome_result(config, outcome)


def evaluate_execution_metrics(config: ExecutionMetricsConfig, context: EvalContext) -> EvaluatorResult:
    """Each threshold given is a check; score = checks met / checks."""
    limits = MetricLimits(
        max_tool_calls=config.max_tool_calls,
        max_llm_calls=config.max_llm_calls,
        max_tokens=config.max_tokens,
        max_cost_usd=config.max_cost_usd,
        max_duration_ms=config.max_duration_ms,
        target_exploration_ratio=config.target_exploration_ratio,
        exploration_tolerance=(
            DEFAULT_EXPLORATION_TOLERANCE if config.exploration_tolerance is None else config.exploration_tolerance
        ),
    )
    messages = output_messages(context)
    trace = context.trace
    outcome = check_execution_metrics(
        limits,
        None if messages is None else read_tool_calls(messages),
        token_usage=trace.token_usage if trace else None,
        cost_usd=trace.cost_usd if trace else None,
        duration_ms=trace.duration_ms if trace else None,
    )
    return outcome_result(config, outcome)
