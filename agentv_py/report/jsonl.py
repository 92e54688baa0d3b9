"""JSONL results: one row per line, written and flushed as each case finishes (SPEC §4.1)."""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import orjson
from pydantic import ValidationError

from agentv_py.models.results import ResultRow

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY if hasattr(orjson, "OPT_SERIALIZE_NUMPY") else 0


def default_results_path(dataset: str, now: dt.datetime | None = None, root: Path | None = None) -> Path:
    """`.agentv/results/<dataset>_<UTC timestamp>.jsonl` under the current directory."""
    now = now or dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", dataset) or "dataset"
    return (root or Path.cwd()) / ".agentv" / "results" / f"{safe}_{stamp}.jsonl"


class JsonlWriter:
    """Writes rows to a file (or stdout for `-`), one flushed line per row."""

    def __init__(self, target: str | Path) -> None:
        self.to_stdout = str(target) == "-"
        if self.to_stdout:
            self.path: Path | None = None
            self._handle: BinaryIO = sys.stdout.buffer
        else:
            self.path = Path(target)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self.count = 0

    @property
    def display(self) -> str:
        """The path as a user would type it (relative under the current directory)."""
        if self.path is None:
            return "<stdout>"
        try:
            return str(self.path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(self.path)

    def write(self, row: ResultRow) -> None:
        self._handle.write(orjson.dumps(row.to_json_dict(), option=_OPTIONS) + b"\n")
        self._handle.flush()
        self.count += 1

    def close(self) -> None:
        """Close the file. Every row was flushed when written, so a close that fails can only
        repeat a write error already raised (a full disk): it is not raised twice."""
        if not self.to_stdout:
            try:
                self._handle.close()
            except OSError:
                pass

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_rows(path: str | Path) -> Iterator[tuple[int, ResultRow | str]]:
    """(line number, row) for each line; a bad line gives (line number, reason) instead."""
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, ResultRow.model_validate(orjson.loads(line))
            except orjson.JSONDecodeError as exc:
                yield number, f"not JSON: {exc}"
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                yield number, f"not a result row: {loc}: {first['msg']}"
