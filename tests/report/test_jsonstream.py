"""The streaming JSON writer (report/jsonstream.py) against `json.dumps(indent=2)`: `Objects`
(compare's changed cases, one tuple each) written byte for byte as the list of dicts would be,
hostile strings and every kind of float included."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.report.jsonstream import Objects, Pairs, write_json

KEYS = ("eval_id", "base_score", "new_score", "delta", "base_verdict", "new_verdict")
HOSTILE_TEXT = [
    "",
    "x",
    'quote " and \\ back',
    "nul\x00 esc\x1b bell\x07",
    "ünï \u202e rtl",
    "\ud800lone",
    "😀",
    "%s %d %%",
]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2 / 9 - 7 / 9, 1e300, -1e-300, 5e-324, math.inf, -math.inf, math.nan]


def written(value: Any, depth: int = 0, ensure_ascii: bool = True) -> str:
    out = io.StringIO()
    write_json(out, value, depth, ensure_ascii=ensure_ascii)
    return out.getvalue()


def as_dicts(keys: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [dict(zip(keys, row, strict=True)) for row in rows]


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("count", [0, 1, 255, 256, 257, 600])  # around the chunk of 256
def test_objects_are_written_as_json_dumps_writes_the_dicts(ensure_ascii: bool, count: int) -> None:
    rows = [
        (
            HOSTILE_TEXT[i % len(HOSTILE_TEXT)] + str(i),
            FLOATS[i % len(FLOATS)],
            FLOATS[(i * 7) % len(FLOATS)],
            FLOATS[(i * 3) % len(FLOATS)],
            [None, True, False, 0, -5, 2**70][i % 6],
            "pass",
        )
        for i in range(count)
    ]
    expected = json.dumps(as_dicts(KEYS, rows), indent=2, ensure_ascii=ensure_ascii)
    assert written(Objects(KEYS, iter(rows)), ensure_ascii=ensure_ascii) == expected
    nested = {"before": 1, "cases": Objects(KEYS, iter(rows)), "after": [1, {"a": 2}]}
    reference = {"before": 1, "cases": as_dicts(KEYS, rows), "after": [1, {"a": 2}]}
    assert written(nested, ensure_ascii=ensure_ascii) == json.dumps(reference, indent=2, ensure_ascii=ensure_ascii)
    assert written(Pairs(iter(nested.items())), 2) == written(nested, 2)


def test_objects_of_odd_keys_and_none() -> None:
    keys = ('k"ey', "%s", "\x1b", "ü")
    rows = [("a", 1.5, None, True), ("b", -0.0, 0, False)]
    assert written(Objects(keys, rows)) == json.dumps(as_dicts(keys, rows), indent=2)
    assert written(Objects((), [(), ()])) == json.dumps([{}, {}], indent=2)
    assert written({"x": Objects(keys, [])}) == json.dumps({"x": []}, indent=2)


def test_a_row_of_another_width_is_refused() -> None:
    with pytest.raises(ValueError, match="an object of 2 keys given 3 values"):
        written(Objects(("a", "b"), [(1, 2, 3)]))


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)
)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(SCALARS, SCALARS, SCALARS), max_size=40), depth=st.integers(0, 3))
def test_generated_objects_are_written_as_json_dumps_writes_them(rows: list[tuple[Any, ...]], depth: int) -> None:
    keys = ("a", "b", "c")
    expected = json.dumps(as_dicts(keys, rows), indent=2).replace("\n", "\n" + "  " * depth)
    assert written(Objects(keys, rows), depth) == expected
