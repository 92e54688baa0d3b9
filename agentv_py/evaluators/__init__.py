"""Evaluator adapters: (config, context) -> EvaluatorResult, in a registry keyed by config type."""

from __future__ import annotations

from typing import Any

from agentv_py.evaluators.base import EvalContext, Evaluator, error_result
from agentv_py.evaluators.code_judge import evaluate_code_judge
from agentv_py.evaluators.composite import evaluate_composite
from agentv_py.evaluators.field_accuracy import evaluate_field_accuracy
from agentv_py.evaluators.geometry import evaluate_distance
from agentv_py.evaluators.iou import evaluate_iou
from agentv_py.evaluators.llm_judge import evaluate_llm_judge, evaluate_rubric
from agentv_py.evaluators.tool_trajectory import evaluate_tool_trajectory
from agentv_py.evaluators.trace import (
    evaluate_cost,
    evaluate_execution_metrics,
    evaluate_latency,
    evaluate_token_usage,
)
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig, CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.models.trace_evaluators import (
    CostConfig,
    ExecutionMetricsConfig,
    LatencyConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
)
from agentv_py.scoring.case import with_pass_mark

REGISTRY: dict[type[Any], Evaluator] = {
    FieldAccuracyConfig: evaluate_field_accuracy,
    CodeJudgeConfig: evaluate_code_judge,
    IouScoreConfig: evaluate_iou,
    CoordinateDistanceConfig: evaluate_distance,
    LlmJudgeConfig: evaluate_llm_judge,
    RubricConfig: evaluate_rubric,
    CompositeConfig: lambda config, context: evaluate_composite(config, context, run_evaluator),
    ToolTrajectoryConfig: evaluate_tool_trajectory,
    LatencyConfig: evaluate_latency,
    CostConfig: evaluate_cost,
    TokenUsageConfig: evaluate_token_usage,
    ExecutionMetricsConfig: evaluate_execution_metrics,
}


def run_evaluator(config: Any, context: EvalContext) -> EvaluatorResult:
    """Run one evaluator. Never raises: a crash inside an evaluator becomes an error result."""
    evaluator = REGISTRY.get(type(config))
    name = getattr(config, "display_name", type(config).__name__)
    kind = str(getattr(config, "type", "unknown"))
    weight = float(getattr(config, "weight", 1.0))
    if evaluator is None:
        return error_result(name=name, type=kind, weight=weight, message=f"no evaluator registered for {kind}")
    try:
        result = evaluator(config, context)
        explicit: float | None = getattr(config, "pass_threshold", None)
        return with_pass_mark(result, context.pass_threshold if explicit is None else explicit, explicit is not None)
    except Exception as exc:  # noqa: BLE001 - the contract is "evaluators never raise"
        return error_result(
            name=name, type=kind, weight=weight, message=f"{name}: internal error: {type(exc).__name__}: {exc}"
        )


__all__ = ["EvalContext", "REGISTRY", "run_evaluator"]
