"""`finite_truth.all_finite`, which looks for the bytes of a NaN or an infinity in the marshalled
values, against the C JSON encoder's check it stands in for (and falls back on): the same answer
for any values, hypothesis-generated with NaNs, infinities and doubles of any bit pattern."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.loading.finite_truth import all_finite


def by_the_json_encoder(values: list[Any]) -> bool:
    try:
        json.dumps(values, allow_nan=False, default=lambda _: None, skipkeys=True, check_circular=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


doubles = st.binary(min_size=8, max_size=8).map(lambda raw: struct.unpack("<d", raw)[0])
scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | doubles | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=4) | st.floats() | st.integers(-3, 3), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(values, max_size=6))
def test_any_values_are_judged_as_the_json_encoder_judges_them(truths: list[Any]) -> None:
    assert all_finite(truths) == by_the_json_encoder(truths)


@pytest.mark.parametrize(
    "truths",
    [
        [{"a": float("nan")}],
        [[1.5, float("inf")]],
        [{"b": -float("inf")}],
        [{float("nan"): 1}],
        [struct.unpack("<d", b"\x01\x00\x00\x00\x00\x00\xf8\xff")[0]],  # a negative NaN with a payload
        [{"x": "\xff" * 300, "y": [-1, 2**31 - 1, 0.1]}, [float("nan")]],
        [{"ok": [0.1, -2.5, 1e308, 5e-324, "text ÿ"]}],
        [{1, 2.5}],  # a set: marshal writes it, the encoder skips it
    ],
    ids=["nan", "inf", "minus-inf", "nan-key", "nan-payload", "nan-after-ff-bytes", "finite", "set"],
)
def test_hand_written_values(truths: list[Any]) -> None:
    assert all_finite(truths) == by_the_json_encoder(truths)
