"""`truth_problem` judges an expected value without matching it against itself for `exact` and
`numeric_tolerance` (the per-case cost of every field_accuracy field): the shortcut must refuse
exactly what the full self-match refuses, with the same reason and the same flags."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.models.fields import FieldSpec
from agentv_py.scoring.value_rules import match_value, truth_problem

SPECS = {
    "exact": FieldSpec.model_validate({"path": "x", "match": "exact"}),
    "numeric": FieldSpec.model_validate({"path": "x", "match": "numeric_tolerance", "tolerance": 0.5}),
    "numeric-relative": FieldSpec.model_validate(
        {"path": "x", "match": "numeric_tolerance", "tolerance": 0.1, "relative": True}
    ),
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**320)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["12", " 12.50 ", "1e3", "1,000", "$5", "nan", "inf", "-0", "1" * 400, "0x1F"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=6,
)


def _slow(spec: FieldSpec, want: Any) -> Any:
    result = match_value(spec, want, want)
    return result if result.bad_expected else None


def _shape(result: Any) -> Any:
    if result is None:
        return None
    return (result.passed, result.score, result.reason, result.info, result.bad_expected, result.wrong_type)


@pytest.mark.parametrize("name", list(SPECS))
@settings(max_examples=150, deadline=None)
@given(want=json_values)
def test_the_shortcut_refuses_what_the_self_match_refuses(name: str, want: Any) -> None:
    spec = SPECS[name]
    assert _shape(truth_problem(spec, want)) == _shape(_slow(spec, want))


@pytest.mark.parametrize(
    ("want", "reason"),
    [
        pytest.param("n/a", "expected value is not numeric: string 'n/a'", id="text"),
        pytest.param([1, 2], "expected value is not numeric: array", id="list"),
        pytest.param(float("inf"), "expected value is not a finite number (inf)", id="infinity"),
    ],
)
def test_numeric_refusals_keep_their_text(want: Any, reason: str) -> None:
    refused = truth_problem(SPECS["numeric"], want)
    assert refused is not None and refused.bad_expected
    assert refused.reason == reason


def test_a_big_integer_is_a_usable_expected_number() -> None:
    assert truth_problem(SPECS["numeric"], 10**400) is None
