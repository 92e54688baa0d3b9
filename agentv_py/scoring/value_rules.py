"""A `field_accuracy` field's value matched by the matcher its spec names (SPEC §3.1), for every
match type but `items` (which scores sub-fields: the evaluator's): the scalar matchers, and the
three that combine them.

- `any`: the matchers of `of`, tried in order; the first that can read the expected value decides
  (a number here, a string there: `of: [numeric_tolerance, fuzzy]`).
- `set`: two lists of values as multisets: each expected value paired with at most one answer
  value that passes `of` (default `exact`), the pairs chosen to maximise the total score.
- `count`: the length of the answer's list, against the expected list's length or `min`/`max`.

Pure and never raising, like the matchers in `scoring.match`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, cast

from agentv_py.models.fields import FieldSpec
from agentv_py.scoring.anls import match_anls
from agentv_py.scoring.assignment import greedy_pairs, linear_sum_assignment
from agentv_py.scoring.dates import match_date
from agentv_py.scoring.error_rates import match_error_rate
from agentv_py.scoring.items import expected_items_problem
from agentv_py.scoring.match import (
    MatchResult,
    json_type,
    match_exact,
    match_fuzzy,
    match_numeric,
    numeric_truth_problem,
    shown,
)
from agentv_py.scoring.paths import is_empty, resolve
from agentv_py.scoring.tables import match_table

PAIRED_EXACTLY = 40_000  # `set`: above this many (expected x answer) cells, values pair greedily
DEFAULT_OF = (FieldSpec.model_construct(path="", match="exact"),)


def match_value(spec: FieldSpec, candidate: Any, expected: Any) -> MatchResult:
    """The field's value through its matcher (not `items`)."""
    if spec.match == "numeric_tolerance":
        result = match_numeric(candidate, expected, spec.tolerance or 0.0, spec.relative)
        return _typed(result, expected, ("number", "string"))
    if spec.match == "fuzzy":
        return _typed(match_fuzzy(candidate, expected, spec.threshold, spec.algorithm, spec.case_sensitive), expected)
    if spec.match in ("cer", "wer"):
        return _typed(match_error_rate(spec.match, candidate, expected, spec.threshold, spec.case_sensitive), expected)
    if spec.match == "table":
        result = match_table(candidate, expected, spec.metric or "teds", spec.threshold)
        return _typed(result, expected, ("string", "array"))
    if spec.match == "anls":
        return _typed(match_anls(candidate, expected, spec.threshold), expected, ("string", "number", "array"))
    if spec.match == "date":
        result = match_date(candidate, expected, spec.date_formats, spec.date_unsettled)
        return result if isinstance(expected, (str, dt.date)) else _typed(result, expected)
    if spec.match == "any":
        return match_any(spec.of or DEFAULT_OF, candidate, expected)
    if spec.match == "set":
        return match_set(spec.of or DEFAULT_OF, candidate, expected)
    if spec.match == "count":
        return match_count(spec, candidate, expected)
    return match_exact(candidate, expected)


def _typed(result: MatchResult, expected: Any, reads: tuple[str, ...] = ("string",)) -> MatchResult:
    """Mark a refusal of the expected value as a type the matcher never reads (`wrong_type`): the
    field cannot be scored in this case, and says so; the evaluator goes on with the others."""
    if result.bad_expected and json_type(expected) not in reads:
        result.wrong_type = True
    return result


def match_any(specs: Sequence[FieldSpec], candidate: Any, expected: Any) -> MatchResult:
    """`match: any`: the first matcher of `specs` that can read the expected value decides; `info`
    names it (`matcher`). None can: the field cannot be scored, each matcher's reason given."""
    refusals = []
    for spec in specs:
        result = match_value(spec, candidate, expected)
        if not result.bad_expected:
            result.info["matcher"] = spec.match
            return result
        refusals.append(f"{spec.match}: {result.reason}")
    return MatchResult(
        False, 0.0, f"no matcher of 'any' reads the expected value ({'; '.join(refusals)})", bad_expected=True
    )


def _not_a_list(expected: Any, what: str) -> MatchResult:
    reason = f"expected value for match '{what}' is {json_type(expected)}, not a list"
    return MatchResult(False, 0.0, reason, bad_expected=True, wrong_type=True)


def match_set(specs: Sequence[FieldSpec], candidate: Any, expected: Any) -> MatchResult:
    """`match: set`: lists compared as multisets. Each expected value pairs with at most one
    answer value that passes `match_any(specs)`; the pairs maximise the summed scores (optimal
    assignment; greedy, best pair first, above PAIRED_EXACTLY cells). Score: the summed pair
    scores over max(expected, answer) values; a hit when every value on both sides is paired."""
    if not isinstance(expected, list):
        return _not_a_list(expected, "set")
    for index, value in enumerate(expected):
        problem = match_any(specs, value, value)
        if problem.bad_expected:
            return MatchResult(False, 0.0, f"expected value {index}: {problem.reason}", bad_expected=True)
    if not isinstance(candidate, list):
        reason = f"answer is {json_type(candidate)}, not a list; 0 of {len(expected)} values matched"
        return MatchResult(False, 0.0, reason, {"values": _counts(len(expected), 0, 0)})
    denominator = max(len(expected), len(candidate))
    keys = _exact_keys(specs, expected, candidate)
    if keys is not None:  # exact scalars: a multiset count, no pairing matrix
        missing, extra = _unpaired(expected, candidate, *keys)
        matched = len(expected) - len(missing)
        score = 1.0 if denominator == 0 else matched / denominator
    else:
        scores = [[_pair_score(specs, got, want) for got in candidate] for want in expected]
        pairs = [(i, j) for i, j in _assign(scores) if scores[i][j] > 0]
        matched = len(pairs)
        paired = ({i for i, _ in pairs}, {j for _, j in pairs})
        missing = [want for i, want in enumerate(expected) if i not in paired[0]]
        extra = [got for j, got in enumerate(candidate) if j not in paired[1]]
        score = 1.0 if denominator == 0 else sum(scores[i][j] for i, j in pairs) / denominator
    info: dict[str, Any] = {"values": _counts(len(expected), len(candidate), matched)}
    if not missing and not extra:
        return MatchResult(True, score, None, info)
    reason = f"{matched} of {len(expected)} values matched; {len(missing)} missing, {len(extra)} extra"
    firsts = [f"first missing: {shown(missing[0])}"] if missing else []
    firsts += [f"first extra: {shown(extra[0])}"] if extra else []
    return MatchResult(False, score, f"{reason} ({', '.join(firsts)})", info)


def _exact_key(value: Any) -> tuple[str, Any] | None:
    """What `exact` compares of a scalar (1 and 1.0 alike, `true` not 1), or None (not a plain scalar)."""
    if value is None or isinstance(value, (bool, str)):
        return json_type(value), value
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return "number", Fraction(value)
    return None


def _exact_keys(
    specs: Sequence[FieldSpec], expected: list[Any], candidate: list[Any]
) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]] | None:
    """Both lists' `_exact_key`s when `of` is `exact` alone and every value is a plain scalar, else None."""
    if [spec.match for spec in specs] != ["exact"]:
        return None
    wanted, given = [_exact_key(value) for value in expected], [_exact_key(value) for value in candidate]
    if any(key is None for key in wanted) or any(key is None for key in given):
        return None
    return cast("list[tuple[str, Any]]", wanted), cast("list[tuple[str, Any]]", given)


def _unpaired(
    expected: list[Any], candidate: list[Any], wanted: list[tuple[str, Any]], given: list[tuple[str, Any]]
) -> tuple[list[Any], list[Any]]:
    """The expected values left unpaired (in their order) and the answer's (in theirs)."""
    available = Counter(given)
    missing = []
    for value, key in zip(expected, wanted, strict=True):
        if available[key]:
            available[key] -= 1
        else:
            missing.append(value)
    extra = []
    for value, key in zip(candidate, given, strict=True):
        if available[key]:
            available[key] -= 1
            extra.append(value)
    return missing, extra


def _counts(expected: int, actual: int, matched: int) -> dict[str, int]:
    return {"expected": expected, "actual": actual, "matched": matched}


def _pair_score(specs: Sequence[FieldSpec], got: Any, want: Any) -> float:
    result = match_any(specs, got, want)
    return result.score if result.passed else 0.0


def _assign(scores: list[list[float]]) -> list[tuple[int, int]]:
    """The pairs of the best total score: optimal, or greedy above PAIRED_EXACTLY cells."""
    if not scores or not scores[0]:
        return []
    if len(scores) * len(scores[0]) <= PAIRED_EXACTLY:
        return linear_sum_assignment(scores, maximize=True)
    ranked = sorted(
        ((score, i, j) for i, row in enumerate(scores) for j, score in enumerate(row) if score > 0),
        key=lambda cell: (-cell[0], cell[1], cell[2]),
    )
    return [(i, j) for i, j, _score in greedy_pairs(ranked)]


def match_count(spec: FieldSpec, candidate: Any, expected: Any) -> MatchResult:
    """`match: count`: the answer's list has as many entries as the expected list, or (with
    `min` / `max`) a number within those bounds, whatever the ground truth."""
    if not spec.bounded and not isinstance(expected, list):
        return _not_a_list(expected, "count")
    if not isinstance(candidate, list):
        return MatchResult(False, 0.0, f"answer is {json_type(candidate)}, not a list")
    count = len(candidate)
    info: dict[str, Any] = {"count": count}
    if not spec.bounded:
        info["expected_count"] = len(expected)
        if count == len(expected):
            return MatchResult(True, 1.0, None, info)
        return MatchResult(False, 0.0, f"count {count}, expected {len(expected)}", info)
    if spec.min is not None and count < spec.min:
        return MatchResult(False, 0.0, f"count {count}, expected at least {spec.min}", info)
    if spec.max is not None and count > spec.max:
        return MatchResult(False, 0.0, f"count {count}, expected at most {spec.max}", info)
    return MatchResult(True, 1.0, None, info)


def truth_problem(spec: FieldSpec, want: Any) -> MatchResult | None:
    """The refusal of a field's expected value by its matcher (the value matched against itself;
    for `items`, the list and each item's sub-fields), or None when it can be scored."""
    if spec.match == "items":
        return _items_truth_problem(spec, want)
    if spec.match == "exact":  # exact compares any two JSON values: it refuses no expected value
        return None
    if spec.match == "numeric_tolerance":  # its refusal depends on the expected value alone
        refused = numeric_truth_problem(want)
        return None if refused is None else _typed(refused, want, ("number", "string"))
    result = match_value(spec, want, want)
    return result if result.bad_expected else None


def _items_truth_problem(spec: FieldSpec, want: Any) -> MatchResult | None:
    problem = expected_items_problem(want)
    if problem is not None:
        return MatchResult(False, 0.0, problem, bad_expected=True, wrong_type=not isinstance(want, list))
    for index, item in enumerate(want):
        for sub in spec.fields or []:
            value = resolve(item, sub.path)
            refused = None if is_empty(value) else truth_problem(sub, value)
            if refused is not None:  # `info.path`: the item's sub-field the reason is about
                at = f"{spec.path}[{index}].{sub.path}"
                return MatchResult(False, 0.0, refused.reason, {"path": at}, bad_expected=True)
    return None
