"""A big dataset's packed cases on disk, a chunk at a time: what a parse writes as it goes (into
the parse cache entry, or an unlinked temporary file) and what the loader reads back a slice at a
time, so that neither the file's text nor its cases are ever held whole.

The format (a parse cache entry is exactly this): a magic line, then records, each
`<length u64><cases u32><the first 16 bytes of the payload's SHA-256>` and the payload, a `marshal` value: the case
chunks (each a tuple of `CHUNK_CASES` packed cases, the last one maybe fewer), then the end record
(no cases) `("end", chunks, cases, placed, document)`: the document, with None for its `evalcases`
list when `placed` (the chunks are that list).
A file is used only when every record is whole and matches its digest and the end record its
counts: anything else (truncated, corrupt, another version) is not an entry, and the dataset is
parsed again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import struct
import threading
from collections.abc import Iterator
from typing import IO, Any

from agentv_py.models.indexed import Indexed

MAGIC = b"agentv-cases 2\n"  # 2: SHA-256 digests (1: BLAKE2b)
CHUNK_CASES = 1000  # cases per record: the loader's chunk (`PreparedCases.chunk_cases`)
_DIGEST = 16  # bytes of a record's digest
_HEAD = struct.Struct("<QI16s")
_BLOCK = 1024 * 1024


def _digest(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest()[:_DIGEST]


class CaseSpool(Indexed[bytes]):
    """Packed cases read back from a spool file (`SpoolWriter`), a chunk at a time (the last read
    one kept). Thread-safe for reading; the file is closed with the spool."""

    def __init__(self, handle: IO[bytes], chunks: list[tuple[int, int, int]]) -> None:
        self._handle = handle
        self._chunks = chunks  # (payload offset, payload length, cases) of each chunk record
        self._starts: list[int] = []
        total = 0
        for _, _, count in chunks:
            self._starts.append(total)
            total += count
        self._len = total
        self._kept: tuple[int, tuple[bytes, ...]] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._len

    def _chunk(self, number: int) -> tuple[bytes, ...]:
        with self._lock:
            if self._kept is not None and self._kept[0] == number:
                return self._kept[1]
            offset, length, _ = self._chunks[number]
            value: tuple[bytes, ...] = marshal.loads(os.pread(self._handle.fileno(), length, offset))
            self._kept = (number, value)
            return value

    def _at(self, index: int) -> bytes:
        number = index // CHUNK_CASES  # every chunk but the last is whole
        return self._chunk(number)[index - self._starts[number]]

    def __iter__(self) -> Iterator[bytes]:
        for number in range(len(self._chunks)):
            yield from self._chunk(number)

    def close(self) -> None:
        self._handle.close()


class SpoolWriter:
    """Writes a spool: `add` each packed case as it is parsed, then `finish` with the document."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.reset()

    def reset(self) -> None:
        """Start again, empty (a parse that starts over)."""
        self.placed = False  # the document's `evalcases` list is the cases `add`ed (set by the parse)
        self._pending: list[bytes] = []
        self._chunks: list[tuple[int, int, int]] = []
        self._cases = 0
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(MAGIC)
        self._offset = len(MAGIC)

    def _record(self, value: Any, count: int) -> tuple[int, int, int]:
        payload = marshal.dumps(value)
        self.handle.write(_HEAD.pack(len(payload), count, _digest(payload)) + payload)
        start = self._offset + _HEAD.size
        self._offset = start + len(payload)
        return start, len(payload), count

    def add(self, packed: bytes) -> None:
        self._pending.append(packed)
        self._cases += 1
        if len(self._pending) == CHUNK_CASES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._chunks.append(self._record(tuple(self._pending), len(self._pending)))
            self._pending = []

    def finish(self, document: Any) -> Any:
        """Write the rest and the end record: `document` is the parsed file, with None for its
        `evalcases` list when `placed`. Returns it with its cases in their place, read back from
        this file (`CaseSpool`)."""
        self._flush()
        self._record(("end", len(self._chunks), self._cases, self.placed, document), 0)
        self.handle.flush()
        return _placed(document, self.placed, CaseSpool(self.handle, list(self._chunks)))


def _placed(document: Any, placed: bool, cases: CaseSpool) -> Any:
    if placed and isinstance(document, dict):
        document["evalcases"] = cases
    return document


def read_spool(handle: IO[bytes]) -> tuple[Any] | None:
    """(the document,) of a spool file every record of which checks out (its cases, if any, in a
    `CaseSpool` read from `handle`), else None."""
    if handle.read(len(MAGIC)) != MAGIC:
        return None
    offset = len(MAGIC)
    chunks: list[tuple[int, int, int]] = []
    while True:
        head = handle.read(_HEAD.size)
        if len(head) != _HEAD.size:
            return None  # truncated (an end record is always last)
        length, count, digest = _HEAD.unpack(head)
        check = hashlib.sha256()
        blocks: list[bytes] = []
        left = length
        while left:
            block = handle.read(min(left, _BLOCK))
            if not block:
                return None
            check.update(block)
            if not count:
                blocks.append(block)  # the end record: small, read whole
            left -= len(block)
        if check.digest()[:_DIGEST] != digest:
            return None
        start = offset + _HEAD.size
        offset = start + length
        if count:
            chunks.append((start, length, count))
            continue
        try:
            end = marshal.loads(b"".join(blocks))
        except (ValueError, EOFError, TypeError):
            return None
        cases = sum(item[2] for item in chunks)
        whole = all(item[2] == CHUNK_CASES for item in chunks[:-1])
        if not (isinstance(end, tuple) and len(end) == 5 and end[:3] == ("end", len(chunks), cases) and whole):
            return None
        if handle.read(1) or not isinstance(end[3], bool) or (end[3] and not isinstance(end[4], dict)):
            return None  # something after the end record; not what `finish` writes
        return (_placed(end[4], end[3], CaseSpool(handle, chunks)),)
