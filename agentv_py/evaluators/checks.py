"""AgentV's deterministic checks (`contains`, ..., `regex`, `equals`, `is_json`): the answer's
text through `scoring.checks.run_check`, AgentV's assertion a hit when it passed, else a miss.

The text checked is what AgentV calls the candidate: the target's final answer as text (the last
assistant message's content when the target gave `output_messages`; a JSON answer as its text)."""

from __future__ import annotations

from agentv_py.evaluators.base import EvalContext, error_result, processed_result
from agentv_py.models.checks import CheckConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.checks import run_check


def evaluate_check(config: CheckConfig, context: EvalContext) -> EvaluatorResult:
    """Score 1 when the check holds, else 0; one hit or one miss (`negate` is applied to this
    result by `run_evaluator`)."""
    name = config.display_name
    outcome = run_check(config, context.answer)
    if outcome.error is not None:
        return error_result(name=name, type=config.type, weight=config.weight, message=f"{name}: {outcome.error}")
    return processed_result(
        name=name,
        type=config.type,
        weight=config.weight,
        score=outcome.score,
        hits=[outcome.text] if outcome.passed else [],
        misses=[] if outcome.passed else [outcome.text],
        reasoning=outcome.text,
        details=outcome.details,
    )
