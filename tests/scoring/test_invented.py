"""`extra_fields: penalise`: which keys an answer invents beyond its ground truth (`invented`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.scoring.invented import invented


@pytest.mark.parametrize(
    ("answer", "truth", "found"),
    [
        ({"a": 1}, {"a": 2}, []),
        ({"a": 1, "b": 2}, {"a": 1}, [("b", 2)]),
        ({"a": 1, "b": None, "c": "", "d": [], "e": {}}, {"a": 1}, []),  # empty values are no claim
        ({"x": {"y": 1, "z": 2}}, {"x": {"y": 1}}, [("x.z", 2)]),
        ({"x": {"y": 1}}, {}, [("x", {"y": 1})]),  # below an invented key nothing more is counted
        ({"items": [{"a": 1, "b": 2}, {"a": 3}]}, {"items": [{"a": 1}, {"a": 3}]}, [("items[0].b", 2)]),
        ({"items": [{"a": 1}, {"z": 9}]}, {"items": [{"a": 1}]}, []),  # an extra item: the items matcher's
        ({"d": None}, {"d": None}, []),
        ("text", {"a": 1}, []),
        ({"a": 1}, None, []),
    ],
    ids=[
        "same-keys",
        "one-extra",
        "empty-extras",
        "nested",
        "invented-subtree",
        "in-list-items",
        "extra-item",
        "null-both",
        "not-an-object",
        "no-truth",
    ],
)
def test_invented_keys(answer, truth, found):
    assert invented(answer, truth) == found


def test_a_flood_of_invented_keys_stops_at_the_limit():
    answer = {f"k{i}": i for i in range(100_000)}
    assert len(invented(answer, {}, limit=1000)) == 1000


def test_deep_nesting_walks_without_recursion():
    answer: Any = {"a": 1}
    truth: Any = {}
    for _ in range(5000):
        answer, truth = {"n": answer}, {"n": truth}
    assert invented(answer, truth) == [("n." * 5000 + "a", 1)]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, _JSON)
def test_never_raises_and_every_path_is_a_key_the_truth_lacks(answer, truth):
    for path, value in invented(answer, truth):
        assert path and value not in (None, "", [], {})
