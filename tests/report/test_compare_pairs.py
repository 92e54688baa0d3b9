"""compare's field moves between two records (report/compare_pairs.py): the fast path for two
compact records of the same fields in the same order against the definition (each field of NEW
by slot against BASE's status), over generated records of every kind."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.report.compare_pairs import _field_moves
from agentv_py.report.compare_store import ABSENT, HIT, HIT_TO_MISS, MISS, MISS_TO_HIT, OTHER
from agentv_py.report.lean_sums import WIDTH, pack

STATUSES = st.sampled_from([ABSENT, HIT, MISS, OTHER])


def defined_moves(before: list[int], after: list[int]) -> list[tuple[int, int]]:
    was = {before[at]: before[at + 1] for at in range(0, len(before), WIDTH)}
    moves = []
    for at in range(0, len(after), WIDTH):
        slot, now = after[at], after[at + 1]
        if (was.get(slot, ABSENT), now) == (HIT, MISS):
            moves.append((slot, HIT_TO_MISS))
        elif (was.get(slot, ABSENT), now) == (MISS, HIT):
            moves.append((slot, MISS_TO_HIT))
    return moves


def record(slots: list[int], statuses: list[int], counts: list[int]) -> list[int]:
    flat: list[int] = []
    for slot, status, count in zip(slots, statuses, counts, strict=False):
        flat += (slot, status, count, 0, count % 2, 1)
    return flat


@settings(max_examples=300, deadline=None)
@given(
    slots=st.lists(st.integers(0, 300), unique=True, max_size=12),
    before=st.lists(STATUSES, min_size=12, max_size=12),
    after=st.lists(STATUSES, min_size=12, max_size=12),
    counts=st.lists(st.integers(0, 300), min_size=12, max_size=12),
    reorder=st.booleans(),
    drop=st.integers(0, 3),
)
def test_field_moves_are_the_defined_moves(slots, before, after, counts, reorder, drop) -> None:
    base = record(slots, before, counts)
    new_slots = list(reversed(slots)) if reorder else slots
    new = record(new_slots[: max(0, len(new_slots) - drop)], after, [c // 2 for c in counts])
    assert _field_moves(pack(base), pack(new)) == defined_moves(base, new)


def test_field_moves_of_compact_records_of_the_same_fields() -> None:
    base = record([0, 1, 2], [HIT, MISS, HIT], [1, 1, 1])
    new = record([0, 1, 2], [MISS, HIT, OTHER], [1, 0, 1])
    assert pack(base)[0] == pack(new)[0] == 0  # compact: the fast path
    assert _field_moves(pack(base), pack(new)) == [(0, HIT_TO_MISS), (1, MISS_TO_HIT)]
    assert _field_moves(pack(base), pack(base)) == []
