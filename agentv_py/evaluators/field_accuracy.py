"""`field_accuracy` (SPEC §3.1): picks values by path and calls the pure matchers."""

from __future__ import annotations

from typing import Any

from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.models.field_results import (
    FieldAccuracyDetails,
    FieldOutcome,
    FieldStatus,
    ItemAlignment,
    ItemCounts,
    ItemPair,
    to_details,
)
from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.alignment import Assignment
from agentv_py.scoring.answer import NOT_JSON, PARSE_FAILURE, parse_failure
from agentv_py.scoring.calibration import read_confidence
from agentv_py.scoring.invented import invented
from agentv_py.scoring.items import LISTED, align, items_score, items_summary
from agentv_py.scoring.match import MatchResult, json_type, match_exact
from agentv_py.scoring.paths import MISSING, is_empty, resolve
from agentv_py.scoring.value_rules import match_value, truth_problem

__all__ = ["PARSE_FAILURE", "cannot_score", "evaluate_field_accuracy", "match_field", "score_fields", "truth_problems"]


def cannot_score(eval_id: str, field: str, reason: str) -> str:
    """The text for a field whose ground truth is unusable: `case 'c1', field 'total': cannot
    score: <reason>` (an evaluator error, never the answer's fault)."""
    return f"case '{eval_id}', field '{field}': cannot score: {reason}"


def match_field(spec: FieldSpec, candidate: Any, expected: Any) -> MatchResult:
    """One field through the matcher its `match` names, with that matcher's options."""
    if spec.match == "items":
        return match_items(spec, candidate, expected)
    return match_value(spec, candidate, expected)


def truth_problems(config: FieldAccuracyConfig, expected: Any) -> list[tuple[str, str]]:
    """(path, reason) for each field whose expected value its matcher cannot use, judged from
    the ground truth alone (the expected value matched against itself). A value of a type the
    matcher never reads (`wrong_type`) is left to its field: "could not score" there."""
    problems = []
    for spec in config.fields:
        want = resolve(expected, spec.path)
        if is_empty(want):  # nothing expected: asks for nothing, whatever the matcher
            continue
        refused = truth_problem(spec, want)
        if refused is not None and not refused.wrong_type:
            problems.append((refused.info.get("path", spec.path), refused.reason or "invalid expected value"))
    return problems


def _json_safe(value: Any) -> Any:
    return None if value is MISSING else value


def score_fields(config: FieldAccuracyConfig, candidate: Any, expected: Any) -> dict[str, Any]:
    """Per-field outcomes (`FieldOutcome`) and the aggregate, as plain data (no I/O, no evaluator
    framing)."""
    fields: list[FieldOutcome] = []
    hits: list[str] = []
    misses: list[str] = []
    unscorable: list[tuple[str, str]] = []  # (path, reason): the ground truth is unusable
    critical: list[str] = []  # critical fields that missed: the case fails, whatever the score
    unreadable: list[str] = []  # `<path> (<reason>)`: expected values of a type the matcher never reads
    total_weight = weighted = 0.0
    scored = passed = 0
    for spec, label in zip(config.fields, config.labels(), strict=True):
        want = resolve(expected, spec.path)
        got = resolve(candidate, spec.path)
        weight = _weight(spec, want)

        def outcome(status: FieldStatus, score: float | None, reason: str | None, **notes: Any) -> FieldOutcome:
            return _outcome(spec, label, want, got, weight, status, score, reason, notes)  # noqa: B023 - called at once

        if want is MISSING and not spec.bounded:
            fields.append(outcome("not scored", None, "no expected value"))
            continue
        if spec.match == "count" and got is not MISSING:  # an empty list is a count too
            result = match_field(spec, got, want)
        elif is_empty(got) and is_empty(want) and not spec.bounded:  # both nothing (null, "", [], {})
            result = MatchResult(True, 1.0, None)
        elif is_empty(got) and (refused := truth_problem(spec, want)) is not None and refused.wrong_type:
            result = refused  # nothing answered, but nothing this matcher reads was expected either
        elif is_empty(got) and not (spec.match == "items" and isinstance(got, list) and spec.required):
            # SPEC §3.1 rules 2 and 3, and a blank string, [] or {} alike (an items field's [] is
            # matched below, for its counts)
            absent = "missing" if got is MISSING else "null value" if got is None else "empty value"
            if not spec.required:
                fields.append(outcome("not scored", None, f"optional, {absent}"))
                continue
            result = MatchResult(False, 0.0, "required, missing" if got is MISSING else absent)
        elif is_empty(want):  # an empty expectation asks for nothing, whatever the matcher
            result = match_exact(got, want)
        else:
            result = match_field(spec, got, want)
        if result.bad_expected and result.wrong_type:  # this document's value is of another type
            fields.append(outcome("could not score", 0.0, result.reason))
            unreadable.append(f"{label} ({result.reason})")
            scored += 1
            total_weight += weight
            continue
        if result.bad_expected:
            fields.append(outcome("could not score", None, result.reason))
            unscorable.append((label, result.reason or "invalid expected value"))
            continue
        scored += 1
        total_weight += weight
        weighted += result.score * weight
        if result.passed:
            fields.append(outcome("hit", result.score, None, **result.info))
            passed += 1
            hits.append(label)
        else:
            fields.append(outcome("miss", result.score, result.reason, **result.info))
            # SPEC's text exactly; the values are in the outcome (report.misses shows them beside it)
            misses.append(f"{label} ({result.reason})")
            if spec.critical:
                critical.append(label)
    if config.confidence is not None:
        fields[: len(config.fields)] = with_confidences(fields[: len(config.fields)], config, candidate)
    if config.extra_fields != "ignore":
        answered = candidate
        if config.confidence is not None and isinstance(candidate, dict):  # the confidences are not a field
            answered = {k: v for k, v in candidate.items() if k != config.confidence}
        for path, value in invented(answered, expected):
            reason = "invented: the ground truth has no such field"
            fields.append(
                FieldOutcome(
                    path=path,
                    match="extra",
                    weight=1.0,
                    status="miss",
                    score=0.0,
                    actual=_json_safe(value),
                    reason=reason,
                )
            )
            misses.append(f"{path} ({reason})")
            scored += 1
            total_weight += 1.0
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
        "critical_misses": critical,
        "unreadable": unreadable,
    }


def _outcome(
    spec: FieldSpec,
    label: str,
    want: Any,
    got: Any,
    weight: float,
    status: FieldStatus,
    score: float | None,
    reason: str | None,
    notes: dict[str, Any],
) -> FieldOutcome:
    """One field's outcome; a key with nothing to say is not set (so not written): `actual` when
    the answer has nothing at the path (`got nothing` where it is shown), `critical` unless true,
    `reason` on a hit."""
    optional: dict[str, Any] = dict(notes)  # the matcher's own (`MatchResult.info`)
    if got is not MISSING:
        optional["actual"] = got
    if spec.critical:
        optional["critical"] = True
    if reason is not None:
        optional["reason"] = reason
    return FieldOutcome(
        path=label,
        match=spec.match,
        expected=_json_safe(want),
        weight=weight,
        status=status,
        score=score,
        **optional,
    )


def with_confidences(fields: list[FieldOutcome], config: FieldAccuracyConfig, candidate: Any) -> list[FieldOutcome]:
    """The fields (one per spec, in order) with the extractor's confidence in each scored one, from
    the answer's `config.confidence` object (keyed by field path); one that is not a number in
    [0, 1] is left out, and said in the field's `note`."""
    reported = candidate.get(config.confidence) if isinstance(candidate, dict) and config.confidence else None
    if not isinstance(reported, dict):
        return fields
    out = []
    for spec, outcome in zip(config.fields, fields, strict=True):
        if spec.path not in reported or outcome.status not in ("hit", "miss"):
            out.append(outcome)
            continue
        value, problem = read_confidence(reported[spec.path])
        update = {"confidence": value} if problem is None else {"note": f"{problem}: not used"}
        out.append(outcome.model_copy(update=update))
    return out


def _weight(spec: FieldSpec, expected: Any) -> float:
    """A field's weight in the case score: `per_item` is the number of expected items (at least
    one), so losing 20 line items costs what 20 fields cost."""
    if spec.weight == "per_item":
        return float(max(len(expected), 1)) if isinstance(expected, list) else 1.0
    return spec.weight


def _item_config(spec: FieldSpec) -> FieldAccuracyConfig:
    """The sub-fields of a `match: items` field, as a config `score_fields` scores each pair with."""
    return FieldAccuracyConfig.model_construct(type="field_accuracy", fields=list(spec.fields or []), name=None)


def match_items(spec: FieldSpec, candidate: Any, expected: Any) -> MatchResult:
    """`match: items`: align the expected items with the answer's (scoring.items.align), score each
    matched pair's sub-fields with `score_fields`, and count what stayed unmatched. Score: the sum
    of the pair scores over max(expected, actual) items. `info` records the alignment (at most
    LISTED pairs, missing and extra indices) and exact counts for `agentv metrics`."""
    refused = truth_problem(spec, expected)
    if refused is not None:
        at = refused.info.pop("path", None)
        if at is not None:
            refused.reason = f"{at}: {refused.reason}"
        return refused
    n_expected = len(expected)
    if not isinstance(candidate, list):
        none = ItemCounts(expected=n_expected, actual=0, matched=0, correct=0, wrong=0, missing=n_expected, extra=0)
        reason = f"answer is {json_type(candidate)}, not a list; " + items_summary(0, n_expected, n_expected, 0, 0)
        return MatchResult(False, 0.0, reason, info={"items": none})
    sub = _item_config(spec)
    algorithm: Assignment = "greedy" if spec.algorithm == "greedy" else "optimal"

    def agreement(i: int, j: int) -> float:  # between equal keys, the pairing whose sub-fields agree
        outcome = score_fields(sub, candidate[j], expected[i])
        return float(outcome["score"]) if outcome["scored"] else 1.0

    alignment = align(expected, candidate, spec.key or ["description"], spec.threshold, algorithm, agreement)
    pair_rows: list[ItemPair] = []
    pair_scores: list[float] = []
    wrong: list[str] = []
    for i, j, similarity in alignment.pairs:
        outcome = score_fields(sub, candidate[j], expected[i])
        correct = outcome["passed"] == outcome["scored"]
        pair_scores.append(outcome["score"] if outcome["scored"] else 1.0)
        if not correct:
            wrong.append(f"[{i}].{outcome['misses'][0]}")
        if len(pair_rows) < LISTED:
            pair_rows.append(
                ItemPair(
                    expected=i,
                    actual=j,
                    similarity=round(similarity, 4),
                    status="hit" if correct else "miss",
                    score=pair_scores[-1],
                    fields=outcome["fields"],
                )
            )
    matched, missing, extra = len(alignment.pairs), len(alignment.missing), len(alignment.extra)
    counts = ItemCounts(
        expected=n_expected,
        actual=len(candidate),
        matched=matched,
        correct=matched - len(wrong),
        wrong=len(wrong),
        missing=missing,
        extra=extra,
    )
    info = {
        "items": counts,
        "alignment": ItemAlignment(
            key=list(spec.key or ["description"]),
            threshold=spec.threshold,
            algorithm=algorithm,
            pairs=pair_rows,
            missing=alignment.missing[:LISTED],
            extra=alignment.extra[:LISTED],
            junk=alignment.junk[:LISTED],
            truncated=max(matched, missing, extra) > LISTED,
        ),
    }
    score = items_score(pair_scores, n_expected, len(candidate))
    if not missing and not extra and not wrong:
        return MatchResult(True, score, None, info=info)
    reason = items_summary(matched, n_expected, missing, extra, len(wrong))
    if wrong:
        reason += f"; first: {wrong[0]}"
    return MatchResult(False, score, reason, info=info)


def unanswered_fields(config: FieldAccuracyConfig, expected: Any) -> list[FieldOutcome]:
    """`details.fields` when the answer is not JSON: every field with an expected value is a miss
    with nothing extracted (so per-field metrics count it FN), the others are not scored."""
    fields = []
    for spec, label in zip(config.fields, config.labels(), strict=True):
        want = resolve(expected, spec.path)
        refused = None if is_empty(want) else truth_problem(spec, want)
        status: FieldStatus = "not scored" if want is MISSING else "miss"
        reason = "no expected value" if want is MISSING else "answer is not JSON"
        if refused is not None and refused.wrong_type:  # the ground truth's fault, not the answer's
            status, reason = "could not score", refused.reason or reason
        fields.append(
            FieldOutcome(
                path=label,
                match=spec.match,
                expected=_json_safe(want),
                weight=_weight(spec, want),
                status=status,
                reason=reason,
                score=None if want is MISSING else 0.0,
            )
        )
    return fields


def evaluate_field_accuracy(config: FieldAccuracyConfig, context: EvalContext) -> EvaluatorResult:
    """`type: field_accuracy`. Options: `fields` (each: `path`, `match` exact | fuzzy |
    numeric_tolerance | date | items (`match_items`), `required` (default true), `weight` (default 1), and the matcher's
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
        details = to_details(FieldAccuracyDetails(fields=fields, aggregation=config.aggregation))
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
            details=to_details(
                FieldAccuracyDetails(fields=unanswered_fields(config, context.expected), parse_error=True)
            ),
        )
    outcome = score_fields(config, candidate, context.expected)
    scored, total = outcome["scored"], len(config.fields)
    typed = FieldAccuracyDetails(fields=outcome["fields"], aggregation=config.aggregation)
    if scored == 0:
        return skipped_result(
            name=name,
            type=config.type,
            weight=weight,
            reasoning=f"no field was scored (0/{total} had an expected value and an answer)",
            details=to_details(typed),
        )
    reasoning = f"{outcome['passed']}/{scored} fields matched"
    if scored < total:
        reasoning += f" ({total - scored} not scored)"
    critical = outcome["critical_misses"]
    misses = outcome["misses"]
    unreadable = outcome["unreadable"]
    if unreadable:  # this document's ground truth is of a type the field's matcher never reads
        said = f"could not score: {', '.join(unreadable)}"
        reasoning += f"; {said}"
        misses = [said, *misses]
    if critical:  # fails the evaluator, and its case, whatever the weighted score: said first
        said = f"critical field missed: {', '.join(critical)}"
        reasoning += f"; {said}"
        misses = [said, *misses]
        typed.failed_critical = critical
    return processed_result(
        name=name,
        type=config.type,
        score=outcome["score"],
        weight=weight,
        hits=outcome["hits"],
        misses=misses,
        reasoning=reasoning,
        details=to_details(typed),
        verdict="fail" if critical or unreadable else None,
    ).keep_fields(typed.fields)
