"""JSONL results: one row per line, written and flushed as each case finishes (SPEC §4.1)."""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from pydantic import ValidationError

from agentv_py.models.results import ResultRow
from agentv_py.report.bounds import MAX_DEPTH, MAX_LINE_BYTES, bound_depth, bound_size

_SURROGATE = re.compile("[\ud800-\udfff]")
# every digit made "0", every other byte a space: a run of 19 digits (2**63 has 19) is then 19 zeros
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
_BLANK = re.compile(rb"\s*")
_OPTIONS = orjson.OPT_SERIALIZE_NUMPY if hasattr(orjson, "OPT_SERIALIZE_NUMPY") else 0


_CHUNK = 1024 * 1024
_DEVNULL = os.stat(os.devnull) if os.path.exists(os.devnull) else None


NAME_CHARS = 80  # of the dataset's name in a default results file's name (longer: cut, with a hash)


def default_results_path(
    dataset: str, now: dt.datetime | None = None, root: Path | None = None, tag: str | None = None
) -> Path:
    """`.agentv/results/<dataset>_<UTC time to the millisecond>_<pid>-<random>.jsonl` under the
    current directory: the time sorts, the process id and 4 random hex digits tell apart runs
    started in the same millisecond (and `open_new_results` creates it exclusively)."""
    now = now or dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y%m%dT%H%M%S") + f".{now.microsecond // 1000:03d}Z"
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", dataset) or "dataset"
    if len(safe) > NAME_CHARS:  # a file name has 255 bytes; the manifest and temporary files add to it
        safe = f"{safe[: NAME_CHARS - 9]}-{hashlib.sha256(dataset.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    tag = tag if tag is not None else f"{os.getpid()}-{secrets.token_hex(2)}"
    return (root or Path.cwd()) / ".agentv" / "results" / f"{safe}_{stamp}_{tag}.jsonl"


class UnusableInput(Exception):
    """Results files a command cannot use (`agentv compare`, `agentv merge`): what and why, and what
    to do; the command line turns it into exit 2."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class ResultsUnavailable(Exception):
    """The results file cannot be written: `reason` says why (for a message naming the file)."""

    def __init__(self, reason: str, locked: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.locked = locked  # another agentv run holds it


def dumps_row(data: dict[str, Any]) -> bytes:
    """One row as a JSON line of at most MAX_LINE_BYTES (`_dumps_whole`; a longer one has its
    free-form values cut: `bounds.bound_size`). Every line written can be read back by `read_rows`."""
    line = _dumps_whole(data)
    return line if len(line) <= MAX_LINE_BYTES else bound_size(bound_depth(data), _dumps_whole)


def _dumps_whole(data: dict[str, Any]) -> bytes:
    """One row as a JSON line. orjson, except for what it refuses: an integer wider than 64 bits
    (written exactly by the standard library), a string holding a lone surrogate (replaced by
    U+FFFD, since it is not Unicode), or nesting deeper than MAX_DEPTH (an answer's or a judge's
    value 10,000 levels deep): what lies deeper is cut (`bound_depth`), and the row is written."""
    try:
        return orjson.dumps(data, option=_OPTIONS)
    except TypeError as exc:
        if "recursion" in str(exc).lower():
            return _dumps_whole(bound_depth(data))
    try:
        return json.dumps(_valid_unicode(data), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except RecursionError:
        return _dumps_whole(bound_depth(data))


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_valid_unicode(v) for v in value]
    return value


def _loads_line(line: bytes | bytearray) -> Any:
    """orjson, except for a line that may hold an integer wider than 64 bits (orjson would read
    it as an inexact float): the standard library reads those exactly."""
    if _LONG_RUN in line.translate(_DIGITS_ONLY):  # C speed: 10x faster than a regex
        return json.loads(line)
    return orjson.loads(line)


def _writable_kind(mode: int, fd: int) -> str | None:
    """None if rows can be written to a file of this kind, else why not. Regular files, pipes,
    sockets, terminals and /dev/null take rows; any other device is refused, since nothing short
    of writing a row tells whether it would take one (/dev/full opens fine and fails every write)."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
        return None
    if stat.S_ISDIR(mode):
        return os.strerror(errno.EISDIR)
    info = os.fstat(fd)
    if _DEVNULL is not None and (info.st_dev, info.st_ino) == (_DEVNULL.st_dev, _DEVNULL.st_ino):
        return None
    return "a device, not a file (results go to a file, a pipe, a terminal or /dev/null)"


def _open_locked(path: Path, exclusive: bool) -> tuple[int, bool]:
    """Open `path` for writing without truncating it and lock it against other agentv runs.
    Returns (fd, created). Raises ResultsUnavailable (or FileExistsError with `exclusive`)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_EXCL if exclusive else 0)
    while True:
        try:
            existed = not exclusive and os.path.lexists(path)
            fd = os.open(path, flags | os.O_NONBLOCK, 0o666)  # a FIFO with no reader: ENXIO, not a hang
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise ResultsUnavailable("a pipe nobody reads") from None
            raise ResultsUnavailable(exc.strerror or str(exc)) from None
        try:
            os.set_blocking(fd, True)
            mode = os.fstat(fd).st_mode
            why = _writable_kind(mode, fd)
            if why is not None:
                raise ResultsUnavailable(why)
            if not stat.S_ISREG(mode):
                return fd, False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ResultsUnavailable("another agentv run is writing it", locked=True) from None
            except OSError as exc:  # a file system without locks: write unlocked
                if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                    raise ResultsUnavailable(exc.strerror or str(exc)) from None
            try:  # the path may have been removed (or replaced) between open and lock: lock the new one
                current = os.stat(path)
            except FileNotFoundError:
                current = None
            held = os.fstat(fd)
            if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
                return fd, not existed
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


class JsonlWriter:
    """Writes rows to a file (or stdout for `-`), one flushed line per row.

    The file is opened and locked (`flock`) when the writer is made, before anything runs, and
    is not truncated until `start()`: a run that never starts leaves an existing file as it was
    (and removes a file it created). A second writer on the same file fails at once. A write
    that fails is undone (the file is cut back to its last whole row) and raised."""

    def __init__(self, target: str | Path, *, exclusive: bool = False, append: bool = False) -> None:
        self.to_stdout = str(target) == "-"
        self.append = append  # `--resume`: rows go after the file's rows, nothing is emptied
        self._created = False
        self._started = False
        self._closed = False
        self._end = 0  # bytes of whole rows written (regular files)
        if self.to_stdout:
            self.path: Path | None = None
            self._handle: BinaryIO = sys.stdout.buffer
            self._regular = False
        else:
            self.path = Path(target)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except FileExistsError:
                raise ResultsUnavailable(os.strerror(errno.ENOTDIR)) from None
            except OSError as exc:
                raise ResultsUnavailable(exc.strerror or str(exc)) from None
            fd, self._created = _open_locked(self.path, exclusive)
            self._regular = stat.S_ISREG(os.fstat(fd).st_mode)
            self._handle = open(fd, "wb", buffering=0, closefd=True)  # noqa: SIM115 - closed in close()
        self.count = 0

    def start(self) -> None:
        """The run begins: an existing file is emptied (rows start at its beginning). In append
        mode it is kept, but cut after its last newline: a row a crash cut short goes, so the
        rows written next start on a line of their own and the file stays valid JSONL."""
        self._started = True
        if self._regular and self.append:
            assert self.path is not None
            with open(self.path, "rb") as reader:  # the writer's own descriptor is write-only
                self._end = _whole_lines_end(reader.fileno())
            os.ftruncate(self._handle.fileno(), self._end)
            self._handle.seek(self._end)
        elif self._regular:
            os.ftruncate(self._handle.fileno(), 0)
            self._handle.seek(0)

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
        if not self._started:
            self.start()
        line = row.to_json_line()
        data = (line if line is not None and len(line) <= MAX_LINE_BYTES else dumps_row(row.to_json_dict())) + b"\n"
        try:
            if self._regular:
                view = memoryview(data)
                while view:  # an unbuffered file: a short write (a disk filling up) goes on
                    view = view[self._handle.write(view) or 0 :]
            else:
                self._handle.write(data)
                self._handle.flush()
        except OSError:
            self._undo()
            raise
        self._end += len(data)
        self.count += 1

    def _undo(self) -> None:
        """Cut the file back to its last whole row (no partial row stays on disk)."""
        if self._regular:
            try:
                os.ftruncate(self._handle.fileno(), self._end)
            except OSError:
                pass

    def close(self) -> None:
        """Close the file (and unlock it). Every row was written when it was handed over, so a
        close that fails can only repeat a write error already raised: it is not raised twice.
        A file this writer created for a run that never started is removed."""
        if self.to_stdout or self._closed:
            return
        self._closed = True
        if self._created and not self._started and self.path is not None:
            try:
                self.path.unlink()
            except OSError:
                pass
        try:
            self._handle.close()
        except OSError:
            pass

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _whole_lines_end(fd: int) -> int:
    """The length of a file up to and including its last newline (0: no whole line)."""
    end = os.fstat(fd).st_size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - start, start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def open_new_results(dataset: str, root: Path | None = None) -> JsonlWriter:
    """A writer on a new default results file (`default_results_path`), created exclusively: a
    name another run took first is never reused, another one is drawn."""
    for _ in range(99):
        try:
            return JsonlWriter(default_results_path(dataset, root=root), exclusive=True)
        except FileExistsError:
            continue
    path = default_results_path(dataset, root=root)
    raise ResultsUnavailable(f"no unused file name in {path.parent}")


def _lines(path: str | Path, max_line: int) -> Iterator[tuple[int, bytearray | None]]:
    """(line number, line) for each line of the file, read in chunks of 1 MiB; a line longer than
    `max_line` bytes gives (line number, None) and is dropped as it is read, never held whole:
    memory stays under `max_line` + one chunk, whatever the file holds."""
    number = 0
    line = bytearray()
    too_long = False
    with open(path, "rb", buffering=0) as handle:
        read: Callable[[int], bytes | None] = handle.read
        while chunk := read(_CHUNK):
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if not too_long:
                    line += chunk[start:] if end < 0 else chunk[start:end]
                    if len(line) > max_line:
                        too_long, line = True, bytearray()
                if end < 0:
                    break
                number += 1
                yield number, None if too_long else line
                line, too_long = bytearray(), False
                start = end + 1
        if line or too_long:
            yield number + 1, None if too_long else line


def read_rows(path: str | Path, max_line: int | None = None) -> Iterator[tuple[int, ResultRow | str]]:
    """(line number, row) for each line; a bad line gives (line number, reason) instead, and so
    does a line over `max_line` bytes (default MAX_LINE_BYTES), which is skipped unread."""
    for number, line in row_lines(path, max_line):
        yield number, line if isinstance(line, str) else row_of_line(line)


def row_lines(path: str | Path, max_line: int | None = None) -> Iterator[tuple[int, bytearray | str]]:
    """(line number, line) for each line that is not blank; (line number, why) for a line over
    `max_line` bytes (default MAX_LINE_BYTES), skipped unread."""
    cap = MAX_LINE_BYTES if max_line is None else max_line
    for number, line in _lines(path, cap):
        if line is None:
            yield number, f"line longer than {_size(cap)}: not read"
        elif not _BLANK.fullmatch(line):
            yield number, line


def row_of_line(line: bytes | bytearray) -> ResultRow | str:
    """One line of a results file as a row, or why it is not one (`read_rows`)."""
    try:
        value = _loads_line(line)
        if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _too_deep(value):
            value = bound_depth(value)  # a file written elsewhere: readers see what agentv writes
        return ResultRow.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        return f"not a result row: {loc}: {first['msg']}"
    except RecursionError:
        return "not JSON: nested too deeply"
    except ValueError as exc:  # not JSON (orjson's and the standard library's errors)
        return f"not JSON: {exc}"


def not_results(path: Path) -> str | None:
    """Why `path` cannot be a results file to read (None: it can), said after "results file":
    `not found`, `is a directory, not a file`, or `is not a regular file (a FIFO, a socket or a
    device)`, which a reader would wait on or read as something else."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "not found"
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    return None if stat.S_ISREG(mode) else "is not a regular file (a FIFO, a socket or a device)"


def _too_deep(value: Any) -> bool:
    """Nested deeper than MAX_DEPTH (orjson refuses to write it: C speed, no recursion here)."""
    try:
        orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError as exc:
        return "recursion" in str(exc).lower()
    return False


def _size(count: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count} bytes"
