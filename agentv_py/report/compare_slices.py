"""`agentv compare BASE NEW --by KEY` (docs/metrics.md#slices): the whole comparison, then the same
comparison within each value of a metadata key of the cases, gated by the same rules. Each run's
rows go to a temporary file per slice (the case's own `metadata` in that run decides; rows without
the key form `(none)`), streamed line by line, so memory stays flat; each slice is compared as two
files are, one after the other."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from agentv_py.report.jsonl import row_lines
from agentv_py.report.lean_rows import lean_row
from agentv_py.report.slices import NONE, slice_label


@contextmanager
def sliced_files(base: Path, new: Path, key: str) -> Iterator[dict[str, tuple[Path, Path]]]:
    """For each slice (sorted, `(none)` last), its BASE and NEW files (either may hold no row);
    the files are deleted on exit."""
    with tempfile.TemporaryDirectory(prefix="agentv-compare-by-") as folder:
        names: dict[str, int] = {}
        for side, path in (("base", base), ("new", new)):
            handles: dict[str, IO[bytes]] = {}
            try:
                for _, line in row_lines(path):
                    if isinstance(line, str):
                        continue  # not a row: the whole comparison says so
                    row = lean_row(line)
                    if isinstance(row, str):
                        continue
                    metadata = row.metadata if isinstance(row.metadata, dict) else {}
                    label = slice_label(metadata[key]) if key in metadata else NONE
                    handle = handles.get(label)
                    if handle is None:
                        number = names.setdefault(label, len(names))  # file names never hold the (data) label
                        handle = handles[label] = open(Path(folder) / f"{side}-{number}.jsonl", "ab")  # noqa: SIM115
                    handle.write(bytes(line).rstrip(b"\n") + b"\n")
            finally:
                for handle in handles.values():
                    handle.close()
        out = {}
        for label in sorted(names, key=lambda name: (name == NONE, name)):
            pair = tuple(Path(folder) / f"{side}-{names[label]}.jsonl" for side in ("base", "new"))
            for path in pair:
                path.touch()
            out[label] = (pair[0], pair[1])
        yield out
