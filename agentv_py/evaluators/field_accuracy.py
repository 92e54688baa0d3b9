"""`field_accuracy` (SPEC §3.1): picks values by path and calls the pure matchers."""

from __future__ import annotations

from typing import Any

from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.models.evaluators import FieldAccuracyConfig, FieldSpec
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.answer import NOT_JSON, PARSE_FAILURE, parse_failure
from agentv_py.scoring.match import MatchResult, match_date, match_exact, match_fuzzy, match_numeric, shown
from agentv_py.scoring.paths import MISSING, resolve

__all__ = ["PARSE_FAILURE", "cannot_score", "evaluate_field_accuracy", "match_field", "score_fields", "truth_problems"]


def cannot_score(eval_id: str, field: str, reason: str) -> str:
    """The text for a field whose ground truth is unusable: `case 'c1', field 'total': cannot
    score: <reason>` (an evaluator error, never the answer's fault)."""
    return f"case '{eval_id}', field '{field}': cannot score: {reason}"


def match_field(spec: FieldSpec, candidate: Any, expected: Any) -> MatchResult:
    """One field through the matcher its `match` names, with that matcher's options."""
    if spec.match == "numeric_tolerance":
        return match_numeric(candidate, expected, spec.tolerance or 0.0, spec.relative)
    if spec.match == "fuzzy":
        return match_fuzzy(candidate, expected, spec.threshold, spec.algorithm, spec.case_sensitive)
    if spec.match == "date":
        return match_date(candidate, expected, spec.date_formats)
    return match_exact(candidate, expected)


def truth_problems(config: FieldAccuracyConfig, expected: Any) -> list[tuple[str, str]]:
    """(path, reason) for each field whose expected value its matcher cannot use, judged from
    the ground truth alone (the expected value matched against itself)."""
    problems = []
    for spec in config.fields:
        want = resolve(expected, spec.path)
        if want is not MISSING and want is not None:  # an expected null is compared exactly
            result = match_field(spec, want, want)
            if result.bad_expected:
                problems.append((spec.path, result.reason or "invalid expected value"))
    return problems


def miss_text(reason: str | None, expected: Any, got: Any) -> str:
    """AgentV's miss reason with the values appended: `outside tolerance: diff=0.50, tolerance=0.1;
    expected 12, got 12.5`. Values are data: shortened and escaped (`shown`), one line always."""
    values = f"expected {shown(expected)}, " + ("got nothing" if got is MISSING else f"got {shown(got)}")
    return f"{reason}; {values}" if reason else values


def _json_safe(value: Any) -> Any:
    return None if value is MISSING else value


def score_fields(config: FieldAccuracyConfig, candidate: Any, expected: Any) -> dict[str, Any]:
    """Per-field outcomes and the aggregate, as plain data (no I/O, no evaluator framing)."""
    fields: list[dict[str, Any]] = []
    hits: list[str] = []
    misses: list[str] = []
    unscorable: list[tuple[str, str]] = []  # (path, reason): the ground truth is unusable
    total_weight = weighted = 0.0
    scored = passed = 0
    for spec in config.fields:
        want = resolve(expected, spec.path)
        got = resolve(candidate, spec.path)
        row: dict[str, Any] = {
            "path": spec.path,
            "match": spec.match,
            "expected": _json_safe(want),
            "actual": _json_safe(got),
            "weight": spec.weight,
        }
        fields.append(row)
        if want is MISSING:
            row.update(status="not scored", reason="no expected value", score=None)
            continue
        if got is MISSING or (got is None and want is not None):
            absent = "missing" if got is MISSING else "null value"
            if not spec.required:
                row.update(status="not scored", reason=f"optional, {absent}", score=None)
                continue
            label = "required, missing" if got is MISSING else "null value"
            result = MatchResult(False, 0.0, label)
        elif want is None:  # an expected null asks for a null, whatever the matcher
            result = match_exact(got, want)
        else:
            result = match_field(spec, got, want)
            if result.bad_expected:
                row.update(status="could not score", reason=result.reason, score=None)
                unscorable.append((spec.path, result.reason or "invalid expected value"))
                continue
        scored += 1
        total_weight += spec.weight
        weighted += result.score * spec.weight
        row.update(result.info)
        row.update(status="hit" if result.passed else "miss", score=result.score)
        if result.passed:
            passed += 1
            hits.append(spec.path)
        else:
            row["reason"] = result.reason
            misses.append(f"{spec.path} ({miss_text(result.reason, want, got)})")
    if config.aggregation == "all_or_nothing":
        score = 1.0 if scored and passed == scored else 0.0
    else:
        score = weighted / total_weight if total_weight > 0 else 0.0
    return {
        "fields": fields,
        "hits": hits,
        "misses": misses,
        "scored": scored,
        "passed": passed,
        "score": score,
        "unscorable": unscorable,
    }


def unanswered_fields(config: FieldAccuracyConfig, expected: Any) -> list[dict[str, Any]]:
    """`details.fields` when the answer is not JSON: every field with an expected value is a miss
    with nothing extracted (so per-field metrics count it FN), the others are not scored."""
    fields = []
    for spec in config.fields:
        want = resolve(expected, spec.path)
        row = {"path": spec.path, "match": spec.match, "expected": _json_safe(want), "actual": None}
        row["weight"] = spec.weight
        if want is MISSING:
            row.update(status="not scored", reason="no expected value", score=None)
        else:
            row.update(status="miss", reason="answer is not JSON", score=0.0)
        fields.append(row)
    return fields


def evaluate_field_accuracy(config: FieldAccuracyConfig, context: EvalContext) -> EvaluatorResult:
    """`type: field_accuracy`. Options: `fields` (each: `path`, `match` exact | fuzzy |
    numeric_tolerance | date, `required` (default true), `weight` (default 1), and the matcher's
    own options), `aggregation` (`weighted_average`, default, or `all_or_nothing`), `name`,
    `weight`. Skipped when the ground truth is not a JSON object or array. An error (could not
    score, naming the case and each field) when a field's expected value is unusable for its
    matcher: a non-numeric value for numeric_tolerance, an unparseable date, a non-string for
    fuzzy. The ground truth is checked before the answer, so a bad one is reported whatever the
    target answered."""
    name, weight = config.display_name, config.weight
    if context.expected is None or not isinstance(context.expected, (dict, list)):
        what = "no expected value" if context.expected is None else "the expected value is not JSON object/array"
        return skipped_result(name=name, type=config.type, weight=weight, reasoning=f"nothing to compare: {what}")
    candidate = context.candidate
    problems = truth_problems(config, context.expected)
    if problems:  # whatever the answer: the case cannot be scored, and that is not its fault
        fields = score_fields(config, candidate, context.expected)["fields"] if candidate is not NOT_JSON else []
        message = "; ".join(cannot_score(context.eval_id, path, reason) for path, reason in problems)
        details = {"fields": fields, "aggregation": config.aggregation}
        return error_result(name=name, type=config.type, weight=weight, message=message, details=details)
    if candidate is NOT_JSON:
        failure = parse_failure(context.answer)
        return processed_result(
            name=name,
            type=config.type,
            score=0.0,
            weight=weight,
            misses=[failure],
            reasoning=failure,
            details={"fields": unanswered_fields(config, context.expected), "parse_error": True},
        )
    outcome = score_fields(config, candidate, context.expected)
    scored, total = outcome["scored"], len(config.fields)
    details = {"fields": outcome["fields"], "aggregation": config.aggregation}
    if scored == 0:
        return skipped_result(
            name=name,
            type=config.type,
            weight=weight,
            reasoning=f"no field was scored (0/{total} had an expected value and an answer)",
            details=details,
        )
    reasoning = f"{outcome['passed']}/{scored} fields matched"
    if scored < total:
        reasoning += f" ({total - scored} not scored)"
    return processed_result(
        name=name,
        type=config.type,
        score=outcome["score"],
        weight=weight,
        hits=outcome["hits"],
        misses=outcome["misses"],
        reasoning=reasoning,
        details=details,
    )
