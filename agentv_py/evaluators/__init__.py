"""Evaluator adapters: (config, context) -> EvaluatorResult, in a registry keyed by config type.

Each evaluator's module is imported when a config of its type is first run: a run imports only
the evaluators its dataset names (a one-case `field_accuracy` run loads no judge, trajectory or
geometry code)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, get_args

from agentv_py.evaluators.base import EvalContext, Evaluator, error_result
from agentv_py.models.checks import CheckConfig
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig, CoordinateDistanceConfig, IouScoreConfig
from agentv_py.models.fields import AnlsStarConfig, FieldAccuracyConfig
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig
from agentv_py.models.trace_evaluators import (
    CostConfig,
    ExecutionMetricsConfig,
    LatencyConfig,
    SkillTriggerConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
)
from agentv_py.scoring.case import with_pass_mark
from agentv_py.scoring.negation import negate_result

if TYPE_CHECKING:
    from agentv_py.models.results import EvaluatorResult


# Each config type's evaluator, as (module in this package, function): imported when a config of
# that type first runs (`_Lazy`), so a run imports only the evaluators its dataset names.
_WHERE: dict[type[Any], tuple[str, str]] = {
    FieldAccuracyConfig: ("field_accuracy", "evaluate_field_accuracy"),
    CodeJudgeConfig: ("code_judge", "evaluate_code_judge"),
    IouScoreConfig: ("iou", "evaluate_iou"),
    AnlsStarConfig: ("anls_star", "evaluate_anls_star"),
    CoordinateDistanceConfig: ("geometry", "evaluate_distance"),
    LlmJudgeConfig: ("llm_judge", "evaluate_llm_judge"),
    RubricConfig: ("llm_judge", "evaluate_rubric"),
    CompositeConfig: ("composite", "evaluate_composite"),
    ToolTrajectoryConfig: ("tool_trajectory", "evaluate_tool_trajectory"),
    LatencyConfig: ("trace", "evaluate_latency"),
    CostConfig: ("trace", "evaluate_cost"),
    TokenUsageConfig: ("trace", "evaluate_token_usage"),
    ExecutionMetricsConfig: ("trace", "evaluate_execution_metrics"),
    SkillTriggerConfig: ("skill_trigger", "evaluate_skill_trigger"),
    **dict.fromkeys(get_args(CheckConfig), ("checks", "evaluate_check")),
}


class _Lazy:
    """An evaluator whose module is imported on its first call (a composite's gets `run_evaluator`
    to run its members)."""

    def __init__(self, module: str, function: str) -> None:
        self.module, self.function = module, function
        self._evaluate: Any = None

    def __call__(self, config: Any, context: EvalContext) -> EvaluatorResult:
        if self._evaluate is None:
            self._evaluate = getattr(importlib.import_module(f"agentv_py.evaluators.{self.module}"), self.function)
        if self.module == "composite":
            result: EvaluatorResult = self._evaluate(config, context, run_evaluator)
        else:
            result = self._evaluate(config, context)
        return result


REGISTRY: dict[type[Any], Evaluator] = {kind: _Lazy(*where) for kind, where in _WHERE.items()}


def run_evaluator(config: Any, context: EvalContext) -> EvaluatorResult:
    """Run one evaluator. Never raises: a crash inside an evaluator becomes an error result. Its
    `negate` applies before its `pass_threshold` (as AgentV's required gate reads the negated score)."""
    evaluator = REGISTRY.get(type(config))
    name = getattr(config, "display_name", type(config).__name__)
    kind = str(getattr(config, "type", "unknown"))
    weight = float(getattr(config, "weight", 1.0))
    if evaluator is None:
        return error_result(name=name, type=kind, weight=weight, message=f"no evaluator registered for {kind}")
    try:
        result = evaluator(config, context)
        if getattr(config, "negate", False):
            result = negate_result(result)
        explicit: float | None = getattr(config, "pass_threshold", None)
        return with_pass_mark(result, context.pass_threshold if explicit is None else explicit, explicit is not None)
    except Exception as exc:  # noqa: BLE001 - the contract is "evaluators never raise"
        return error_result(
            name=name, type=kind, weight=weight, message=f"{name}: internal error: {type(exc).__name__}: {exc}"
        )


__all__ = ["EvalContext", "REGISTRY", "run_evaluator"]
