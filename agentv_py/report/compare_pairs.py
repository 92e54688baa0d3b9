"""The pairing behind `agentv compare` (report/compare.py): the cases in both files' tables of the
store (report/compare_store.py), in order of id, walked once for the means, pass rates, verdict
moves and score deltas; the changed cases and each field's moves are written back to the store
for the reports to read in order.

A pair of equal records (and equal scores and verdicts) is read as its two scores and verdicts
only: its id and records are not fetched. Two records of the same fields in the same order (the
common case) are compared by their status bytes alone.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from agentv_py.report.compare_store import (
    ABSENT,
    BATCH,
    HIT,
    HIT_TO_MISS,
    MISS,
    MISS_TO_HIT,
    VERDICTS,
    Fields,
    Store,
    blob,
)
from agentv_py.report.lean_sums import COMPACT, WIDTH, unpack

_DIRECTIONS = {(HIT, MISS): HIT_TO_MISS, (MISS, HIT): MISS_TO_HIT}  # a field's move between the runs

# Every case in both files; its id only when something may have changed, its records only when
# they differ (equal records: no field moved).
_PAIRS = (
    "SELECT b.score, n.score, b.verdict, n.verdict, b.errored OR n.errored,"
    " CASE WHEN b.score = n.score AND b.verdict = n.verdict AND b.fields = n.fields THEN NULL ELSE b.id END,"
    " CASE WHEN b.fields = n.fields THEN NULL ELSE b.fields END,"
    " CASE WHEN b.fields = n.fields THEN NULL ELSE n.fields END"
    " FROM base b JOIN new n ON n.id = b.id"
)


@dataclass
class Paired:
    """What the pairing found (the changed cases and field moves are in the store, their counts
    per field in `Fields.moves`)."""

    shared: int = 0  # cases in both files, errored or not
    errored: int = 0  # of those, the ones with an error row in either file
    deltas: array[float] = field(default_factory=lambda: array("d"))  # NEW's score - BASE's, per scored pair
    base_mean: float | None = None
    new_mean: float | None = None
    base_pass_rate: float | None = None
    new_pass_rate: float | None = None
    pass_to_fail: int = 0
    fail_to_pass: int = 0
    verdict_changes: dict[str, int] = field(default_factory=dict)  # "pass->fail" -> cases
    changed: int = 0  # scored pairs whose score or verdict changed


def pair(store: Store, fields: Fields) -> Paired:
    """Walk the cases in both files (see the module docstring); the changed cases go to the
    store's `changed` table (indexed by delta and id), the field moves to `moves`."""
    found = Paired()
    deltas = found.deltas
    base_sum = new_sum = 0.0
    shared = errored = base_passed = new_passed = pass_to_fail = fail_to_pass = 0
    verdict_moves: dict[tuple[int, int], int] = {}
    changed: list[tuple[bytearray, float, float, float, int, int]] = []
    moves: list[tuple[int, int, bytearray]] = []
    add_delta, add_changed, add_move, moved = deltas.append, changed.append, moves.append, fields.moves
    for before, after, was, now, failed, key, base_fields, new_fields in store.rows(_PAIRS):
        shared += 1
        if failed:
            errored += 1
            continue
        delta = after - before
        add_delta(delta)
        base_sum += before
        new_sum += after
        if was == 0:
            base_passed += 1
        if now == 0:
            new_passed += 1
        if key is None:  # the same score, verdict and record
            continue
        key = blob(key)
        if was != now:
            pass_to_fail += was == 0
            fail_to_pass += now == 0
            verdict_moves[was, now] = verdict_moves.get((was, now), 0) + 1
            add_changed((key, before, after, delta, was, now))
        elif delta != 0:
            add_changed((key, before, after, delta, was, now))
        if base_fields is not None:
            for slot, direction in _field_moves(base_fields, new_fields):
                add_move((slot, direction, key))
                moved[slot, direction] = moved.get((slot, direction), 0) + 1
            if len(moves) >= BATCH:
                store.db.executemany("INSERT INTO moves VALUES (?, ?, ?)", moves)
                moves.clear()
        if len(changed) >= BATCH:
            store.db.executemany("INSERT INTO changed VALUES (?, ?, ?, ?, ?, ?)", changed)
            found.changed += len(changed)
            changed.clear()
    store.db.executemany("INSERT INTO changed VALUES (?, ?, ?, ?, ?, ?)", changed)
    store.db.executemany("INSERT INTO moves VALUES (?, ?, ?)", moves)
    store.db.execute("CREATE INDEX changed_order ON changed (delta, id, base, new, bv, nv)")  # covers `SELECT *`
    found.changed += len(changed)
    found.shared, found.errored = shared, errored
    found.pass_to_fail, found.fail_to_pass = pass_to_fail, fail_to_pass
    found.verdict_changes = {f"{VERDICTS[was]}->{VERDICTS[now]}": n for (was, now), n in verdict_moves.items()}
    if deltas:
        found.base_mean, found.new_mean = base_sum / len(deltas), new_sum / len(deltas)
        found.base_pass_rate, found.new_pass_rate = base_passed / len(deltas), new_passed / len(deltas)
    return found


def _field_moves(base_fields: bytes, new_fields: bytes) -> list[tuple[int, int]]:
    """(slot, direction) of each field that went hit -> miss or back between two different
    records, in NEW's order of fields."""
    if base_fields[0] == COMPACT == new_fields[0] and base_fields[1::WIDTH] == new_fields[1::WIDTH]:
        # the same fields in the same order (nearly always): only their statuses are compared
        found = []
        for at, (was, now) in enumerate(zip(base_fields[2::WIDTH], new_fields[2::WIDTH], strict=True)):
            if was != now and (direction := _DIRECTIONS.get((was, now))) is not None:
                found.append((base_fields[1 + at * WIDTH], direction))
        return found
    before_flat, new_flat = unpack(base_fields), unpack(new_fields)
    status_before = dict(zip(before_flat[0::WIDTH], before_flat[1::WIDTH], strict=True))
    return [
        (slot, direction)
        for slot, status in zip(new_flat[0::WIDTH], new_flat[1::WIDTH], strict=True)
        if (direction := _DIRECTIONS.get((status_before.get(slot, ABSENT), status))) is not None
    ]
