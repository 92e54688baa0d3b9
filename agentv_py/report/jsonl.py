"""JSONL results: one row per line, written and flushed as each case finishes (SPEC §4.1)."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from pydantic import ValidationError

from agentv_py.models.results import ResultRow

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_DIGITS = re.compile(rb"\d{19}")  # 2**63 has 19 digits
_OPTIONS = orjson.OPT_SERIALIZE_NUMPY if hasattr(orjson, "OPT_SERIALIZE_NUMPY") else 0


def default_results_path(dataset: str, now: dt.datetime | None = None, root: Path | None = None) -> Path:
    """`.agentv/results/<dataset>_<UTC timestamp>.jsonl` under the current directory."""
    now = now or dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", dataset) or "dataset"
    return (root or Path.cwd()) / ".agentv" / "results" / f"{safe}_{stamp}.jsonl"


def dumps_row(data: dict[str, Any]) -> bytes:
    """One row as a JSON line. orjson, except for what it refuses: an integer wider than 64 bits
    (written exactly by the standard library) or a string holding a lone surrogate (replaced by
    U+FFFD, since it is not Unicode). Every line written can be read back by `read_rows`."""
    try:
        return orjson.dumps(data, option=_OPTIONS)
    except TypeError:
        return json.dumps(_valid_unicode(data), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_valid_unicode(v) for v in value]
    return value


def _loads_line(line: bytes) -> Any:
    """orjson, except for a line that may hold an integer wider than 64 bits (orjson would read
    it as an inexact float): the standard library reads those exactly."""
    if _LONG_DIGITS.search(line):
        return json.loads(line)
    return orjson.loads(line)


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
        self._handle.write(dumps_row(row.to_json_dict()) + b"\n")
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
                yield number, ResultRow.model_validate(_loads_line(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                yield number, f"not a result row: {loc}: {first['msg']}"
            except ValueError as exc:  # not JSON (orjson's and the standard library's errors)
                yield number, f"not JSON: {exc}"
