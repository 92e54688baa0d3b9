"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path


def run_parallel(commands: list[list[str]], workers: int, stdin: bytes | None = None, cwd: Path | None = None) -> float:
    """Run every command, `workers` at a time (one thread each); return the wall time."""
    pending = iter(commands)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                argv = next(pending, None)
            if argv is None:
                return
            subprocess.run(argv, input=stdin, cwd=cwd, stdout=subprocess.DEVNULL, check=True)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started
