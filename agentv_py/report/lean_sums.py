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

    __slots__ = ("_by_name", "totals")

    def __init__(self, totals: dict[FieldKey, Counts]) -> None:
        self.totals = totals
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
            fields[field_name] = self.totals[(name, field_name)] = Counts(tp, tn, fp, fn)
        else:
            known.tp += tp
            known.tn += tn
            known.fp += fp
            known.fn += fn

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
    evaluator and field (no key tuple per lookup)."""

    __slots__ = ("_by_name", "of")

    def __init__(self) -> None:
        self.of: dict[FieldKey, int] = {}
        self._by_name: dict[str, dict[str, int]] = {}

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


def case_fields(row: LeanRow, slots: Slots, status_of: dict[str, int], other: int, absent: int) -> list[int] | None:
    """`statuses_and_counts(row, status_of, other)` as one flat list, WIDTH ints per field (slot,
    status, tp, tn, fp, fn; a slot per (evaluator, field) from `slots`), in the order the row names
    them. None when a field is named twice in the row (its status and counts merge:
    `case_fields_merged`) or the row was read by the model."""
    if row.model is not None:
        return None
    flat: list[int] = []
    for name, kind, details in _walk(row.results, True):
        metrics = details.get("metrics")
        counted = not isinstance(metrics, dict)
        if kind == "field_accuracy" and isinstance(entries := details.get("fields"), list):
            fields = slots.fields_of(name)
            for entry in entries:
                if (
                    isinstance(entry, dict)
                    and _typed(entry, _FIELD, _FIELD_REQUIRED)
                    and (status := entry["status"]) in _FIELD_STATUSES
                    and entry.get("match") != "items"
                ):
                    path = entry["path"]
                    scored = counted and status in _SCORED
                    quad = _QUADS[_outcome(status, entry.get("expected"), entry.get("actual")) if scored else 0]
                elif (model := read_field(entry)) is not None:
                    path, status = model.path, model.status
                    found = field_counts_of(model) if counted else None
                    quad = _NO_COUNTS if found is None else found.as_tuple()
                else:
                    continue
                slot = fields.get(path)
                flat.append(slots.slot(name, path) if slot is None else slot)
                flat.append(status_of.get(status, other))
                flat += quad
        if not counted:
            judged = {"name": name, "type": kind, "details": {"metrics": metrics}}
            for (_, field_name), counts in row_field_counts([judged]).items():
                flat += (slots.slot(name, field_name), absent, counts.tp, counts.tn, counts.fp, counts.fn)
        elif kind == "iou_score" and (box := iou_counts(details)) is not None:
            flat += (slots.slot(name, name), absent, box.tp, box.tn, box.fp, box.fn)
    named = flat[0::WIDTH]
    return flat if len(set(named)) == len(named) else None


def case_fields_merged(row: LeanRow, slots: Slots, status_of: dict[str, int], other: int, absent: int) -> list[int]:
    """`case_fields` of any row: from `statuses_and_counts`, a field named twice merged (its last
    status, its counts summed); a field with counts only has status `absent`."""
    statuses, counts = statuses_and_counts(row, status_of, other)
    flat: list[int] = []
    for key in {**statuses, **counts}:
        flat += (slots.slot(*key), statuses.get(key, absent), *counts.get(key, _NO_COUNTS))
    return flat


def pack(flat: list[int]) -> bytes:
    """A case's fields as stored: its ints as bytes when each is under 256 (nearly always), else
    marshalled (counts of any size, kept exactly; read back only by this process)."""
    try:
        return bytes((COMPACT, *flat))
    except ValueError:  # a slot or a count of 256 or more
        return bytes((MARSHAL,)) + marshal.dumps(flat)


def unpack(blob: bytes) -> bytes | list[int]:
    """`pack`'s ints back, WIDTH per field (`[0::WIDTH]` the slots, `[1::WIDTH]` the statuses)."""
    if blob[0] == COMPACT:
        return blob[1:]
    ints: list[int] = marshal.loads(blob[1:])
    return ints
