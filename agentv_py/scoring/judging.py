"""Pure parts of LLM judging: templates, reply extraction, reply schemas, dimension and rubric scores.

A judge reply is used only when it is JSON (the whole reply, or one fenced ```json block) and
validates against the schema; nothing is guessed from prose and no score is clamped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.models.judges import TEMPLATE_ALIASES, TEMPLATE_VARIABLE_RE, RubricItem
from agentv_py.scoring.jsontext import TOO_DEEP, fenced_blocks, loads
from agentv_py.scoring.trace import js_number


def render_template(template: str, values: Mapping[str, str]) -> str:
    """Replace `{{ name }}` (and AgentV's alias names) with their values; unknown names were
    rejected at load time and are left as they are."""

    def one(match: re.Match[str]) -> str:
        name = TEMPLATE_ALIASES.get(match.group(1), match.group(1))
        return values.get(name, match.group(0))

    return TEMPLATE_VARIABLE_RE.sub(one, template)


def extract_json(reply: str) -> tuple[Any, str | None]:
    """(value, None) when the reply is JSON or holds exactly one fenced JSON block, else (None, why).

    Strict JSON (`jsontext.loads`): NaN and Infinity are refused, so a NaN score can never slip
    past a range check; JSON inside prose is not picked out (that would be guessing)."""
    text = reply.strip()
    try:
        return loads(text), None
    except ValueError as exc:
        if str(exc) == TOO_DEEP:
            return None, f"the reply is {TOO_DEEP}"
    fences = fenced_blocks(text)
    if len(fences) == 1:
        try:
            return loads(fences[0]), None
        except ValueError as exc:
            return None, f"the fenced block is not valid JSON ({exc})"
    if len(fences) > 1:
        return None, f"the reply holds {len(fences)} fenced blocks; exactly one JSON object was asked for"
    return None, "the reply is not JSON"


_STRINGS = {"type": "array", "items": {"type": "string"}}
_UNIT = {"type": "number", "minimum": 0, "maximum": 1}


def score_schema() -> dict[str, Any]:
    """{score, hits?, misses?, reasoning?, details?}."""
    return {
        "type": "object",
        "required": ["score"],
        "properties": {
            "score": _UNIT,
            "hits": _STRINGS,
            "misses": _STRINGS,
            "reasoning": {"type": "string"},
            "details": {"type": "object"},
        },
    }


def dimensions_schema(weights: Mapping[str, float]) -> dict[str, Any]:
    """{dimensions: {name: score or {score, reasoning?}}, hits?, misses?, reasoning?, details?}."""
    dimension = {
        "anyOf": [
            _UNIT,
            {"type": "object", "required": ["score"], "properties": {"score": _UNIT, "reasoning": {"type": "string"}}},
        ]
    }
    schema = score_schema()
    schema["required"] = ["dimensions"]
    del schema["properties"]["score"]
    schema["properties"]["dimensions"] = {
        "type": "object",
        "required": list(weights),
        "properties": dict.fromkeys(weights, dimension),
        "additionalProperties": False,
    }
    return schema


def rubric_schema(ids: Sequence[str]) -> dict[str, Any]:
    """{checks: [{id, satisfied, reasoning?}], overall_reasoning?}."""
    return {
        "type": "object",
        "required": ["checks"],
        "properties": {
            "checks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "satisfied"],
                    "properties": {
                        "id": {"enum": list(ids)},
                        "satisfied": {"type": "boolean"},
                        "reasoning": {"type": "string"},
                    },
                },
            },
            "overall_reasoning": {"type": "string"},
        },
    }


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """The most relevant way `value` fails the schema, as one line, or None when it is valid."""
    import jsonschema  # lazy: only runs with LLM judges import it

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    message = error.message
    if len(message) > 160:
        message = message[:157] + "..."
    return f"{where}: {message}" if where else message


@dataclass
class DimensionScore:
    score: float
    breakdown: dict[str, dict[str, Any]]  # name -> {score, weight, reasoning?}


def dimension_score(reported: Mapping[str, Any], weights: Mapping[str, float]) -> DimensionScore:
    """Weighted mean of schema-valid dimension scores (numbers or {score, reasoning})."""
    breakdown: dict[str, dict[str, Any]] = {}
    total = math.fsum(weights.values())
    weighted = 0.0
    for name, weight in weights.items():
        value = reported[name]
        entry = {"score": float(value["score"] if isinstance(value, dict) else value), "weight": weight}
        if isinstance(value, dict) and isinstance(value.get("reasoning"), str):
            entry["reasoning"] = value["reasoning"]
        breakdown[name] = entry
        weighted += entry["score"] * weight
    return DimensionScore(weighted / total, breakdown)


@dataclass
class RubricOutcome:
    score: float
    required_failed: list[str]  # ids of required rubric items that are not satisfied
    hits: list[str]
    misses: list[str]
    checks: list[dict[str, Any]]


def rubric_checks_problem(checks: Sequence[Mapping[str, Any]], rubrics: Sequence[RubricItem]) -> str | None:
    """Every rubric id checked exactly once (the schema has checked the shape)."""
    seen = [c["id"] for c in checks]
    duplicated = sorted({i for i in seen if seen.count(i) > 1})
    if duplicated:
        return f"checks: rubric {', '.join(duplicated)} checked more than once"
    missing = [r.id for r in rubrics if r.id not in seen]
    if missing:
        return f"checks: no check for rubric {', '.join(missing)}"
    return None


def rubric_outcome(checks: Sequence[Mapping[str, Any]], rubrics: Sequence[RubricItem]) -> RubricOutcome:
    """Score = satisfied weight / total weight; hits and misses `[id] description: reasoning`."""
    by_id = {c["id"]: c for c in checks}
    total = math.fsum(r.weight for r in rubrics)
    satisfied = 0.0
    hits: list[str] = []
    misses: list[str] = []
    failed: list[str] = []
    ordered: list[dict[str, Any]] = []
    for rubric in rubrics:
        check = by_id[rubric.id]
        reasoning = check.get("reasoning") or ""
        line = f"[{rubric.id}] {rubric.description}" + (f": {reasoning}" if reasoning else "")
        ordered.append(
            {
                "id": rubric.id,
                "satisfied": check["satisfied"],
                "weight": rubric.weight,
                "required": rubric.required,
                "reasoning": reasoning,
            }
        )
        if check["satisfied"]:
            satisfied += rubric.weight
            hits.append(line)
        else:
            misses.append(line)
            if rubric.required:
                failed.append(rubric.id)
    return RubricOutcome(satisfied / total if total > 0 else 0.0, failed, hits, misses, ordered)


# AgentV v4.42.4's rubric operator guidance, verbatim (graders/rubric-operators.ts, MIT licence,
# (c) EntityProcess): one paragraph per operator the rubric uses, in order of first use.
OPERATOR_GUIDANCE = {
    "correctness": (
        "Correctness: mark satisfied only when the answer positively supports or fulfills the outcome. "
        "Omission or contradiction should not satisfy it."
    ),
    "contradiction": (
        "Contradiction guard: mark satisfied when the answer does not make a claim that contradicts the "
        "outcome. Do not require the answer to mention the outcome; mark unsatisfied only for incompatible "
        "claims."
    ),
}


def operator_guidance(rubrics: Sequence[RubricItem]) -> list[str]:
    """The guidance paragraphs for the operators the items use (none: an empty list)."""
    used = dict.fromkeys(r.operator for r in rubrics if r.operator)
    return [OPERATOR_GUIDANCE[operator] for operator in used]


def rubric_listing(rubrics: Sequence[RubricItem]) -> str:
    """The checklist items, one line each (`- [id] description (required, weight 1)`, then AgentV's
    ` (operator: X)` when given), under AgentV's `Operator guidance:` bullets when an item has one."""
    lines = [
        f"- [{r.id}] {r.description} ({'required' if r.required else 'optional'}, weight {r.weight:g})"
        + (f" (operator: {r.operator})" if r.operator else "")
        for r in rubrics
    ]
    guidance = operator_guidance(rubrics)
    if guidance:
        lines = ["", "Operator guidance:", *(f"- {g}" for g in guidance), "", *lines]
    return "\n".join(lines)


def uses_score_ranges(rubrics: Sequence[RubricItem]) -> bool:
    """AgentV's switch: one item with score_ranges makes the whole rubric scored 0-10 per item."""
    return any(r.score_ranges for r in rubrics)


def score_ranges_schema(ids: Sequence[str]) -> dict[str, Any]:
    """{checks: [{id, score: integer 0-10, reasoning?}], overall_reasoning?} (AgentV's reply)."""
    return {
        "type": "object",
        "required": ["checks"],
        "properties": {
            "checks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "score"],
                    "properties": {
                        "id": {"enum": list(ids)},
                        "score": {"type": "integer", "minimum": 0, "maximum": 10},
                        "reasoning": {"type": "string"},
                    },
                },
            },
            "overall_reasoning": {"type": "string"},
        },
    }


def gate_label(rubric: RubricItem) -> str | None:
    """An item's minimum as the prompt's `[REQUIRED: min score X]` shows it: `min_score` as written
    (0.8, AgentV v4.42, printed as JavaScript prints it), else the 0-10 score (8; 10 for a required
    item); None without a gate."""
    if rubric.min_score is not None:
        return js_number(rubric.min_score)
    return None if rubric.gate_of_10 is None else str(rubric.gate_of_10)


def score_ranges_listing(rubrics: Sequence[RubricItem]) -> str:
    """The criteria as AgentV's score-range prompt listed them: a heading per item with its weight
    (when not 1) and minimum, its description, then its bands."""
    lines: list[str] = []
    for rubric in rubrics:
        weight = f" (weight: {rubric.weight:g})" if rubric.weight != 1.0 else ""
        label = gate_label(rubric)
        minimum = f" [REQUIRED: min score {label}]" if label is not None else ""
        lines += ["", f"### Criterion: {rubric.id}{weight}{minimum}"]
        if rubric.operator:
            lines.append(f"Operator: {rubric.operator}")
        if rubric.description:
            lines.append(f"Description: {rubric.description}")
        if rubric.score_ranges:
            lines.append("Score ranges:")
            lines += [f"  - Score {band.label}: {band.description}" for band in rubric.score_ranges]
    guidance = operator_guidance(rubrics)
    if guidance:
        lines += ["", *guidance]
    return "\n".join(lines).lstrip("\n")


@dataclass
class ScoreRangeOutcome:
    score: float
    required_failed: list[str]  # ids of items scored below their minimum
    hits: list[str]
    misses: list[str]
    checks: list[dict[str, Any]]
    raw_scores: dict[str, int]


HIT_SCORE = 7  # AgentV: an item scoring 7/10 or more (and not below its minimum) is a hit


def score_range_outcome(checks: Sequence[Mapping[str, Any]], rubrics: Sequence[RubricItem]) -> ScoreRangeOutcome:
    """AgentV's analytic rubric score: each item's integer score 0-10 / 10, weighted mean over the
    items. An item below its minimum (`RubricItem.gate`) is a miss and fails the evaluator;
    else 7 or more is a hit. Texts: `[id] label - Score: N/10 (band): reasoning`. The schema and
    `rubric_checks_problem` have checked the reply: every id once, integers 0-10 (none clamped)."""
    by_id = {c["id"]: c for c in checks}
    total = math.fsum(r.weight for r in rubrics)
    weighted: list[float] = []
    hits: list[str] = []
    misses: list[str] = []
    failed: list[str] = []
    ordered: list[dict[str, Any]] = []
    raw: dict[str, int] = {}
    for rubric in rubrics:
        check = by_id[rubric.id]
        score = int(check["score"])
        reasoning = check.get("reasoning") or ""
        band = next((b for b in rubric.score_ranges or [] if b.score_range[0] <= score <= b.score_range[1]), None)
        line = f"[{rubric.id}] {rubric.label} - Score: {score}/10 ({band.description if band else ''})" + (
            f": {reasoning}" if reasoning else ""
        )
        raw[rubric.id] = score
        weighted.append(score * rubric.weight)  # divided by 10 once, at the end: 24 / 30 is 0.8 exactly
        entry: dict[str, Any] = {"id": rubric.id, "score": score, "weight": rubric.weight}
        if rubric.min_score is not None:
            entry["min_score"] = rubric.min_score
        elif rubric.gate_of_10 is not None:
            entry["required_min_score"] = rubric.gate_of_10
        if band is not None:
            entry["range"] = list(band.score_range)
        entry["reasoning"] = reasoning
        ordered.append(entry)
        if rubric.below_gate(score):
            failed.append(rubric.id)
            misses.append(line)
        elif score >= HIT_SCORE:
            hits.append(line)
        else:
            misses.append(line)
    return ScoreRangeOutcome(
        min(1.0, math.fsum(weighted) / (10 * total)) if total > 0 else 0.0, failed, hits, misses, ordered, raw
    )
