"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path


def installed_env(work: Path, **extra: str) -> dict[str, str]:
    """The environment for timing agentv as an installed package runs: bytecode written and
    read (a private `PYTHONPYCACHEPREFIX` under `work`, so nothing lands in the tree), whatever
    `PYTHONDONTWRITEBYTECODE` the caller's shell sets. Without it every process recompiles
    agentv's modules (about a second of CPU), which no installed copy pays. The first run of each
    command compiles; time from the second."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(work / "pyc"), **extra)
    return env


CALIBRATION_LOOP = (
    "import time\nt = time.process_time()\nsum(i * i for i in range(3_000_000))\nprint(time.process_time() - t)"
)


def calibration_cpu(env: dict[str, str] | None = None) -> float:
    """CPU seconds of a fixed pure-Python loop (3 million squares summed), in a fresh process:
    printed beside every figure, so a reader can tell a slower machine from a regression."""
    out = subprocess.run([sys.executable, "-c", CALIBRATION_LOOP], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def print_calibration() -> None:
    """The machine's calibration line every benchmark prints first (`calibration_cpu`)."""
    print(
        f"calibration: a fixed pure-Python loop (scripts/_bench.py) takes {calibration_cpu():.3f} s CPU here",
        flush=True,
    )


def run_threads(task: Callable[[], None], count: int, workers: int) -> float:
    """Call `task` `count` times, `workers` threads at a time; return the wall time."""
    pending = iter(range(count))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if next(pending, None) is None:
                    return
            task()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def run_parallel(commands: list[list[str]], workers: int, stdin: bytes | None = None, cwd: Path | None = None) -> float:
    """Run every command, `workers` at a time (one thread each); return the wall time."""
    pending = iter(commands)
    lock = threading.Lock()

    def one() -> None:
        with lock:
            argv = next(pending)
        subprocess.run(argv, input=stdin, cwd=cwd, stdout=subprocess.DEVNULL, check=True)

    return run_threads(one, len(commands), workers)


_PROBE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
    "wall = time.perf_counter() - t\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(wall, usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime)\n"
)


def timed_child(
    argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB of the largest process, exit code) of one command, measured
    from a fresh probe process so earlier children do not count."""
    wall, _, peak, code = measured_child(argv, cwd, env)
    return wall, peak, code


def measured_child(
    argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds of it and everything it started, peak RSS MiB of the largest
    process, exit code) of one command, from a fresh probe process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    wall, rss_kib, code, cpu = out.stdout.split()
    return float(wall), float(cpu), int(rss_kib) / 1024, int(code)


def cpu_medians(
    commands: dict[str, list[str]], repeat: int, cwd: Path | None = None, env: dict[str, str] | None = None
) -> dict[str, float]:
    """Median CPU seconds (user + sys, the command and everything it starts) of each command,
    the commands interleaved `repeat` times so that a busy spell of a shared machine hits all alike."""
    runs: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            runs[name].append(measured_child(argv, cwd, env)[1])
    return {name: statistics.median(times) for name, times in runs.items()}


def orjson_read(path: Path) -> list[str]:
    """A command that reads a JSONL file line by line with orjson: the calibration figure the
    readers of results files (`metrics`, `compare`) are measured against."""
    code = "import orjson, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        orjson.loads(line)\n"
    return [sys.executable, "-c", code, str(path)]


def report(label: str, measured: float, floor: float, floor_label: str, goal: float, unit: str = "s") -> None:
    """One line: goal, measured, calibration figure and their ratio (`unit`: of CPU)."""
    ratio = measured / floor if floor else float("inf")
    verdict = "ok" if ratio <= goal else "OVER"
    print(
        f"  {label}: {measured:6.2f} {unit} CPU; {floor_label} {floor:6.2f} {unit} CPU; "
        f"ratio {ratio:4.2f} (goal <= {goal:g}x): {verdict}"
    )
