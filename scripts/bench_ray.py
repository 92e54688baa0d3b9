#!/usr/bin/env python3
"""The Ray executor's overhead per case against the local executor, in one run.

The generated invoice workload of `bench_runner.py` (an `sh` target copying a file, 9-field
field_accuracy), at two sizes, through `agentv eval` with `--executor local` and `--executor ray`
(a local Ray instance started by agentv, as many CPUs as --workers): the cost per further case is
the difference between the two sizes over the difference in cases, which leaves out start-up
(Ray's seconds included). Wall and CPU (user + system of agentv and everything it started, Ray's
processes included, sampled from /proc), with bytecode cached as an installed package has it.
Runs alternate; medians of --reps. Wall is what a user waits, but on a shared machine only the
CPU figures compare.

Calibration, measured in the same runs: the spawn floor (`xargs -P WORKERS` launching the target
once per case, no agentv) and Ray's own floor (in a process of its own: batches of 32 empty
cases in streaming tasks, the driver waiting for and reading every object, one object per case
and one per batch): what any executor built on Ray pays per object sent, on this machine; and
what a local Ray instance costs by the second while it has nothing to do (its raylet, GCS,
dashboard and runtime-env agents, idle workers), which a run pays for every second it lasts.

Usage: python scripts/bench_ray.py [--small 50] [--large 300] [--workers 2] [--reps 3] [--no-ray-floor]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import installed_env
from bench_runner import agentv_argv, floor_xargs, make_workload

FLOOR_CASES = 2000
SAMPLE_SECONDS = 0.1
IDLE_SECONDS = 5.0
FLOOR_BATCH = 32


def _tree(root: int) -> dict[int, tuple[int, int, int]]:
    """{pid: (parent, own CPU ticks, CPU ticks of the children it reaped)} of the live descendants
    of `root`, from /proc."""
    children: dict[int, list[tuple[int, list[str]]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            children.setdefault(int(fields[1]), []).append((int(entry), fields))
    found, stack = {}, [root]
    while stack:
        parent = stack.pop()
        for pid, fields in children.get(parent, []):
            found[pid] = (parent, int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
            stack.append(pid)
    return found


def tree_cpu(root: int) -> float:
    """CPU seconds of the live descendants of `root` (and of the children they reaped)."""
    return sum(own + reaped for _, own, reaped in _tree(root).values()) / os.sysconf("SC_CLK_TCK")


def sampled_child(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of a command and every process it started. CPU is
    sampled from /proc every SAMPLE_SECONDS (each process's last figure), not taken from
    `RUSAGE_CHILDREN`: Ray's workers are not reaped by the processes that started them, so their
    CPU (and their targets') never reaches it. What a process reaped counts too (its targets),
    less the children already counted from their own samples; a process's last SAMPLE_SECONDS
    are not seen (alike at both sizes: the difference per further case leaves them out)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last: dict[int, tuple[int, int, int, int]] = {}  # pid -> (sample number, parent, own, reaped)
    sample = 0
    while child.poll() is None:
        sample += 1
        last.update((pid, (sample, *seen)) for pid, seen in _tree(os.getpid()).items())
        time.sleep(SAMPLE_SECONDS)
    wall = time.perf_counter() - started
    counted = dict.fromkeys(last, 0)  # pid -> what its reaped figure holds of children sampled before
    for at, parent, own, reaped in last.values():
        if parent in counted and at < last[parent][0]:  # gone before its parent's last sample: reaped
            counted[parent] += own + reaped
    ticks = sum(own + max(0, reaped - counted[pid]) for pid, (_, _, own, reaped) in last.items())
    return wall, ticks / os.sysconf("SC_CLK_TCK"), child.returncode


def ray_floor(cases: int) -> None:
    """In a process of its own (`--ray-floor-child`): a local Ray instance with 2 CPUs, batches of
    FLOOR_BATCH empty cases as streaming tasks (4 in flight), a row-sized payload per case; per
    case: wall, the driver's CPU, Ray's processes' CPU."""
    import logging

    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    payload = b"x" * 4096  # about a row

    def batch(n: int, per_object: int) -> Iterator[list[bytes]]:
        held: list[bytes] = []
        for _ in range(n):
            held.append(payload)
            if len(held) == per_object:
                yield held
                held = []
        if held:
            yield held

    task = ray.remote(batch).options(num_returns="streaming", max_retries=0)

    def drive(per_object: int) -> None:
        sizes = iter([min(FLOOR_BATCH, cases - start) for start in range(0, cases, FLOOR_BATCH)])
        pending: set[Any] = set()
        got, more = 0, True
        while more or pending:
            while more and len(pending) < 4:
                size = next(sizes, None)
                if size is None:
                    more = False
                    break
                pending.add(task.remote(size, per_object))
            ready: list[Any] = ray.wait(list(pending), num_returns=1, timeout=0.1)[0]
            for stream in ready:
                try:
                    got += len(ray.get(next(stream)))
                except StopIteration:
                    pending.discard(stream)
        assert got == cases

    drive(1)  # workers started, code shipped
    cpu, driver, wall = tree_cpu(os.getpid()), time.process_time(), time.perf_counter()
    time.sleep(IDLE_SECONDS)
    wall, driver, cpu = time.perf_counter() - wall, time.process_time() - driver, tree_cpu(os.getpid()) - cpu
    print(
        f"  Ray idle (2 workers started, nothing to do): CPU driver {driver / wall * 1000:5.1f} ms + Ray's processes "
        f"{cpu / wall * 1000:5.1f} ms per second"
    )
    for per_object in (1, FLOOR_BATCH):
        drive(per_object)
        cpu, driver, wall = tree_cpu(os.getpid()), time.process_time(), time.perf_counter()
        drive(per_object)
        wall, driver, cpu = time.perf_counter() - wall, time.process_time() - driver, tree_cpu(os.getpid()) - cpu
        print(
            f"  Ray's floor, {per_object:2} case(s) per object: wall {wall / cases * 1000:5.2f} ms, CPU driver "
            f"{driver / cases * 1000:5.2f} ms + Ray's processes {cpu / cases * 1000:5.2f} ms per case"
        )
    ray.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--large", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-ray-floor", action="store_true", help="leave out Ray's own floor")
    parser.add_argument("--ray-floor-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ray_floor_child:
        ray_floor(FLOOR_CASES)
        return 0
    work = Path(tempfile.mkdtemp(prefix="agentv-bench-ray-"))
    env = installed_env(work, AGENTV_CACHE_DIR=str(work / "cache"))
    env.pop("RAY_ADDRESS", None)
    try:
        roots = {n: make_workload(work / f"n{n}", n).parent.parent for n in (args.small, args.large)}
        walls: dict[tuple[str, int], list[float]] = {}
        cpus: dict[tuple[str, int], list[float]] = {}
        spawn: list[tuple[float, float]] = []
        for rep in range(args.reps + 1):  # the first round compiles the bytecode: not counted
            for executor in ("local", "ray"):
                for n, root in roots.items():
                    argv = agentv_argv() + ["eval", "evals/dataset.yaml", "--workers", str(args.workers)]
                    argv += ["--executor", executor, "--out", str(work / "out.jsonl")]
                    wall, cpu, code = sampled_child(argv, root, env)
                    assert code in (0, 1), f"agentv eval --executor {executor} exited {code}"
                    assert sum(1 for _ in (work / "out.jsonl").open()) == n, "every case must have its row"
                    if rep:
                        walls.setdefault((executor, n), []).append(wall)
                        cpus.setdefault((executor, n), []).append(cpu)
            if rep:
                spawn.append(floor_xargs(roots[args.large], args.workers))
        span = args.large - args.small
        per_case: dict[str, tuple[float, float]] = {}
        print(
            f"the invoice workload through agentv eval, {args.workers} workers, sh target; medians of {args.reps} runs"
        )
        for executor in ("local", "ray"):
            small, large = (statistics.median(walls[executor, n]) for n in (args.small, args.large))
            cpu_small, cpu_large = (statistics.median(cpus[executor, n]) for n in (args.small, args.large))
            per_case[executor] = ((large - small) / span * 1000, (cpu_large - cpu_small) / span * 1000)
            print(
                f"  {executor:5}: {args.small} cases {small:6.2f} s, {args.large} cases {large:6.2f} s (CPU "
                f"{cpu_small:6.2f} s, {cpu_large:6.2f} s); per further case wall {per_case[executor][0]:6.2f} ms, "
                f"CPU {per_case[executor][1]:6.2f} ms"
            )
        (ray_wall, ray_cpu), (local_wall, local_cpu) = per_case["ray"], per_case["local"]
        print(
            f"Ray executor overhead per case: wall {ray_wall - local_wall:.2f} ms "
            f"({ray_wall / local_wall:.2f}x local), CPU {ray_cpu - local_cpu:.2f} ms ({ray_cpu / local_cpu:.2f}x local)"
        )
        print("Calibration:")
        floor_wall = statistics.median(wall for wall, _ in spawn) / args.large * 1000
        floor_cpu = statistics.median(cpu for _, cpu in spawn) / args.large * 1000
        print(f"  spawn floor, xargs -P {args.workers}: wall {floor_wall:5.2f} ms, CPU {floor_cpu:5.2f} ms per case")
        if not args.no_ray_floor:
            sys.stdout.flush()
            floor = [sys.executable, __file__, "--ray-floor-child"]
            subprocess.run(floor, env=env, check=True, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
