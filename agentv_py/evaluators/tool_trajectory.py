"""`tool_trajectory` (agentv-reference §3.4): the target's tool calls, read from its
`output_messages`, against minimum counts or an expected sequence; the matching is
`agentv_py.scoring.trajectory`'s.

A target that reported nothing (no output messages and no trace) gets AgentV's miss `No trace
available for evaluation` with score 0: the evaluator ran and the target did not give what it
checks, the same as an answer that is not JSON for `field_accuracy`. Tool calls that cannot be
read (a `tool_calls` that is not a list, a tool name that is not a string) are a score-0 miss
naming the first bad entry, never scored around.
"""

from __future__ import annotations

from agentv_py.evaluators.base import EvalContext, processed_result
from agentv_py.models.results import EvaluatorResult
from agentv_py.models.trace_evaluators import (
    CostConfig,
    ExecutionMetricsConfig,
    LatencyConfig,
    SkillTriggerConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
)
from agentv_py.scoring.tool_args import ExpectedCall, subset, superset
from agentv_py.scoring.trace import NO_TRACE, Outcome, read_tool_calls
from agentv_py.scoring.trajectory import any_order, exact, in_order

MODES = {"in_order": in_order, "exact": exact, "superset": superset, "subset": subset}

TraceConfig = (
    LatencyConfig | CostConfig | TokenUsageConfig | ExecutionMetricsConfig | ToolTrajectoryConfig | SkillTriggerConfig
)


def outcome_result(config: TraceConfig, outcome: Outcome) -> EvaluatorResult:
    """The result of a trace evaluator's check (this one, `trace`'s, `skill_trigger`'s)."""
    return processed_result(
        name=config.display_name,
        type=config.type,
        weight=config.weight,
        score=outcome.score,
        hits=outcome.hits,
        misses=outcome.misses,
        reasoning=outcome.reasoning,
        details=outcome.details,
    )


def output_messages(context: EvalContext) -> list[object] | None:
    """The target's output messages; a plain answer is one assistant message, as AgentV wrapped
    it. None when the target reported nothing at all (no messages and no trace)."""
    if context.output_messages is not None:
        return context.output_messages
    if context.trace is None:
        return None
    return [{"role": "assistant", "content": context.answer}]


def evaluate_tool_trajectory(config: ToolTrajectoryConfig, context: EvalContext) -> EvaluatorResult:
    """Score the target's tool calls against `minimums` (any_order) or `expected` (in_order,
    exact, superset, subset), each step's arguments compared as its `args_match` says (else the
    evaluator's, else `superset`)."""
    messages = output_messages(context)
    if messages is None:
        outcome = Outcome(0.0, misses=[NO_TRACE])
    else:
        calls = read_tool_calls(messages)
        if calls.problem:
            problem = f"Tool calls not readable: {calls.problem}"
            outcome = Outcome(0.0, misses=[problem], reasoning=problem)
        elif config.mode == "any_order":
            outcome = any_order(config.minimums or {}, calls.calls)
        else:
            default = config.args_match or "superset"
            steps = [
                ExpectedCall(step.tool, step.args, step.max_duration_ms, step.args_match or default)
                for step in config.expected or []
            ]
            outcome = MODES[config.mode](steps, calls.calls)
        outcome.details.setdefault("tool_calls", [call.name for call in calls.calls])
    outcome.details = {"mode": config.mode, **outcome.details}
    return outcome_result(config, outcome)
