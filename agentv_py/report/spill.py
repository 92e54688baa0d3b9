"""Cases kept on disk while a report is built, not in memory: a private temporary SQLite database
(deleted when closed) holding, per case id, its entry in the page's case table, its details and
what it adds to the page's totals, written as its row is read (a later row of the case replaces
them, keeping the case's place). Read back in the cases' order, a column at a time: the details
as one gzip stream written into the page as base64, a chunk at a time. Memory holds nothing per
case, whatever the size of the results file."""

from __future__ import annotations

import base64
import sqlite3
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

_CHUNK = 3 * (1 << 18)  # bytes base64-encoded at a time (a multiple of 3: no padding between chunks)
_CACHE_KIB = 2 * 1024  # SQLite's page cache: what it holds in memory before it goes to disk
_BATCH = 500  # rows fetched at a time when reading back

Column = Literal["entry", "details", "totals"]


class CaseStore:
    """`put(case_id, entry, details, totals, geometry)` as rows are read; `set_order(case_ids)`
    to list the cases in that order (the rest after them, in the order they were first read);
    then `column(...)`, `base64_gzip(...)`."""

    def __init__(self) -> None:
        # "": a private on-disk database, removed when the connection closes
        self._db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("PRAGMA temp_store = FILE")
        self._db.execute(
            "CREATE TABLE cases (id TEXT PRIMARY KEY, arrival INTEGER NOT NULL, position INTEGER,"
            " geometry INTEGER NOT NULL, entry BLOB NOT NULL, details BLOB NOT NULL, totals BLOB NOT NULL)"
        )
        self._db.execute("BEGIN")
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def put(self, case_id: str, entry: bytes, details: bytes, totals: bytes, geometry: bool) -> None:
        """A case's row: a new case goes last, a case seen before is replaced where it stands."""
        found = self._db.execute(
            "UPDATE cases SET entry = ?, details = ?, totals = ?, geometry = ? WHERE id = ?",
            (entry, details, totals, int(geometry), case_id),
        ).rowcount
        if not found:
            self._db.execute(
                "INSERT INTO cases (id, arrival, geometry, entry, details, totals) VALUES (?, ?, ?, ?, ?, ?)",
                (case_id, self._count, int(geometry), entry, details, totals),
            )
            self._count += 1

    def set_order(self, case_ids: Iterable[str]) -> None:
        """The cases' order (a dataset's): cases not listed follow, in the order first read."""
        self._db.executemany("UPDATE cases SET position = ? WHERE id = ?", ((n, i) for n, i in enumerate(case_ids)))

    def geometry_cases(self) -> Iterator[str]:
        """The ids of the cases whose details hold shapes to draw, in order."""
        for (case_id,) in self._rows("id", "WHERE geometry"):
            yield case_id

    def column(self, name: Column) -> Iterator[tuple[str, bytes]]:
        """(case id, that column) for every case, in order."""
        yield from self._rows(f"id, {name}")

    def _rows(self, columns: str, where: str = "") -> Iterator[tuple[Any, ...]]:
        cursor = self._db.execute(
            f"SELECT {columns} FROM cases {where} ORDER BY position IS NULL, position, arrival"  # our own words
        )
        while batch := cursor.fetchmany(_BATCH):
            yield from batch

    def base64_gzip(self, finish: Callable[[str, bytes], bytes]) -> Iterator[bytes]:
        """The details of every case, in order, as one JSON array, gzip-compressed (mtime 0), in
        base64 chunks; `finish(case_id, data)` may change a case's bytes on the way (its images)."""
        packed = tempfile.TemporaryFile(prefix="agentv-report-")  # noqa: SIM115 - closed below
        try:
            compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip stream, mtime 0
            packed.write(compressor.compress(b"["))
            for n, (case_id, data) in enumerate(self.column("details")):
                packed.write(compressor.compress((b"," if n else b"") + finish(case_id, data)))
            packed.write(compressor.compress(b"]"))
            packed.write(compressor.flush())
            packed.seek(0)
            while chunk := packed.read(_CHUNK):
                yield base64.b64encode(chunk)
        finally:
            packed.close()

    def close(self) -> None:
        self._db.close()
