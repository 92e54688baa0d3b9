"""Long-lived worker processes: a request per case as one JSON line on the worker's stdin, one
reply line on its stdout (docs/workers.md, protocol version 1).

A worker starts by writing the handshake line `{"agentv_worker": 1}` (after its imports, so a
worker that cannot start says so before any case). Then, for each request
`{"v": 1, "id": ..., ...}` it writes one reply `{"id": <the same>, "answer": ...}` or
`{"id": ..., "error": "..."}`. Whatever it writes to stderr is kept per request (a bounded tail).

Nothing a worker does can hang a run or mix up answers: every wait has a deadline; a reply that
is not one JSON object, or answers another request, or a worker that closes stdout or exits,
ends that request with an error and the worker is killed (the pool starts a new one for the
next case). Workers run in their own process group, tracked by the run's registry, so stopping
the run kills them.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.process.programs import find_program, missing_program_message
from agentv_py.process.reaper import REAPER, signal_group
from agentv_py.process.spawn import ProcessRegistry

PROTOCOL = 1
HANDSHAKE_KEY = "agentv_worker"
STDERR_TAIL = 4096  # bytes of stderr kept per request
_CHUNK = 65536


@dataclass
class Reply:
    """One request's outcome: the reply object, or an error; the worker's stderr meanwhile."""

    data: dict[str, Any] | None
    error: str | None
    stderr: str
    duration_ms: float
    worker_lost: bool = False  # the worker was killed or died: the next request needs a new one


def _shown(raw: bytes, limit: int = 120) -> str:
    text = raw.decode("utf-8", "replace")
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Worker:
    """One worker process: started (and its handshake awaited) by `start`, asked by `request`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: Mapping[str, str] | None,
        registry: ProcessRegistry | None,
        line_cap: int,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.registry = registry
        self.line_cap = line_cap
        self.proc: subprocess.Popen[bytes] | None = None
        self._tag: int | None = None
        self._out = bytearray()
        self._err: deque[bytes] = deque()
        self._err_size = 0
        self.answered = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float) -> str | None:
        """Start the process and wait for its handshake; the reason it failed, or None."""
        if self.registry is not None and self.registry.closed:
            return "interrupted"
        env, tag = REAPER.command_env(self.env)
        try:
            with REAPER.spawning():
                self.proc = subprocess.Popen(
                    self.argv,
                    executable=find_program(self.argv[0], env),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=self.cwd,
                    env=env,
                    start_new_session=True,
                )
                REAPER.started(tag, self.proc.pid)
        except OSError as exc:
            REAPER.finished(tag, None)
            if isinstance(exc, FileNotFoundError) and "/" not in self.argv[0]:
                return missing_program_message(self.argv[0])
            return f"cannot run {self.argv[0]}: {exc.strerror or exc}"
        self._tag = tag
        if self.registry is not None and not self.registry.add(self.proc.pid):
            self.stop()
            return "interrupted"
        line, error = self._read_line(time.monotonic() + timeout, "start", timeout)
        if error is not None:
            stderr = self._take_stderr().strip()
            self.stop()
            return error + (f": {stderr.splitlines()[-1]}" if stderr else "")
        assert line is not None
        try:
            hello = json.loads(line)
        except ValueError:
            hello = None
        if not isinstance(hello, dict) or hello.get(HANDSHAKE_KEY) != PROTOCOL:
            self.stop()
            return (
                f'worker did not start with the handshake {{"{HANDSHAKE_KEY}": {PROTOCOL}}}: its first line was '
                f"{_shown(line)} (docs/workers.md)"
            )
        self._take_stderr()  # what it said while starting is not a request's
        return None

    def request(self, payload: dict[str, Any], timeout: float) -> Reply:
        """Send one request and wait (at most `timeout` seconds) for its reply."""
        started = time.monotonic()
        self._take_stderr()
        assert self.proc is not None and self.proc.stdin is not None
        request = json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n"
        error = self._write(request, started + timeout, timeout)
        if error is not None:
            return self._lost(error, started)
        line, error = self._read_line(started + timeout, "request", timeout)
        if error is not None:
            return self._lost(error, started)
        assert line is not None
        try:
            data = json.loads(line)
        except RecursionError:  # a whole line, the protocol in step: the worker stays
            return self._unreadable("nested too deeply to read", started)
        except ValueError as exc:
            if not isinstance(exc, json.JSONDecodeError) and "digits" in str(exc):
                digits = sys.get_int_max_str_digits()
                return self._unreadable(f"holding an integer longer than {digits} digits", started)
            data = None
        if not isinstance(data, dict):
            return self._lost(f"worker replied with a line that is not a JSON object: {_shown(line)}", started)
        if data.get("id") != payload["id"]:
            got = _shown(json.dumps(data.get("id")).encode())
            return self._lost(f"worker replied to request {got}, not to {json.dumps(payload['id'])}", started)
        self.answered += 1
        took = (time.monotonic() - started) * 1000
        return Reply(data, None, self._take_stderr(), took)

    def _write(self, data: bytes, deadline: float, timeout: float) -> str | None:
        """Write a request by the deadline (the case's): a worker that stops reading its stdin
        cannot hang the run once the pipe is full. What it writes meanwhile is kept (its stdout
        for the reply, its stderr for the request), so neither side waits on the other. None when
        written, else why not."""
        assert self.proc is not None and self.proc.stdin is not None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        in_fd, out_fd, err_fd = self.proc.stdin.fileno(), self.proc.stdout.fileno(), self.proc.stderr.fileno()
        os.set_blocking(in_fd, False)
        view = memoryview(data)
        with selectors.PollSelector() as selector:
            selector.register(in_fd, selectors.EVENT_WRITE)
            selector.register(out_fd, selectors.EVENT_READ)
            selector.register(err_fd, selectors.EVENT_READ)
            while view:
                left = deadline - time.monotonic()
                if left <= 0:
                    return f"worker did not read its request within {deadline_text(timeout)} (killed; a new one starts)"
                for key, _ in selector.select(left):
                    if key.fd == in_fd:
                        try:
                            view = view[os.write(in_fd, view[:_CHUNK]) :]
                        except BlockingIOError:
                            continue
                        except OSError:  # EPIPE: it closed its stdin, or exited
                            return self._exit_reason("closed its stdin")
                        continue
                    chunk = self._take(key.fd, err_fd, selector)
                    if chunk:
                        self._out += chunk
                    elif chunk is not None:  # stdout closed before the request was even read
                        if self.proc.poll() is None:
                            self.proc.kill()
                        return self._exit_reason("closed its stdout")
        return None

    def _unreadable(self, why: str, started: float) -> Reply:
        """A reply that is one whole line of JSON agentv cannot read: this request's error only."""
        took = (time.monotonic() - started) * 1000
        return Reply(None, f"worker replied with JSON {why}", self._take_stderr(), took)

    def _lost(self, error: str, started: float) -> Reply:
        stderr = self._take_stderr()
        self.stop()
        tail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        return Reply(None, error + (f": {tail}" if tail else ""), stderr, (time.monotonic() - started) * 1000, True)

    def _exit_reason(self, what: str) -> str:
        try:
            code = self.proc.wait(timeout=1) if self.proc is not None else None
        except subprocess.TimeoutExpired:  # it closed a pipe and runs on: it is killed (`_lost`)
            return f"worker {what} (still running: killed; a new one starts)"
        if code is not None and code < 0:
            return f"worker {what}: killed by {signal.Signals(-code).name}"
        return f"worker {what}" + (f" (exit code {code})" if code is not None else "")

    def _read_line(self, deadline: float, when: str, timeout: float | None = None) -> tuple[bytes | None, str | None]:
        """The next stdout line (stderr kept meanwhile), or (None, why not) by the deadline."""
        assert self.proc is not None and self.proc.stdout is not None and self.proc.stderr is not None
        out_fd, err_fd = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        with selectors.PollSelector() as selector:
            selector.register(out_fd, selectors.EVENT_READ)
            selector.register(err_fd, selectors.EVENT_READ)
            while True:
                newline = self._out.find(b"\n")
                if newline >= 0:
                    line = bytes(self._out[:newline])
                    del self._out[: newline + 1]
                    return line, None
                if len(self._out) > self.line_cap:
                    return None, f"worker wrote a line longer than the {self.line_cap // (1024 * 1024)} MB cap"
                left = deadline - time.monotonic()
                if left <= 0:
                    if when == "start":
                        return None, f"worker did not send its handshake within {deadline_text(timeout)}"
                    return None, f"worker gave no reply within {deadline_text(timeout)} (killed; a new one starts)"
                for key, _ in selector.select(left):
                    chunk = self._take(key.fd, err_fd, selector)
                    if chunk is None:
                        continue
                    if not chunk:  # stdout closed: the worker ended, or closed it
                        what = "exited before its handshake" if when == "start" else "closed its stdout"
                        if self.proc.poll() is None:
                            self.proc.kill()
                        return None, self._exit_reason(what)
                    self._out += chunk

    def _take(self, fd: int, err_fd: int, selector: selectors.BaseSelector) -> bytes | None:
        """Read a ready descriptor: stderr is kept (at its end, no longer watched) and None is
        returned; stdout's bytes are returned (b"": it was closed)."""
        chunk = os.read(fd, _CHUNK)
        if fd != err_fd:
            return chunk
        if chunk:
            self._keep_stderr(chunk)
        else:
            selector.unregister(err_fd)
        return None

    def _keep_stderr(self, chunk: bytes) -> None:
        self._err.append(chunk)
        self._err_size += len(chunk)
        while self._err_size > STDERR_TAIL and len(self._err) > 1:
            self._err_size -= len(self._err.popleft())

    def _take_stderr(self) -> str:
        """The stderr kept since the last call (and whatever is waiting in the pipe)."""
        if self.proc is not None and self.proc.stderr is not None and not self.proc.stderr.closed:
            fd = self.proc.stderr.fileno()
            with selectors.PollSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                while selector.select(0):
                    chunk = os.read(fd, _CHUNK)
                    if not chunk:
                        break
                    self._keep_stderr(chunk)
        text = b"".join(self._err)[-STDERR_TAIL:].decode("utf-8", "replace")
        self._err.clear()
        self._err_size = 0
        return text

    def stop(self) -> None:
        """Kill the worker's process group and reap it (idempotent)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        signal_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        if self.registry is not None:
            self.registry.discard(proc.pid)
        REAPER.finished(self._tag, proc.pid)


def deadline_text(timeout: float | None) -> str:
    return f"{timeout:g} s" if timeout is not None else "the time allowed"


class WorkerPool:
    """Idle workers, handed out one per calling thread and returned after each request; a
    worker that was lost is replaced by a new one on the next `acquire`."""

    def __init__(self, make: Callable[[], Worker], start_timeout: float) -> None:
        self._make = make
        self._start_timeout = start_timeout
        self._idle: list[Worker] = []
        self._all: list[Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0  # workers started over the pool's life (tests, benchmarks)

    @property
    def closed(self) -> bool:
        return self._closed

    def acquire(self) -> tuple[Worker | None, str | None]:
        with self._lock:
            if self._closed:
                return None, "interrupted"
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker, None
        worker = self._make()
        error = worker.start(self._start_timeout)
        if error is not None:
            return None, error
        with self._lock:
            self.started += 1
            if self.closed:  # closed while this one started
                worker.stop()
                return None, "interrupted"
            self._all.append(worker)
        return worker, None

    def adopt(self, worker: Worker, registry: ProcessRegistry | None) -> None:
        """Take a started worker (the run's start check's) as the first idle one, tracked by the
        run's registry from now on."""
        if not worker.alive or (registry is not None and worker.proc is not None and not registry.add(worker.proc.pid)):
            worker.stop()
            return
        worker.registry = registry
        with self._lock:
            self.started += 1
            self._all.append(worker)
            self._idle.append(worker)

    def release(self, worker: Worker) -> None:
        with self._lock:
            if worker.alive and not self._closed:
                self._idle.append(worker)
                return
        worker.stop()

    def close(self) -> None:
        """Stop every worker (at the end of a run and when it is interrupted)."""
        with self._lock:
            self._closed = True
            workers, self._all, self._idle = self._all, [], []
        for worker in workers:
            worker.stop()
