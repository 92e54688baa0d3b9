"""The temporary SQLite database behind `agentv compare` (report/compare.py): each results file
streamed into its table, one record per case (its last row's score, verdict and per-field status
and counts), and the per-field tables; memory stays flat in the number of rows."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentv_py.report.jsonl import UnusableInput
from agentv_py.report.lean_rows import LeanRow, read_lean_rows
from agentv_py.report.lean_sums import WIDTH, Slots, case_fields, case_fields_merged, pack, unpack
from agentv_py.scoring.metrics import Counts, FieldKey

BATCH = 2000  # rows inserted at once

# per field of a case: how field_accuracy scored it, and its TP/TN/FP/FN
ABSENT, HIT, MISS, OTHER = 0, 1, 2, 3
STATUS = {"hit": HIT, "miss": MISS}
VERDICTS = ("pass", "partial", "fail")
HIT_TO_MISS, MISS_TO_HIT = 0, 1
SIDES = ("base", "new")


class CompareError(UnusableInput):
    """Input that cannot be compared (missing or bad file, the same file twice, other datasets)."""


class Store:
    """The temporary SQLite database behind one comparison (deleted on close)."""

    def __init__(self) -> None:
        self.errored_rows = dict.fromkeys(SIDES, 0)  # per table, the rows stored as errored (0: no case is)
        self._dir = tempfile.TemporaryDirectory(prefix="agentv-compare-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, "compare.sqlite3"), isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = FILE", "cache_size = -8192"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("BEGIN")
        for side in SIDES:  # ids are UTF-8 BLOBs: any text round-trips, and they sort as Python sorts str
            self.db.execute(
                f"CREATE TABLE {side} (id BLOB PRIMARY KEY, score REAL, verdict INT, errored INT, fields BLOB)"
                " WITHOUT ROWID"
            )
        self.db.execute(
            "CREATE TABLE changed (id BLOB PRIMARY KEY, base REAL, new REAL, delta REAL, bv INT, nv INT) WITHOUT ROWID"
        )
        self.db.execute(
            "CREATE TABLE moves (slot INT, direction INT, id BLOB, PRIMARY KEY (slot, direction, id)) WITHOUT ROWID"
        )

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            self._dir.cleanup()

    def rows(self, sql: str, *args: Any) -> Iterator[tuple[Any, ...]]:
        yield from self.db.execute(sql, args)

    def count(self, sql: str, *args: Any) -> int:
        return int(self.db.execute(sql, args).fetchone()[0])


def text_of(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def blob(raw: bytes) -> bytearray:
    """Bytes to store as a BLOB: sqlite3 binds a bytearray as it is, where it looks for an adapter
    of bytes first (two failed attribute lookups, each an exception, per value)."""
    return bytearray(raw)


def check_field_results(store: Store, fields: Fields) -> None:
    """Per-field results in one file and none in the other's scored rows: the runs were scored by
    different evaluators, and every field would read as lost (or found). Refused (exit 2)."""
    counted = [bool(fields.counts[0]), bool(fields.counts[1])]
    if counted[0] == counted[1]:
        return
    without = counted.index(False)
    side, role, other = SIDES[without], ("BASE", "NEW")[without], ("NEW", "BASE")[without]
    scored = store.count(f"SELECT COUNT(*) FROM {side} WHERE errored = 0")
    named = len(fields.counts[1 - without])
    if scored:
        raise CompareError(
            f"{role} has no per-field result in its {scored} scored rows, and {other} has them for "
            f"{named} field{'' if named == 1 else 's'}: the runs were not scored by the same evaluators",
            hint="compare runs of one evaluator configuration, or re-score one with the other's dataset "
            "(agentv rescore)",
        )


def _cut_short(path: Path, role: str, line: int, why: str) -> CompareError:
    """A line that is not a row stops the comparison (exit 2)."""
    return CompareError(
        f"{role} {path}:{line}: {why}",
        hint="the file was cut short or is not a results file: compare complete `agentv eval` outputs",
    )


_KINDS_KEPT = 4096  # distinct records counted before they are summed (memory stays flat)


class Fields:
    """The per-field tables: a slot per (evaluator, field), counts per side, moves per direction."""

    def __init__(self) -> None:
        self._slots = Slots(STATUS, OTHER, ABSENT)
        self.slots: dict[FieldKey, int] = self._slots.of
        self.counts: tuple[dict[int, Counts], dict[int, Counts]] = ({}, {})
        self.moves: dict[tuple[int, int], int] = {}
        self._summed: dict[int, list[int]] = {}  # the counts of the records folded since `begin`
        self._records: dict[bytes, int] = {}  # records encoded since the last fold, and how often

    def begin(self) -> None:
        """Start summing a file's records afresh (`sums`)."""
        self._summed, self._records = {}, {}

    def encode(self, row: LeanRow) -> bytearray:
        """A case's fields as stored (`lean_sums.pack`): slot, status (hit / miss / other, or
        absent for counts only) and TP/TN/FP/FN per field, from every `field_accuracy` result's
        `details.fields` and the counts `agentv metrics` sums, read in one walk. Records are
        counted as they come (the rows of a run repeat a few) and summed by `sums`."""
        flat = case_fields(row, self._slots)
        if flat is None:
            flat = case_fields_merged(row, self._slots)
        record = pack(flat)
        records, kind = self._records, bytes(record)
        records[kind] = records.get(kind, 0) + 1
        if len(records) >= _KINDS_KEPT:
            self._fold()
        return record

    def _fold(self) -> None:
        summed = self._summed
        for record, times in self._records.items():
            flat = unpack(record)
            for at in range(0, len(flat), WIDTH):
                total = summed.get(flat[at])
                if total is None:
                    total = summed[flat[at]] = [0, 0, 0, 0]
                total[0] += flat[at + 2] * times
                total[1] += flat[at + 3] * times
                total[2] += flat[at + 4] * times
                total[3] += flat[at + 5] * times
        self._records = {}

    def sums(self) -> dict[int, list[int]]:
        """Per slot, the counts of every record encoded since `begin` (a field with a status and
        no counts included, at 0)."""
        self._fold()
        return self._summed


_VERDICT_CODES = {verdict: code for code, verdict in enumerate(VERDICTS)}


def load_side(store: Store, side: str, path: Path, role: str, fields: Fields) -> int:
    """One file into its table, the last row of a case replacing earlier ones (a resumed run);
    returns the number of cases in it. A row with an error, or without any evaluator result, is
    stored as errored."""
    sql = f"INSERT OR REPLACE INTO {side} VALUES (?, ?, ?, ?, ?)"
    batch: list[tuple[bytearray, float, int, int, bytearray]] = []
    add, encode, codes, nothing = batch.append, fields.encode, _VERDICT_CODES, bytearray()
    fields.begin()
    rows = errored = 0
    for line, row in read_lean_rows(path):  # rows as `jsonl.read_rows` reads them, lighter
        if isinstance(row, str):
            raise _cut_short(path, role, line, row)
        rows += 1
        key = bytearray(row.eval_id, "utf-8", "surrogatepass")  # bound as a BLOB as it is (`blob`)
        if row.status == "error" or not row.results:
            add((key, 0.0, 0, 1, nothing))
            errored += 1
        else:
            add((key, row.score, codes[row.verdict], 0, encode(row)))
        if len(batch) >= BATCH:
            store.db.executemany(sql, batch)
            batch.clear()
    store.db.executemany(sql, batch)
    store.errored_rows[side] = errored
    counts = fields.counts[SIDES.index(side)]
    summed = fields.sums()
    cases = store.count(f"SELECT COUNT(*) FROM {side}")
    if cases == rows:  # no case twice: every row encoded is kept
        for slot, (tp, tn, fp, fn) in summed.items():
            counts[slot] = Counts(tp, tn, fp, fn)
        return cases
    for (record,) in store.rows(f"SELECT fields FROM {side} WHERE errored = 0"):  # a case's last row only
        flat = unpack(record)
        for at in range(0, len(flat), WIDTH):
            slot, tp, tn, fp, fn = flat[at], flat[at + 2], flat[at + 3], flat[at + 4], flat[at + 5]
            known = counts.get(slot)
            if known is None:
                counts[slot] = Counts(tp, tn, fp, fn)
            else:  # in place: no Counts per record
                known.tp += tp
                known.tn += tn
                known.fp += fp
                known.fn += fn
    return cases
