"""Ground truth at load time: a case's expected value read (JSON text parsed, with bounds), the
values no evaluator could ever use refused (NaN, Infinity, integers Python cannot hold, nesting
too deep), and warnings for ground truth that can never be scored (a non-numeric expected value
for `numeric_tolerance`, an unparseable date, an invalid box or point, a field path that is in
no case's ground truth).

The warnings make the same judgement as the evaluators do at run time (the same matchers and
parsers from `scoring`), in one pass over the cases.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.finite_truth import all_finite, describe_non_finite, non_finite_at
from agentv_py.loading.source import Source
from agentv_py.loading.yaml_loader import MAX_DEPTH, int_digit_limit, nesting_depth, too_many_digits_message
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import CoordinateDistanceConfig, EvaluatorConfig, IouScoreConfig
from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
from agentv_py.scoring.geometry import is_single, parse_point, parse_shape
from agentv_py.scoring.paths import MISSING, path_problem, resolve
from agentv_py.scoring.value_rules import truth_problem

CASES_SHOWN = 5  # case ids a warning lists before "(and N more)"


class GroundTruthError(ValueError):
    """A ground truth value agentv refuses: the message says which and why."""


# ----------------------------------------------------------------------------- reading


def _parse_constant(name: str) -> Any:
    raise GroundTruthError(f"{name} in ground truth (in the JSON text): expected numbers must be finite")


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        shown = text if len(text) <= 24 else text[:21] + "..."
        raise GroundTruthError(
            f"{shown} in ground truth (in the JSON text) is beyond the double range: expected numbers must be finite"
        )
    return number


def _parse_int(text: str) -> int:
    limit = int_digit_limit()
    if limit and len(text.lstrip("-")) > limit:
        raise GroundTruthError(too_many_digits_message(" in ground truth (in the JSON text)"))
    return int(text)


def read_ground_truth(value: Any) -> Any:
    """Objects/lists as they are; a string is parsed as JSON when it is JSON, else kept as text.

    Raises GroundTruthError for JSON text holding NaN, Infinity, a number beyond the double
    range, an integer over Python's digit limit, or nesting deeper than MAX_DEPTH.
    """
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if not (stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null") or _looks_numeric(stripped)):
        return value
    try:
        parsed = json.loads(stripped, parse_constant=_parse_constant, parse_float=_parse_float, parse_int=_parse_int)
    except RecursionError:
        raise GroundTruthError(_too_deep()) from None
    except GroundTruthError:
        raise
    except ValueError:
        return value  # not JSON: text
    if stripped.count("[") + stripped.count("{") > MAX_DEPTH and nesting_depth(parsed) > MAX_DEPTH:
        raise GroundTruthError(_too_deep())
    return parsed


def _too_deep() -> str:
    return f"ground truth JSON nests deeper than {MAX_DEPTH} levels"


def _looks_numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))


def ground_truth_location(raw_case: Any, index: int) -> list[str | int]:
    """Where a case's ground truth is written: the `expected_output` shorthand, else the content
    of the last assistant message of `expected_messages` (or its alias `expected_output`)."""
    base: list[str | int] = ["evalcases", index]
    if not isinstance(raw_case, dict):
        return base
    key = "expected_messages" if "expected_messages" in raw_case else "expected_output"
    messages = raw_case.get(key)
    is_messages = (
        isinstance(messages, list) and bool(messages) and all(isinstance(m, dict) and "role" in m for m in messages)
    )
    if not is_messages:
        return [*base, key]
    assert isinstance(messages, list)
    for position in range(len(messages) - 1, -1, -1):
        if messages[position].get("role") == "assistant":
            return [*base, key, position, "content"]
    return [*base, key]


# ----------------------------------------------------------------------------- warnings


@dataclass
class _Field:
    """One field as the warnings see it: every definition of the same path for the same matcher
    (the suite's, and any case's own evaluators) counts as one, so a field gets one warning."""

    location: list[str | int]  # where it is first defined
    path_location: list[str | int]  # where that definition writes its path
    label: str  # the field as messages name it
    structured: int = 0  # cases it scores whose ground truth is a JSON object or array
    resolved: int = 0  # cases with a value at its path
    cases: int = 0  # cases it scores
    bad: list[str] = field(default_factory=list)  # ids of the first cases whose value it cannot use
    bad_count: int = 0  # how many cases' values it cannot use
    reason: str = ""  # why, for the first of them
    wrong_type: bool = False  # that value's type is one the matcher never reads: the field fails, not the evaluator
    counts: bool = False  # an unbounded `match: count` field: a value that is not a list is a load error


@dataclass
class _Check:
    """A field definition: how to pick and judge its expected value."""

    counts: _Field  # where its outcomes are counted
    path: str | None  # None: the whole ground truth
    spec: FieldSpec | None = None
    geometry: IouScoreConfig | CoordinateDistanceConfig | None = None
    verdicts: dict[tuple[type, Any], tuple[str, bool] | None] | None = None  # `_field_problem` of a text or integer


_VERDICTS_KEPT = 4096  # verdicts a check keeps (expected texts repeat: currencies, dates, codes)
_UNSEEN: Any = object()


class _Fields:
    """The checks of each evaluator list, and the fields they report to."""

    def __init__(self) -> None:
        self.fields: dict[tuple[str, str], _Field] = {}

    def _field(self, key: tuple[str, str], location: list[str | int], path_location: list[str | int]) -> _Field:
        if key not in self.fields:
            self.fields[key] = _Field(location, path_location, key[0])
        return self.fields[key]

    def checks(self, base: list[str | int], evaluators: Sequence[EvaluatorConfig]) -> list[_Check]:
        checks = []
        for e, config in enumerate(evaluators):
            if isinstance(config, FieldAccuracyConfig):
                for f, spec in enumerate(config.fields):
                    if path_problem(spec.path) is None:  # malformed paths have their own warning
                        where = [*base, e, "fields", f]
                        found = self._field((spec.path, spec.match), where, [*where, "path"])
                        checks.append(_Check(found, spec.path, spec=spec))
            elif isinstance(config, (IouScoreConfig, CoordinateDistanceConfig)):
                path = config.expected_path or config.path
                if path is None or path_problem(path) is None:
                    where = [*base, e]
                    key = [*where, "expected_path" if config.expected_path else "path"]
                    found = self._field((path or "expected_output", config.type), where, key)
                    checks.append(_Check(found, path, geometry=config))
        return checks


_EXACT_INT = 2**53  # integers a float holds exactly


def _field_problem(spec: FieldSpec, want: Any) -> tuple[str, bool] | None:
    """Why the field's matcher cannot use this expected value (the evaluator's own test:
    `truth_problem`), and whether it is a type the matcher never reads, or None."""
    if spec.match == "numeric_tolerance" and (
        type(want) is float or (type(want) is int and -_EXACT_INT < want < _EXACT_INT)
    ):
        return None  # a plain number (NaN and infinities are refused before this): the common case, fast
    if spec.match == "exact" or (spec.match == "fuzzy" and isinstance(want, str)):
        return None
    refused = truth_problem(spec, want)
    if refused is None:
        return None
    reason = refused.reason or "invalid expected value"
    at = refused.info.get("path")  # an item's sub-field: `line_items[1].quantity`
    return (f"{at}: {reason}" if at else reason), refused.wrong_type


def _geometry_problem(config: IouScoreConfig | CoordinateDistanceConfig, expected: Any) -> str | None:
    """Why an expected shape or point (alone, or any in a list) cannot be used, or None: the
    evaluator's rule, the same for a single shape and for each shape of a list."""
    if isinstance(config, IouScoreConfig):
        fmt = config.expected_format or config.format
        noun = "polygon" if fmt == "polygon" else "box"
        single = is_single(expected, fmt)
    else:
        noun = "point"
        single = not isinstance(expected, list) or (bool(expected) and not isinstance(expected[0], (list, tuple)))
    items = [("", expected)] if single else [(f" [{i}]", value) for i, value in enumerate(expected)]
    for at, value in items:
        parsed, problem = parse_shape(value, fmt) if isinstance(config, IouScoreConfig) else parse_point(value)
        if parsed is None:
            return f"invalid expected {noun}{at}: {problem}"
    return None


def _run(check: _Check, case_id: str, truth: Any) -> None:
    found = check.counts
    found.cases += 1
    if isinstance(truth, (dict, list)):
        found.structured += 1
    elif check.spec is not None:
        return  # field_accuracy skips a case whose ground truth is not a JSON object or array
    want = truth if check.path is None else resolve(truth, check.path)
    if want is MISSING:
        return
    found.resolved += 1
    if want is None:
        return  # an expected null is compared exactly (geometry skips it)
    if check.spec is not None:
        kind = want.__class__
        if kind is str or kind is int:  # the verdict is the same for the same value (floats: -0.0 == 0.0)
            if check.verdicts is None:
                check.verdicts = {}
            refused = check.verdicts.get((kind, want), _UNSEEN)
            if refused is _UNSEEN:
                refused = _field_problem(check.spec, want)
                if len(check.verdicts) < _VERDICTS_KEPT:
                    check.verdicts[kind, want] = refused
        else:
            refused = _field_problem(check.spec, want)
        reason, wrong_type = refused if refused is not None else (None, False)
    else:
        assert check.geometry is not None
        reason, wrong_type = _geometry_problem(check.geometry, want), False
    if reason is not None:
        if not found.bad:
            found.reason = reason
            found.counts = check.spec is not None and check.spec.match == "count" and not check.spec.bounded
        found.wrong_type = wrong_type and (found.wrong_type or not found.bad)  # every such case
        found.bad_count += 1
        if len(found.bad) < CASES_SHOWN:
            found.bad.append(case_id)


def _cases(found: _Field) -> str:
    shown = ", ".join(found.bad[:CASES_SHOWN])
    more = f" (and {found.bad_count - CASES_SHOWN} more)" if found.bad_count > CASES_SHOWN else ""
    return f"case{'s' if found.bad_count > 1 else ''} {shown}{more}"


class GroundTruthFields:
    """One warning per field whose ground truth can never be scored in some cases (naming
    them), and per field path that is in no case's ground truth. Fed the cases a chunk at a time
    (`add`), it keeps only the fields' counts and the ids of the cases a field cannot use."""

    def __init__(self) -> None:
        self._fields = _Fields()

    def add(self, model: Dataset, truths: Sequence[Any], offset: int = 0) -> None:
        """`model.evalcases[i]` is case `offset + i` of the dataset, `truths[i]` its expected value."""
        fields = self._fields
        suite = fields.checks(["execution", "evaluators"], model.execution.evaluators)
        for i, case in enumerate(model.evalcases):
            if case.evaluators is not None:
                checks = fields.checks(["evalcases", offset + i, case.own_key], case.evaluators)
            elif case.execution is not None and case.execution.evaluators is not None:
                checks = fields.checks(["evalcases", offset + i, "execution", "evaluators"], case.execution.evaluators)
            else:
                checks = suite
            for check in checks:
                _run(check, case.id, truths[i])

    def errors(self, source: Source) -> list[Problem]:
        """A `match: count` field without `min`/`max` whose ground truth is not a list: it counts
        nothing, so the path is wrong (a load error, where other fields only warn)."""
        return [
            source.problem(
                found.location,
                f"field '{found.label}' (match 'count') counts the expected list, but in {_cases(found)} the expected "
                f"value is not one: {found.reason}; give the list's path, or min/max bounds",
            )
            for found in self._fields.fields.values()
            if found.bad and found.counts
        ]

    def warnings(self, source: Source) -> list[Problem]:
        warnings = []
        for found in self._fields.fields.values():
            if found.bad and found.counts:
                continue  # an error (`errors`)
            if found.bad:
                which = f" (case '{found.bad[0]}')" if found.bad_count > 1 else ""
                them = "it" if found.bad_count == 1 else "them"
                those = "that case" if found.bad_count == 1 else "those cases"
                warnings.append(
                    source.problem(
                        found.location,
                        f"field '{found.label}': the expected value cannot be scored in {_cases(found)}: "
                        f"{found.reason}{which}; "
                        + (
                            f'the field will be "could not score" in {those}, and fail {them}'
                            if found.wrong_type
                            else f'{those} will be "could not score" (an evaluator error)'
                        ),
                    )
                )
            elif found.structured and not found.resolved and found.label != "expected_output":
                every_case = "the one case that uses it" if found.cases == 1 else f"all {found.cases} cases that use it"
                warnings.append(
                    source.problem(
                        found.path_location,
                        f"field '{found.label}' is in no case's ground truth (a typo in the path?); "
                        f'it will be "not scored" in {every_case}',
                    )
                )
        return warnings


def finite_problems(source: Source, raw_cases: Sequence[Any], truths: Sequence[Any]) -> list[Problem]:
    """NaN and infinities in ground truth, located (cheap when there are none: one C call)."""
    if all_finite(truths):
        return []
    problems = []
    for i, truth in enumerate(truths):
        if nesting_depth(truth) > MAX_DEPTH:  # the loader refuses such values: a second line of defence
            where = ground_truth_location(raw_cases[i] if i < len(raw_cases) else None, i)
            problems.append(source.problem(where, f"ground truth nests deeper than {MAX_DEPTH} levels"))
            continue
        found = non_finite_at(truth)
        if found is not None:
            parts, number = found
            where = ground_truth_location(raw_cases[i] if i < len(raw_cases) else None, i)
            problems.append(
                source.problem(
                    [*where, *parts],
                    f"{describe_non_finite(number)} in ground truth: expected numbers must be finite",
                )
            )
    return problems


__all__ = [
    "GroundTruthError",
    "finite_problems",
    "GroundTruthFields",
    "ground_truth_location",
    "read_ground_truth",
]
