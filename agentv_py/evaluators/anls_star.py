"""`anls_star`: ANLS* of a whole structured answer against its ground truth (Peer et al. 2024,
`scoring.anls`): every key of either side counts (an invented key lowers the score, as a missing
one does), lists are paired optimally, None matches only an empty answer."""

from __future__ import annotations

from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.models.fields import AnlsStarConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.anls import anls_star
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.paths import MISSING, resolve


def evaluate_anls_star(config: AnlsStarConfig, context: EvalContext) -> EvaluatorResult:
    """`type: anls_star`. Options: `path` / `expected_path` (the values compared; default the whole
    answer and ground truth), `threshold` (each leaf's ANLS cut-off, default 0.5), `name`,
    `weight`. A text answer that is not JSON is compared as one text."""
    name, kind, weight = config.display_name, config.type, config.weight
    expected_path = config.expected_path or config.path
    expected = resolve(context.expected, expected_path) if expected_path else context.expected
    if expected is MISSING:
        where = f" at {expected_path}" if expected_path else ""
        return skipped_result(name=name, type=kind, weight=weight, reasoning=f"no expected value{where}")
    answer = context.answer if context.candidate is NOT_JSON else context.candidate
    if config.path and context.candidate is not NOT_JSON:
        answer = resolve(context.candidate, config.path)
        answer = None if answer is MISSING else answer
    try:
        score = anls_star(expected, answer, config.threshold)
    except (TypeError, ValueError, RecursionError) as exc:  # a value of no JSON type, nested too deeply
        return error_result(name=name, type=kind, weight=weight, message=f"ANLS* cannot compare them: {exc}")
    line = f"{config.path or 'answer'} (ANLS* {score:.3f})"
    details = {"anls_star": round(score, 6), "threshold": config.threshold}
    return processed_result(
        name=name,
        type=kind,
        weight=weight,
        score=score,
        hits=[line] if score >= 1.0 else [],
        misses=[] if score >= 1.0 else [line],
        reasoning=line,
        details=details,
    )
