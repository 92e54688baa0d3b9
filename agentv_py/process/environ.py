"""agentv's own environment as a plain dict, read once while it does not change, and the size a
command line's environment takes: what every command of a run starts from. Reading `os.environ`
decodes each of its entries in Python (~0.1 ms for 35 variables), and a run starts a command per
case: a snapshot is reused for as long as the process's environment is byte-for-byte the same."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

_lock = threading.Lock()
_raw: dict[bytes, bytes] | None = None  # os.environ's bytes when `_snapshot` was taken
_snapshot: dict[str, str] = {}
_sized: tuple[Mapping[str, str] | None, int] = (None, 0)  # the last environment `environ_bytes` measured


def _raw_environ() -> dict[bytes, bytes] | None:
    """os.environ's own bytes mapping, copied (C speed), or None where it has none."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else None


def environ_snapshot() -> dict[str, str]:
    """A plain dict of `os.environ` as it is now: the same object for as long as the environment
    is unchanged (compared byte for byte), so treat it as read-only."""
    global _raw, _snapshot
    raw = _raw_environ()
    with _lock:
        if raw is None or raw != _raw:
            _snapshot = dict(os.environ)
            _raw = raw
        return _snapshot


def environ_bytes(env: Mapping[str, str]) -> int:
    """The bytes `env` takes on a command line (`KEY=VALUE\\0` each, as execve counts them);
    remembered for the last mapping measured, so a run measuring the same snapshot (or target
    environment) for every case pays once. Treat a measured mapping as read-only."""
    global _sized
    with _lock:
        last, size = _sized
        if last is env:
            return size
    size = sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in env.items())
    with _lock:
        _sized = (env, size)
    return size
