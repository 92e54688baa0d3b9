"""The rows of a results file being reused, not held as objects: `RowStore` pickles them a chunk
at a time into an unlinked temporary file and gives them back as they are iterated, keeping only
each row's case id, dataset and run id, so `--resume` of a big run does not grow with its rows.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterator
from typing import IO

from agentv_py.models.indexed import Indexed
from agentv_py.models.results import ResultRow

CHUNK_ROWS = 100  # a row of a 9-field eval is ~30 KiB as objects: 100 of them ~3 MiB


class RowStore(Indexed[ResultRow]):
    """Rows in file order: `append`ed as they are read, then read back a chunk at a time (the last
    read one kept). `eval_ids`, `datasets`, `run_ids`, `repeats` and `rejudges` are held for every row."""

    noun = "row"

    def __init__(self) -> None:
        self.eval_ids: list[str] = []
        self.datasets: list[str] = []
        self.run_ids: list[str | None] = []
        self.repeats: list[int | None] = []  # `--repeat`'s index of each row (None: not repeated)
        self.rejudges: list[int | None] = []  # `--rejudge`'s
        self._names: dict[str, str] = {}  # one object for each dataset name and run id
        self._pending: list[ResultRow] = []
        self._file: IO[bytes] | None = None
        self._chunks: list[tuple[int, int]] = []  # (offset, length) of each pickled chunk
        self._kept: tuple[int, list[ResultRow]] | None = None

    def _name(self, text: str) -> str:
        return self._names.setdefault(text, text)

    def append(self, row: ResultRow) -> None:
        self.eval_ids.append(row.eval_id)
        self.datasets.append(self._name(row.dataset))
        self.run_ids.append(None if row.run_id is None else self._name(row.run_id))
        self.repeats.append(row.repeat)
        self.rejudges.append(row.rejudge)
        self._pending.append(row)
        if len(self._pending) == CHUNK_ROWS:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="agentv-rows-")  # noqa: SIM115 - lives as long as the rows
            data = pickle.dumps(self._pending, protocol=pickle.HIGHEST_PROTOCOL)
            offset = self._file.seek(0, os.SEEK_END)
            self._file.write(data)
            self._file.flush()
            self._chunks.append((offset, len(data)))
            self._pending = []

    def pop(self) -> ResultRow:
        """Take the last row off (a row a crash cut short)."""
        row = self[-1]
        if self._pending:
            self._pending.pop()
        else:  # the last chunk becomes pending again, but for its last row
            self._pending = self._chunk(len(self._chunks) - 1)[:-1]
            self._chunks.pop()
            self._kept = None
        for held in (self.eval_ids, self.datasets, self.run_ids, self.repeats, self.rejudges):
            held.pop()
        return row

    def _chunk(self, number: int) -> list[ResultRow]:
        if self._kept is not None and self._kept[0] == number:
            return self._kept[1]
        assert self._file is not None
        offset, length = self._chunks[number]
        rows: list[ResultRow] = pickle.loads(os.pread(self._file.fileno(), length, offset))
        self._kept = (number, rows)
        return rows

    def __len__(self) -> int:
        return len(self.eval_ids)

    def _at(self, index: int) -> ResultRow:
        number, within = divmod(index, CHUNK_ROWS)
        return self._chunk(number)[within] if number < len(self._chunks) else self._pending[within]

    def __iter__(self) -> Iterator[ResultRow]:
        for number in range(len(self._chunks)):
            yield from self._chunk(number)
        yield from list(self._pending)


class RowSelection(Indexed[ResultRow]):
    """Some rows of a `RowStore`, by index, read through it as they are needed."""

    noun = "row"

    def __init__(self, rows: RowStore, indices: list[int]) -> None:
        self._rows = rows
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    def _at(self, index: int) -> ResultRow:
        return self._rows[self._indices[index]]

    def __iter__(self) -> Iterator[ResultRow]:
        wanted = set(self._indices)
        return (row for i, row in enumerate(self._rows) if i in wanted)
