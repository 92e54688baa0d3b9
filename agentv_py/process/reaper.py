"""Nothing a command started outlives it (`Reaper`, on Linux a child subreaper that tags every
command and sweeps what an ended one left behind, even past a double fork and `setsid`), and the
process-group signalling every command's end goes through (`signal_group`, `terminate_group`)."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import itertools
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Iterator, Mapping

from agentv_py.process.environ import environ_snapshot

TAG_VARIABLE = "AGENTV_COMMAND"
_PR_SET_CHILD_SUBREAPER = 36
_SESSION_MEMORY_SECONDS = 30.0
_REAP_SECONDS = 2.0
_SWEEP_INTERVAL = 0.2  # seconds: a busy run sweeps at most this often, not after every command


class Reaper:
    """Nothing a command started outlives it, even a descendant that left its process group and
    session (double fork and `setsid`), on Linux.

    The first time a command is started, agentv becomes a child subreaper (`prctl
    PR_SET_CHILD_SUBREAPER`): an orphaned descendant of any of its commands is then reparented to
    agentv instead of to init. Every command is started with `AGENTV_COMMAND=<this agentv>.<n>` in
    its environment, which its descendants inherit. When a command ends (and when a run's registry
    closes), `sweep` kills (SIGKILL) and reaps every direct child of agentv that

    - carries this agentv's tag of a command that is no longer running, or
    - belongs to the session of a command that ended in the last 30 s and is older than that end
      (descendants that cleared their environment, and zombies);

    never a command still running (its pid or its tag), nor a child the host program started
    itself (it carries no tag and is in no such session). A descendant that both cleared its
    environment and called `setsid` is not recognised. Elsewhere (not Linux, or prctl refused)
    nothing changes: no tag, no sweep.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the state below
        # Spawns and sweeps exclude each other (many spawns at once, one sweep, sweeps first): a
        # process forked but not yet registered as a command may carry a reused pid whose session
        # id is an ended command's, and must never be taken for that command's leftover.
        self._gate = threading.Condition()
        self._spawns = 0
        self._sweeping = False
        self._sweeps_waiting = 0
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._active: bool | None = None  # None: not tried yet
        self._prefix = f"{self._pid}.{secrets.token_hex(4)}."
        self._counter = itertools.count(1)
        self._running: dict[int, int | None] = {}  # tag -> pid of each command running
        self._sessions: dict[int, float] = {}  # session id of an ended command -> boot time it ended
        self._last_sweep = -_SWEEP_INTERVAL  # monotonic time the last sweep ended
        self._due = False  # a sweep is due within `_SWEEP_INTERVAL` (`finished`)
        self._wake = threading.Event()  # set when a sweep falls due: wakes `_sweeper`
        self._sweeper: threading.Thread | None = None

    @property
    def active(self) -> bool:
        with self._lock:
            if self._pid != os.getpid():  # a forked child is no subreaper until it asks
                self._reset()
            if self._active is None:
                self._active = _become_subreaper()
            return self._active

    def command_env(self, env: Mapping[str, str] | None) -> tuple[Mapping[str, str] | None, int | None]:
        """The environment to start a command with, and its tag (None: not tracked)."""
        if not self.active:
            return env, None
        with self._lock:
            tag = next(self._counter)
            self._running[tag] = None
        return {**(environ_snapshot() if env is None else env), TAG_VARIABLE: f"{self._prefix}{tag}"}, tag

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Around starting a command and `started()`: no sweep runs meanwhile."""
        with self._gate:
            while self._sweeping or self._sweeps_waiting:
                self._gate.wait()
            self._spawns += 1
        try:
            yield
        finally:
            with self._gate:
                self._spawns -= 1
                self._gate.notify_all()

    @contextlib.contextmanager
    def _sweep_alone(self) -> Iterator[None]:
        with self._gate:
            self._sweeps_waiting += 1
            while self._sweeping or self._spawns:
                self._gate.wait()
            self._sweeps_waiting -= 1
            self._sweeping = True
        try:
            yield
        finally:
            with self._gate:
                self._sweeping = False
                self._gate.notify_all()

    def started(self, tag: int | None, pid: int) -> None:
        if tag is not None:
            with self._lock:
                self._running[tag] = pid
                self._sessions.pop(pid, None)  # a reused pid: no longer an ended command's session

    def finished(self, tag: int | None, pid: int | None) -> None:
        """The command (reaped, or never started) has ended: kill what it left behind — now, or,
        when the last sweep was under `_SWEEP_INTERVAL` ago (a run ending hundreds of commands a
        second), by a sweep at most that much later that takes every command ended meanwhile. The
        later sweep runs on one long-lived thread (`_sweeper`), woken only when a sweep falls
        due: not a thread per sweep, and nothing woken per command."""
        if tag is None:
            return
        with self._lock:
            self._running.pop(tag, None)
            if pid is not None:
                self._sessions[pid] = _boot_time()
            if self._last_sweep + _SWEEP_INTERVAL > time.monotonic():
                if not self._due:
                    self._due = True
                    self._start_sweeper()
                    self._wake.set()
                return
        self.sweep()

    def _start_sweeper(self) -> None:
        """The sweeper thread of this process (a forked child starts its own). Under `_lock`."""
        if self._sweeper is None or not self._sweeper.is_alive():
            self._sweeper = threading.Thread(target=self._sweep_when_due, name="agentv-reaper", daemon=True)
            self._sweeper.start()

    def _sweep_when_due(self) -> None:
        pid = os.getpid()
        while True:
            self._wake.wait()
            with self._lock:
                if pid != self._pid:  # a forked child: its own reaper starts its own thread
                    return
                self._wake.clear()
                wait = self._last_sweep + _SWEEP_INTERVAL - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            with self._lock:
                due, self._due = self._due, False
            if due:  # not flushed meanwhile
                self.sweep()

    def flush(self) -> None:
        """A sweep that is due runs now (at exit: no leftover outlives agentv)."""
        with self._lock:
            due, self._due = self._due, False
        if due:
            self.sweep()

    def sweep(self, killed: Collection[int] = ()) -> None:
        """Kill and reap the direct children left behind by ended commands (and by the running
        commands `killed`, by pid). Returns once they are reaped (at most a few seconds)."""
        if not self.active:
            return
        with self._sweep_alone():
            for _ in range(20):  # each round's deaths may orphan the next generation
                victims = self._victims(killed)
                if not victims:
                    break
                for pid, zombie in victims:
                    if not zombie:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
                for pid, _ in victims:
                    _reap(pid)
            with self._lock:
                cutoff = _boot_time() - _SESSION_MEMORY_SECONDS
                self._sessions = {sid: at for sid, at in self._sessions.items() if at >= cutoff}
                self._last_sweep = time.monotonic()

    def _victims(self, killed: Collection[int]) -> list[tuple[int, bool]]:
        with self._lock:
            commands = {pid for pid in self._running.values() if pid is not None}
            killed_tags = {tag for tag, pid in self._running.items() if pid in killed}
            running = set(self._running) - killed_tags
            sessions = dict(self._sessions)
        victims: list[tuple[int, bool]] = []
        for pid in _children():
            if pid in commands:
                continue
            stat = _stat(pid)
            if stat is None or stat[1] != self._pid:
                continue
            state, _, session, started = stat
            ended = sessions.get(session)
            if ended is not None and started <= ended:
                victims.append((pid, state == "Z"))
                continue
            tag = self._tag(pid)
            if tag is not None and tag not in running:
                victims.append((pid, state == "Z"))
        return victims

    def _tag(self, pid: int) -> int | None:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            return None
        marker = f"\0{TAG_VARIABLE}={self._prefix}".encode()
        at = (b"\0" + environ).find(marker)
        if at < 0:
            return None
        value = environ[at + len(marker) - 1 :].split(b"\0", 1)[0]
        return int(value) if value.isdigit() else None


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _boot_time() -> float:
    """Seconds since boot, the clock of /proc/<pid>/stat start times."""
    return time.clock_gettime(time.CLOCK_BOOTTIME) if hasattr(time, "CLOCK_BOOTTIME") else time.monotonic()


def _children() -> list[int]:
    """Pids of this process's direct children (every thread's), from /proc."""
    me = os.getpid()
    if not os.path.exists(f"/proc/self/task/{me}/children"):  # a kernel without it: scan everything
        try:
            names = os.listdir("/proc")
        except OSError:
            return []
        return [int(p) for p in names if p.isdigit() and (stat := _stat(int(p))) is not None and stat[1] == me]
    pids: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as handle:
                pids.extend(int(p) for p in handle.read().split())
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return pids


def _stat(pid: int) -> tuple[str, int, int, float] | None:
    """(state, parent pid, session id, start time in seconds since boot) of a process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1]), int(fields[3]), int(fields[19]) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


def _reap(pid: int) -> None:
    """Wait (a little) for a child killed by the sweep, so no zombie is left."""
    deadline = time.monotonic() + _REAP_SECONDS
    delay = 0.001
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() >= deadline:
            return
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


REAPER = Reaper()
atexit.register(REAPER.flush)


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def terminate_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    signal_group(proc.pid, signal.SIGKILL)  # also reaches descendants that ignored SIGTERM
    proc.wait()


def leader_exited(pid: int) -> bool:
    """Has the direct child exited? (does not reap it, so its group id stays reserved)"""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None
