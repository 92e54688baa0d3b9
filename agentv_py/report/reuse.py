"""Reusing a results file (`agentv eval --resume / --rerun-failed / --retry-errors`): what changed
between the run that wrote it and the run about to start (`manifest_differences`, pure), and its
rows as they stand on disk (`read_stored`), a row cut short by a crash told apart from a file
that is not a results file at all."""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path

from agentv_py.models.manifest import RunManifest, TargetInfo
from agentv_py.models.results import ResultRow
from agentv_py.report.jsonl import read_rows
from agentv_py.report.row_store import RowStore
from agentv_py.scoring.case import case_verdict

NAMES_SHOWN = 5


def passed(row: ResultRow, mark: float) -> bool:
    """Whether a stored row passed, by its evaluator results as well as its word: a row whose
    `verdict` says pass while its results say otherwise (edited, or written by something else)
    did not pass, and `--rerun-failed` runs its case again."""
    if row.status == "error" or row.verdict != "pass" or not row.evaluator_results:
        return False
    return case_verdict(row.evaluator_results, mark).verdict == "pass"


def short(digest: str) -> str:
    """`3f9a1c2b7d4e…`: enough of a hash to tell two apart in a message."""
    return digest[:12] + "…" if len(digest) > 12 else digest


def _names(names: list[str]) -> str:
    shown = ", ".join(f"'{name}'" for name in names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def _target_change(what: str, old: TargetInfo, new: TargetInfo) -> str | None:
    if old.name != new.name:
        return f"{what} is another one ('{old.name}' → '{new.name}')"
    if old.sha256 != new.sha256:
        return f"{what} config changed (sha256 {short(old.sha256)} → {short(new.sha256)})"
    return None


def manifest_differences(stored: RunManifest, current: RunManifest) -> list[str]:
    """What differs, in words, between the manifest of a results file and the one of the run
    about to reuse it, in what could change its rows: the dataset file and its content, the
    evaluators of each case both runs select, the files judges read, the judge targets' configs,
    and `dry_run`. The eval target is `target_diff`'s (`--allow-target-change`, not `--force`).
    Options that change no row (workers, retries, the threshold, the selection) are not compared.
    Empty: the rows can be reused."""
    found: list[str] = []
    old_data, new_data = stored.dataset, current.dataset
    if old_data.path != new_data.path:
        found.append(f"the dataset is another file ({old_data.path} → {new_data.path})")
    if old_data.sha256 != new_data.sha256:
        found.append(f"the dataset content changed (sha256 {short(old_data.sha256)} → {short(new_data.sha256)})")
    changed = [
        case_id
        for case_id, digest in current.case_evaluators.items()
        if case_id in stored.case_evaluators and stored.case_evaluators[case_id] != digest
    ]
    if changed:
        noun = "case" if len(changed) == 1 else "cases"
        found.append(f"the evaluators of {noun} {_names(changed)} changed")
    edited = [path for path, digest in current.files.items() if path in stored.files and stored.files[path] != digest]
    added = [path for path in current.files if path not in stored.files]
    removed = [path for path in stored.files if path not in current.files]
    for path in edited:
        old, new = short(stored.files[path]), short(current.files[path])
        found.append(f"the judge file {path} changed (sha256 {old} → {new})")
    if added:
        found.append(f"judges read files they did not read before: {', '.join(added)}")
    if removed:
        found.append(f"judges no longer read: {', '.join(removed)}")
    for name in sorted(set(stored.judges) | set(current.judges)):
        if name not in current.judges:
            found.append(f"the judge target '{name}' is no longer used")
        elif name not in stored.judges:
            found.append(f"the judge target '{name}' is new")
        else:
            judge = _target_change(f"the judge target '{name}'", stored.judges[name], current.judges[name])
            if judge:
                found.append(judge)
    old_dry, new_dry = bool(stored.options.get("dry_run")), bool(current.options.get("dry_run"))
    if old_dry != new_dry:
        found.append(f"--dry-run was {'on' if old_dry else 'off'} and is {'on' if new_dry else 'off'} now")
    return found


class StoredError(Exception):
    """A results file that cannot be reused as it is: `locked` when another agentv run holds it."""

    def __init__(self, reason: str, locked: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.locked = locked


@dataclass
class StoredResults:
    """The rows of a results file, in file order, and what was left out of them."""

    rows: RowStore = field(default_factory=RowStore)  # on disk, read back as iterated
    cut_line: int | None = None  # the last line, cut short by a crash while it was written: ignored

    def case_ids(self) -> dict[str, int]:
        """Each case's row index (the last one, should a file hold two), in the order the cases
        first appear."""
        return {case_id: i for i, case_id in enumerate(self.rows.eval_ids)}


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return True
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


def read_stored(path: Path, *, lock: bool) -> StoredResults:
    """Every row of `path`. A last line without its newline is a row a crash cut short (every
    row agentv writes ends with one): it is left out, whatever it holds, and its line number
    kept. Any other line that is not a result row means this is not a results file agentv
    wrote: StoredError. With `lock`, a shared lock is held while reading, so a file another
    agentv run is writing is refused (StoredError with `locked`) rather than read half-written."""
    if not path.exists():
        raise StoredError("no such file")
    if not path.is_file():  # checked before opening: a FIFO would block the open
        raise StoredError("not a regular file")
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise StoredError(exc.strerror or str(exc)) from None
    with handle:
        if lock:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoredError("another agentv run is writing it", locked=True) from None
            except OSError:
                pass  # a file system without locks: read unlocked
        complete = _ends_with_newline(path)
        stored = StoredResults()
        pending: tuple[int, str] | None = None  # a bad line: fatal unless it is the cut last line
        last_row = 0
        for number, item in read_rows(path):
            if pending is not None:
                raise StoredError(f"line {pending[0]} is {pending[1]}")
            if isinstance(item, str):
                pending = (number, item)
            else:
                stored.rows.append(item)
                last_row = number
        if not complete:
            stored.cut_line = _line_count(path)
            if pending is not None and pending[0] == stored.cut_line:
                pending = None
            elif pending is None and last_row == stored.cut_line:
                stored.rows.pop()  # a whole row without its newline: still the line a crash cut
        if pending is not None:
            raise StoredError(f"line {pending[0]} is {pending[1]}")
    return stored


def _line_count(path: Path) -> int:
    count = 0
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            count += chunk.count(b"\n")
    return count + 1
