"""`models.indexed`: the compact id -> position map is a dict `{id: i}` in everything it answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_py.models.indexed import IdPositions


class Colliding(str):
    """An id whose hash is the same as every other's: lookups must compare the ids themselves."""

    def __hash__(self) -> int:
        return 7


@given(st.lists(st.text(max_size=12), unique=True), st.lists(st.text(max_size=12)))
def test_id_positions_answer_as_a_dict(ids, others):
    positions, expected = IdPositions(ids), {case_id: i for i, case_id in enumerate(ids)}
    assert dict(positions) == expected and list(positions) == ids and len(positions) == len(ids)
    for key in [*ids, *others]:
        assert (key in positions, positions.get(key, -1)) == (key in expected, expected.get(key, -1))


CASES = {
    "empty": ([], "a"),
    "absent": (["a", "b"], "c"),
    "same hash, absent": ([Colliding("a"), Colliding("b")], Colliding("c")),
}


@pytest.mark.parametrize("ids, absent", CASES.values(), ids=CASES.keys())
def test_an_absent_id_is_a_key_error(ids, absent):
    with pytest.raises(KeyError):
        IdPositions(ids)[absent]


def test_ids_with_one_hash_are_told_apart():
    ids = [Colliding(f"case-{i}") for i in range(50)]
    positions = IdPositions(ids)
    assert [positions[Colliding(f"case-{i}")] for i in range(50)] == list(range(50))
