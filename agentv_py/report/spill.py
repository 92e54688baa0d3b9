"""Case details kept on disk while a report is built, not in memory: one JSON object per case,
written as its row is read (a later row of the case replaces it), then assembled in the cases'
order into one gzip stream and written into the page as base64, a chunk at a time. Memory holds
two numbers per case, whatever the size of the results file."""

from __future__ import annotations

import base64
import tempfile
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence

_CHUNK = 3 * (1 << 18)  # bytes base64-encoded at a time (a multiple of 3: no padding between chunks)


class Spill:
    """Details by slot: `put` (append or replace), then `base64_gzip(order, finish)`."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="agentv-report-")  # noqa: SIM115 - closed in close()
        self._offsets = array("q")
        self._lengths = array("q")

    def __len__(self) -> int:
        return len(self._offsets)

    def put(self, slot: int, data: bytes) -> None:
        """The details of `slot` (a new slot is the next one): a replaced case's old bytes stay
        in the file, unread."""
        offset = self._file.seek(0, 2)
        self._file.write(data)
        if slot == len(self._offsets):
            self._offsets.append(offset)
            self._lengths.append(len(data))
        else:
            self._offsets[slot], self._lengths[slot] = offset, len(data)

    def get(self, slot: int) -> bytes:
        self._file.seek(self._offsets[slot])
        return self._file.read(self._lengths[slot])

    def base64_gzip(self, order: Sequence[int], finish: Callable[[int, bytes], bytes]) -> Iterator[bytes]:
        """The details of the slots in `order` as one JSON array, gzip-compressed (mtime 0), in
        base64 chunks; `finish(slot, data)` may change a case's bytes on the way (its images)."""
        packed = tempfile.TemporaryFile(prefix="agentv-report-")  # noqa: SIM115 - closed below
        try:
            compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip stream, mtime 0
            packed.write(compressor.compress(b"["))
            for n, slot in enumerate(order):
                packed.write(compressor.compress((b"," if n else b"") + finish(slot, self.get(slot))))
            packed.write(compressor.compress(b"]"))
            packed.write(compressor.flush())
            packed.seek(0)
            while chunk := packed.read(_CHUNK):
                yield base64.b64encode(chunk)
        finally:
            packed.close()

    def close(self) -> None:
        self._file.close()
