"""What `agentv metrics` and `agentv compare` add up per row, straight from a lean row's dicts
(report/lean_rows.py) into their running totals: no per-row table, no `Counts` or tuple per field.

`lean_rows.field_counts` and `lean_rows.statuses_and_counts` define what is added;
tests/report/test_lean_sums.py checks these against them row by row. A row the row model read
(`LeanRow.model`), a judge's count that is not plainly whole (a problem to describe), or a field
entry of another shape goes through those definitions as they are.

Profiled on 100k rows (docs/performance.md, "Metrics"): a table and a `Counts` per row, then
summed into the totals, were most of the time above the JSON parse for judges' `details.metrics`.
"""

from __future__ import annotations

import marshal
from array import array
from typing import Any

from agentv_py.models.field_results import read_field
from agentv_py.report.lean_rows import (
    _FIELD,
    _FIELD_REQUIRED,
    _FIELD_STATUSES,
    _SCORED,
    LeanRow,
    _typed,
    _walk,
    field_counts,
    statuses_and_counts,
)
from agentv_py.scoring.metrics import Counts, FieldKey, field_counts_of, iou_counts, row_field_counts

_STR, _LIST, _DICT = str, list, dict


class Sums:
    """Counts summed per (evaluator, field) over rows (`totals`, in the order first counted, as
    summing each row's `field_counts` table into it would order them), with an index by
    evaluator and field (no key tuple per count)."""

    __slots__ = ("_by_name", "row", "totals")

    def __init__(self, totals: dict[FieldKey, Counts]) -> None:
        self.totals = totals
        # the row being added, when its own counts are kept (the document bootstrap): per field
        # (its totals' `Counts`, by identity) the row's tp, fp, fn; None: not kept
        self.row: dict[int, list[int]] | None = None
        self._by_name: dict[str, dict[str, Counts]] = {}
        for (name, field_name), counts in totals.items():
            self._by_name.setdefault(name, {})[field_name] = counts

    def _fields_of(self, name: str) -> dict[str, Counts]:
        fields = self._by_name.get(name)
        if fields is None:
            fields = self._by_name[name] = {}
        return fields

    def add(self, name: str, field_name: str, tp: int, tn: int, fp: int, fn: int) -> None:
        fields = self._fields_of(name)
        known = fields.get(field_name)
        if known is None:
            known = fields[field_name] = self.totals[(name, field_name)] = Counts(tp, tn, fp, fn)
        else:
            known.tp += tp
            known.tn += tn
            known.fp += fp
            known.fn += fn
        if self.row is not None:
            keep_row(self.row, known, tp, fp, fn)

    def add_row(self, row: LeanRow, problems: list[str]) -> bool:
        """`field_counts(row, problems)` added in; True when the row counted any field."""
        if row.model is not None:
            counted = field_counts(row, problems)
            for (name, field_name), counts in counted.items():
                self.add(name, field_name, counts.tp, counts.tn, counts.fp, counts.fn)
            return bool(counted)
        found = False
        for name, kind, details in _walk(row.results, True):
            metrics = details.get("metrics")
            if isinstance(metrics, dict):
                found = self._add_metrics(name, kind, metrics, problems) or found
            elif kind == "field_accuracy":
                found = self._add_fields(name, details) or found
            elif kind == "iou_score" and (box := iou_counts(details)) is not None:
                self.add(name, name, box.tp, box.tn, box.fp, box.fn)
                found = True
        return found

    def _add_metrics(self, name: str, kind: str, metrics: dict[str, Any], problems: list[str]) -> bool:
        """A judge's `details.metrics`: whole counts >= 0 (`Counts.from_mapping`'s common case)
        inline; anything else read, and its problem described, by the one reader of counts."""
        self._fields_of(name)  # the evaluator's place in the order, whether or not a field counts
        found = False
        for field_name, raw in metrics.items():
            if type(raw) is _DICT:
                try:
                    tp, tn, fp, fn = raw["tp"], raw["tn"], raw["fp"], raw["fn"]
                except KeyError:  # a count left out is 0
                    get = raw.get
                    tp, tn, fp, fn = get("tp", 0), get("tn", 0), get("fp", 0), get("fn", 0)
                if (
                    type(tp) is int
                    and type(tn) is int
                    and type(fp) is int
                    and type(fn) is int
                    and tp >= 0
                    and tn >= 0
                    and fp >= 0
                    and fn >= 0
                ):
                    self.add(name, field_name, tp, tn, fp, fn)
                    found = True
                    continue
            one = {"name": name, "type": kind, "details": {"metrics": {field_name: raw}}}
            for (_, counted_name), counts in row_field_counts([one], problems).items():
                self.add(name, counted_name, counts.tp, counts.tn, counts.fp, counts.fn)
                found = True
        return found

    def _add_fields(self, name: str, details: dict[str, Any]) -> bool:
        """A `field_accuracy` result's entries (`lean_fields`): a plain one counted inline, any
        other read by the model."""
        entries = details.get("fields")
        if not isinstance(entries, list):
            return False
        self._fields_of(name)  # the evaluator's place in the order, whether or not a field counts
        found = False
        for entry in entries:
            if (
                isinstance(entry, dict)
                and _typed(entry, _FIELD, _FIELD_REQUIRED)
                and (status := entry["status"]) in _FIELD_STATUSES
                and entry.get("match") != "items"
            ):
                if status not in _SCORED:
                    continue
                outcome = _outcome(status, entry.get("expected"), entry.get("actual"))
                if outcome == _NOTHING:
                    continue
                quad = _QUADS[outcome]
                self.add(name, entry["path"], *quad)
                found = True
            elif (model := read_field(entry)) is not None and (counts := field_counts_of(model)) is not None:
                self.add(name, model.path, counts.tp, counts.tn, counts.fp, counts.fn)
                found = True
        return found


def keep_row(row: dict[int, list[int]], field: Counts, tp: int, fp: int, fn: int) -> None:
    """A row's own counts of one field (its totals' `Counts`, by identity) added to `row`."""
    keep_cells(row, id(field), tp, fp, fn)


def keep_cells(row: dict[int, list[int]], identity: int, tp: int, fp: int, fn: int) -> None:
    """`keep_row` by the field's identity."""
    kept = row.get(identity)
    if kept is None:
        row[identity] = [tp, fp, fn]
    else:
        kept[0] += tp
        kept[1] += fp
        kept[2] += fn


def signature(kept: dict[int, list[int]], positions: dict[int, int], counts: dict[FieldKey, Counts]) -> bytes:
    """A row's own counts (`kept`: per field's Counts identity, tp, fp, fn) as a compact key:
    (position, tp, fp, fn) per field, in field order, as native int64 bytes."""
    flat: list[int] = []
    for identity, (tp, fp, fn) in kept.items():
        position = positions.get(identity)
        if position is None:  # a field first counted in this row: every field's place, again
            positions.update({id(c): i for i, c in enumerate(counts.values())})
            position = positions[identity]
        flat.append(position)
        flat += (tp, fp, fn)
    cells = [flat[i : i + 4] for i in range(0, len(flat), 4)]
    cells.sort()
    return array("q", [value for cell in cells for value in cell]).tobytes()


Quad = tuple[int, int, int, int]
# what a plain field counts, by `_outcome`: nothing, TP, TN, FP, FN, or FP and FN (a wrong value)
_QUADS: tuple[Quad, ...] = ((0, 0, 0, 0), (1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0, 0, 1, 1))
_NOTHING, _TP, _TN, _FP, _FN, _FP_FN = range(6)


def _outcome(status: str, expected: Any, actual: Any) -> int:
    """`lean_rows._outcome` of a scored plain field, as an index into `_QUADS` (`_NOTHING` for
    None), its two emptiness tests (`_empty`) inline."""
    kind = type(expected)
    if kind is _STR:
        expected_empty = not expected.strip()
    else:
        expected_empty = not expected if kind is _LIST or kind is _DICT else expected is None
    kind = type(actual)
    if kind is _STR:
        actual_empty = not actual.strip()
    else:
        actual_empty = not actual if kind is _LIST or kind is _DICT else actual is None
    if expected_empty:
        return _TN if actual_empty else _FP
    if actual_empty:
        return _FN
    if status == "hit":
        return _TP
    return _FP_FN if status == "miss" else _NOTHING


# ----------------------------------------------------------------------------- compare's records

COMPACT, MARSHAL = 0, 1  # a record's first byte: its ints as bytes (each < 256), or marshalled
WIDTH = 6  # ints per field in a record: slot, status, tp, tn, fp, fn
_NO_COUNTS = (0, 0, 0, 0)


class Slots:
    """A number per (evaluator, field), in the order first seen (`of`), with an index by
    evaluator and field (no key tuple per lookup); and how `case_fields` codes a field's status
    (`status_of` a status, else `other`; `absent`: a field with counts only)."""

    __slots__ = ("_by_name", "absent", "of", "other", "status_of", "tails")

    def __init__(self, status_of: dict[str, int], other: int, absent: int) -> None:
        self.of: dict[FieldKey, int] = {}
        self._by_name: dict[str, dict[str, int]] = {}
        self.status_of, self.other, self.absent = status_of, other, absent
        # per status a plain field entry may have, what it records after its slot: its status's
        # code and counts (`_outcome`), by the index `case_fields` computes from its values
        self.tails: dict[str, tuple[tuple[int, ...], ...]] = {}
        for status in _FIELD_STATUSES:
            code = status_of.get(status, other)
            by = [(code, *_QUADS[_outcome(status, *values) if status in _SCORED else 0]) for values in _EMPTINESS]
            self.tails[status] = (*by, (code, *_NO_COUNTS))

    def fields_of(self, name: str) -> dict[str, int]:
        fields = self._by_name.get(name)
        if fields is None:
            fields = self._by_name[name] = {}
        return fields

    def slot(self, name: str, field_name: str) -> int:
        fields = self.fields_of(name)
        slot = fields.get(field_name)
        if slot is None:
            slot = fields[field_name] = self.of[(name, field_name)] = len(self.of)
        return slot


# an expected and an actual value standing for each index of `Slots.tails`: 2 when the entry's
# expected value is empty, + 1 when its actual value is; the last index, counts not taken from
# the fields (a judge's `details.metrics` stands for them)
_EMPTINESS = (("x", "x"), ("x", None), (None, "x"), (None, None))
_NOT_COUNTED = 4
_SHAPES_KEPT = 4096
# A plain entry's shape (its keys, then its values' types) -> how to read it: () when it does not
# fit `FieldOutcome` as it is (`_typed`), else (the index into `Slots.tails` its types alone decide,
# and for its expected and its actual value in turn: the type to look into, or None when the type
# decides: absent or None is empty, a number or a bool is not).
Plan = tuple[int, type | None, type | None] | tuple[()]
_plans: dict[tuple[Any, ...], Plan] = {}


def _plan(entry: dict[str, Any]) -> Plan:
    """`_plans[shape]` of `entry`, worked out (and remembered, up to `_SHAPES_KEPT` shapes)."""
    plan: Plan = ()
    if _typed(entry, _FIELD, _FIELD_REQUIRED):
        at, looks = 0, []
        for key, empty in (("expected", 2), ("actual", 1)):
            kind = type(entry.get(key))
            looks.append(kind if kind is _STR or kind is _LIST or kind is _DICT else None)
            at += empty if kind is type(None) else 0
        plan = (at, looks[0], looks[1])
    if len(_plans) < _SHAPES_KEPT:
        _plans[(*entry, *map(type, entry.values()))] = plan
    return plan


def case_fields(row: LeanRow, slots: Slots) -> list[int] | None:
    """`statuses_and_counts(row, slots.status_of, slots.other)` as one flat list, WIDTH ints per
    field (slot, status, tp, tn, fp, fn; a slot per (evaluator, field) from `slots`), in the order
    the row names them. None when a field is named twice in the row (its status and counts merge:
    `case_fields_merged`) or the row was read by the model."""
    if row.model is not None:
        return None
    flat: list[int] = []
    for result in row.results:  # results that fit the model, as dicts
        details = result.get("details", _NO_DETAILS)
        if "evaluator_results" in result or "evaluator_results" in details:  # members or nested results
            flat.clear()
            for name, kind, walked in _walk(row.results, True):  # again, in the order they are walked
                _add_result(flat, slots, name, kind, walked)
            break
        _add_result(flat, slots, result["name"], result["type"], details)
    named = flat[0::WIDTH]
    return flat if len(set(named)) == len(named) else None


_NO_DETAILS: dict[str, Any] = {}


def _add_result(flat: list[int], slots: Slots, name: str, kind: str, details: dict[str, Any]) -> None:
    """An evaluator result's fields into `flat`: `field_accuracy`'s entries, a judge's counts, an
    `iou_score`'s detections."""
    metrics = details.get("metrics")
    counted = not isinstance(metrics, dict)
    if kind == "field_accuracy" and isinstance(entries := details.get("fields"), list):
        _add_entries(flat, entries, slots, name, counted)
    if not counted:
        judged = {"name": name, "type": kind, "details": {"metrics": metrics}}
        for (_, field_name), counts in row_field_counts([judged]).items():
            flat += (slots.slot(name, field_name), slots.absent, counts.tp, counts.tn, counts.fp, counts.fn)
    elif kind == "iou_score" and (box := iou_counts(details)) is not None:
        flat += (slots.slot(name, name), slots.absent, box.tp, box.tn, box.fp, box.fn)


def _add_entries(flat: list[int], entries: list[Any], slots: Slots, name: str, counted: bool) -> None:
    """A `field_accuracy` result's entries into `flat`. A plain entry (`lean_fields`), nearly
    every one, is read inline, the most frequent work of `agentv compare`: its shape looked up
    (`_plan`, worked out once per shape), then what it records after its slot taken from
    `Slots.tails` by its status and by which of its expected and actual values are empty
    (`_outcome`). Any other entry is read by the model, as `lean_fields` reads it."""
    fields, tails, plans = slots.fields_of(name), slots.tails, _plans
    for entry in entries:
        try:
            plan = plans[(*entry, *map(type, entry.values()))]
        except KeyError:  # a shape not seen yet
            plan = _plan(entry)
        except (AttributeError, TypeError):  # not a dict: read by the model (which refuses it)
            plan = ()
        if plan and (by := tails.get(entry["status"])) is not None and entry.get("match") != "items":
            if counted:
                at, expected, actual = plan
                if expected is not None and not (entry["expected"].strip() if expected is _STR else entry["expected"]):
                    at += 2
                if actual is not None and not (entry["actual"].strip() if actual is _STR else entry["actual"]):
                    at += 1
            else:
                at = _NOT_COUNTED
            path = entry["path"]
            try:
                flat.append(fields[path])
            except KeyError:
                flat.append(slots.slot(name, path))
            flat += by[at]
            continue
        if (model := read_field(entry)) is not None:
            found = field_counts_of(model) if counted else None
            slot = fields.get(model.path)
            flat.append(slots.slot(name, model.path) if slot is None else slot)
            flat.append(slots.status_of.get(model.status, slots.other))
            flat += _NO_COUNTS if found is None else found.as_tuple()


def case_fields_merged(row: LeanRow, slots: Slots) -> list[int]:
    """`case_fields` of any row: from `statuses_and_counts`, a field named twice merged (its last
    status, its counts summed); a field with counts only has status `absent`."""
    statuses, counts = statuses_and_counts(row, slots.status_of, slots.other)
    flat: list[int] = []
    for key in {**statuses, **counts}:
        flat += (slots.slot(*key), statuses.get(key, slots.absent), *counts.get(key, _NO_COUNTS))
    return flat


def pack(flat: list[int]) -> bytearray:
    """A case's fields as stored: its ints as bytes when each is under 256 (nearly always), else
    marshalled (counts of any size, kept exactly; read back only by this process). A bytearray:
    sqlite3 binds it as a BLOB as it is (`compare_store.blob`)."""
    try:
        record = bytearray(flat)
    except ValueError:  # a slot or a count of 256 or more
        return bytearray((MARSHAL,)) + marshal.dumps(flat)
    record.insert(0, COMPACT)
    return record


def unpack(blob: bytes | bytearray) -> bytes | bytearray | list[int]:
    """`pack`'s ints back, WIDTH per field (`[0::WIDTH]` the slots, `[1::WIDTH]` the statuses)."""
    if blob[0] == COMPACT:
        return blob[1:]
    ints: list[int] = marshal.loads(blob[1:])
    return ints
