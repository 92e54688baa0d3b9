"""`run_process`: start a command in its own session, capture capped output, never hang.

Every subprocess the tool starts (targets, healthchecks, code judges) goes through here:
- it gets its own session, so the whole process group can be signalled;
- stdout and stderr are read concurrently; stdout has a byte cap (exceeding it kills the group),
  stderr keeps only its last 64 KB (bounded memory) and never fails a command, however much a
  target logs;
- on timeout the group gets SIGTERM, then SIGKILL after a short grace;
- when the direct child exits, anything it left in its group is killed, and a grandchild that
  keeps the pipes open cannot keep the run waiting;
- nothing it started outlives it, not even a descendant that double-forked and called `setsid`
  (leaving the group and the session): see `Reaper`.
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.process.programs import find_program, missing_program_message
from agentv_py.process.reaper import (
    REAPER,
    leader_exited,
    signal_group,
    terminate_group,
)

DEFAULT_OUTPUT_CAP = 10 * 1024 * 1024
KILL_GRACE_SECONDS = 1.0
# After the direct child exits, how long pipes still held by a descendant may stay open.
ORPHAN_PIPE_GRACE_SECONDS = 0.2
_IDLE_POLL_SECONDS = 0.05
_STDERR_TAIL_BYTES = 64 * 1024
STDERR_KEPT = 2000  # characters of a target's stderr a row keeps (`ProcResult.stderr_text`)
_CHUNK = 65536
_PERMANENT_SPAWN_ERRORS = frozenset(
    {errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOEXEC, errno.ENOTDIR, errno.EISDIR}
)


@dataclass(slots=True)
class ProcResult:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    duration: float
    timed_out: bool = False
    overflow: bool = False
    spawn_error: str | None = None
    spawn_errno: int | None = None  # the OSError's errno when the command could not be started

    @property
    def cannot_start(self) -> bool:
        """The program is missing, not executable or not a program: trying again cannot help."""
        return self.spawn_errno in _PERMANENT_SPAWN_ERRORS

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (self.timed_out or self.overflow or self.spawn_error)

    def abnormal_end(self, timeout: float, cap: int) -> str | None:
        """Why the command did not end by itself: it could not start, timed out or went over the
        output cap (one line each, the same for targets, healthchecks and judges); None when it
        exited on its own, whatever its exit code."""
        if self.spawn_error:
            return self.spawn_error
        if self.timed_out:
            return f"timed out after {timeout:g}s (process group killed)"
        if self.overflow:
            return f"output exceeded the {cap // (1024 * 1024)} MB cap (process group killed)"
        return None

    def killed_by_signal(self) -> str | None:
        """`killed by signal N` when a signal ended the command, else None."""
        code = self.returncode
        return f"killed by signal {-code}" if code is not None and code < 0 else None

    def stderr_text(self, limit: int = STDERR_KEPT) -> str | None:
        """The last `limit` characters of stderr, lines kept (None: it wrote nothing but space)."""
        text = self.stderr.decode("utf-8", errors="replace").strip()
        if not text:
            return None
        return text if len(text) <= limit else "..." + text[-(limit - 3) :]

    def stderr_tail(self, limit: int = 300) -> str:
        """The last non-empty stderr lines, on one line, at most `limit` characters."""
        text = self.stderr.decode("utf-8", errors="replace").strip()
        if not text:
            return ""
        one_line = " | ".join(line.strip() for line in text.splitlines()[-5:] if line.strip())
        return one_line if len(one_line) <= limit else "..." + one_line[-(limit - 3) :]


class ProcessRegistry:
    """The process groups one run has started and not yet reaped.

    Each run owns one (there is no global registry). `close()` kills every group still running
    and refuses new ones, whatever stops the run: Ctrl-C, SIGTERM, a failed write, an internal
    error. A process started while the registry closes is killed at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: set[int] = set()
        self._closed = False
        self._on_close: list[Callable[[], None]] = []
        self.shared: dict[Any, Any] = {}  # what lives as long as the run: persistent judges' worker pools

    @property
    def closed(self) -> bool:
        return self._closed

    def add(self, pid: int) -> bool:
        """Track a new process group; False (not tracked) when the registry is closed."""
        with self._lock:
            if self._closed:
                return False
            self._pids.add(pid)
            return True

    def discard(self, pid: int) -> None:
        with self._lock:
            self._pids.discard(pid)

    def running(self) -> list[int]:
        """The process-group ids still tracked (for tests and diagnostics)."""
        with self._lock:
            return sorted(self._pids)

    def at_close(self, callback: Callable[[], None]) -> bool:
        """Call `callback` when the registry closes (after the kills); False when it is closed."""
        with self._lock:
            if self._closed:
                return False
            self._on_close.append(callback)
            return True

    def close(self) -> None:
        """Refuse new processes and SIGKILL every tracked group (idempotent), then run the
        close callbacks (`at_close`: worker pools reaping their workers)."""
        with self._lock:
            self._closed = True
            pids = list(self._pids)
            callbacks, self._on_close = self._on_close, []
        for pid in pids:
            signal_group(pid, signal.SIGKILL)
        REAPER.sweep(killed=pids)  # what they left outside their groups goes too
        for callback in callbacks:
            callback()


def run_process(
    argv: Sequence[str],
    *,
    timeout: float,
    stdin: bytes | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    kill_grace: float = KILL_GRACE_SECONDS,
    capture_stdout: bool = True,
    registry: ProcessRegistry | None = None,
) -> ProcResult:
    """Run `argv` and return what happened. Never raises for anything the command does.

    `capture_stdout=False` discards stdout (for commands whose answer is a file). With a
    `registry` (the run's), the process group is tracked there while it runs, so stopping the
    run kills it; a closed registry starts nothing. If the caller is interrupted (an exception
    such as KeyboardInterrupt escapes), the group is killed before the exception goes on.
    """
    start = time.monotonic()
    if registry is not None and registry.closed:
        return ProcResult(None, b"", b"", 0.0, spawn_error="interrupted")
    env, tag = REAPER.command_env(env)
    try:
        with REAPER.spawning():
            proc = subprocess.Popen(
                list(argv),
                executable=find_program(argv[0], env),
                stdin=subprocess.PIPE if stdin is not None else _devnull(),
                stdout=subprocess.PIPE if capture_stdout else _devnull(),
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
            REAPER.started(tag, proc.pid)
    except OSError as exc:
        REAPER.finished(tag, None)
        return _spawn_failure(argv, cwd, exc, time.monotonic() - start)
    if registry is not None and not registry.add(proc.pid):  # the run stopped meanwhile
        signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
        _close_pipes(proc)
        REAPER.finished(tag, proc.pid)
        return ProcResult(None, b"", b"", time.monotonic() - start, spawn_error="interrupted")
    try:
        return _communicate(proc, stdin, start, timeout, output_cap, kill_grace, registry)
    except BaseException:
        signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
        _close_pipes(proc)
        raise
    finally:
        if registry is not None:
            registry.discard(proc.pid)
        REAPER.finished(tag, proc.pid)  # the command is reaped: nothing it started may stay


_DEVNULL: list[int] = []  # one descriptor of /dev/null for every command (Popen opens one per call)


def _devnull() -> int:
    if not _DEVNULL:
        _DEVNULL.append(os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC))
    return _DEVNULL[0]


def _spawn_failure(argv: Sequence[str], cwd: str | os.PathLike[str] | None, exc: OSError, took: float) -> ProcResult:
    code = exc.errno
    if isinstance(exc, FileNotFoundError) and "/" not in argv[0] and (cwd is None or os.path.isdir(cwd)):
        return ProcResult(None, b"", b"", took, spawn_error=missing_program_message(argv[0]), spawn_errno=code)
    reason = exc.strerror or str(exc)
    missing_cwd = cwd is not None and isinstance(exc, FileNotFoundError) and not os.path.isdir(cwd)
    where = f" (cwd {cwd})" if missing_cwd else ""
    return ProcResult(
        None,
        b"",
        b"",
        took,
        spawn_error=f"cannot run {argv[0]}: {reason}{where}",
        spawn_errno=code,
    )


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


def _open_pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux >= 5.3), else None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def _communicate(
    proc: subprocess.Popen[bytes],
    stdin: bytes | None,
    start: float,
    timeout: float,
    cap: int,
    kill_grace: float,
    registry: ProcessRegistry | None = None,
) -> ProcResult:
    assert proc.stderr is not None
    deadline = start + timeout
    out_chunks: list[bytes] = []
    err_chunks: deque[bytes] = deque()
    out_size = err_kept = 0
    timed_out = overflow = False
    exited_at: float | None = None
    out_fd = proc.stdout.fileno() if proc.stdout is not None else -1
    err_fd = proc.stderr.fileno()
    pidfd = _open_pidfd(proc.pid)
    open_pipes = 2 if out_fd >= 0 else 1

    with selectors.PollSelector() as selector:
        if out_fd >= 0:
            selector.register(out_fd, selectors.EVENT_READ)
        selector.register(err_fd, selectors.EVENT_READ)
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ)
        view = memoryview(stdin) if stdin else None
        if proc.stdin is not None:
            if view:
                os.set_blocking(proc.stdin.fileno(), False)
                selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
        # Until the pipes are closed AND the direct child has exited (noticed without reaping it,
        # so its process-group id stays reserved for the clean-up kill below).
        while open_pipes or exited_at is None:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if exited_at is not None and now - exited_at > ORPHAN_PIPE_GRACE_SECONDS:
                break  # a descendant holds the pipes open; the group is killed below
            wait = deadline - now
            if pidfd is None or exited_at is not None:
                wait = min(wait, _IDLE_POLL_SECONDS)
            events = selector.select(wait)
            if not events and pidfd is None and exited_at is None and leader_exited(proc.pid):
                exited_at = time.monotonic()
            for key, _ in events:
                fd = key.fd
                if fd == pidfd:
                    selector.unregister(fd)
                    exited_at = time.monotonic()
                elif fd in (out_fd, err_fd):
                    data = os.read(fd, _CHUNK)
                    if not data:
                        selector.unregister(fd)
                        open_pipes -= 1
                        continue
                    if fd == out_fd:
                        out_chunks.append(data)
                        out_size += len(data)
                    else:
                        # Only the tail is kept: stderr is diagnostics, never a reason to fail.
                        err_chunks.append(data)
                        err_kept += len(data)
                        while err_kept > _STDERR_TAIL_BYTES and len(err_chunks) > 1:
                            err_kept -= len(err_chunks.popleft())
                    if out_size > cap:
                        overflow = True
                else:  # stdin writable
                    assert view is not None and proc.stdin is not None
                    try:
                        written = os.write(fd, view[:_CHUNK])
                    except (BrokenPipeError, BlockingIOError) as exc:
                        written = 0 if isinstance(exc, BlockingIOError) else len(view)
                    view = view[written:]
                    if not view:
                        selector.unregister(fd)
                        proc.stdin.close()
            if overflow:
                break
            if not open_pipes and exited_at is None and pidfd is None:
                # No pidfd: wait for the exit without reaping, by polling with backoff.
                if not _wait_unreaped(proc, max(deadline - time.monotonic(), 0.0)):
                    timed_out = True
                    break
                exited_at = time.monotonic()
    if pidfd is not None:
        os.close(pidfd)

    if registry is not None:  # untracked before the leader is reaped: its pid may then be reused
        registry.discard(proc.pid)
    if timed_out or overflow:
        terminate_group(proc, kill_grace)
    else:
        # Whatever the child left behind in its group (daemons, stuck grandchildren) goes too.
        signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
    _close_pipes(proc)
    return ProcResult(
        returncode=proc.returncode,
        stdout=b"".join(out_chunks),
        stderr=b"".join(err_chunks),
        duration=time.monotonic() - start,
        timed_out=timed_out,
        overflow=overflow,
    )


def _wait_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the child to exit without reaping it (its pid stays its group's id). True if it did."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while not leader_exited(proc.pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    return True
