#!/usr/bin/env python3
"""Issue 28's whole table in one run: every goal of docs/performance.md's "Issue 28" figures,
measured by the script that owns it, then one summary of goal, measured and ratio.

It runs, one after the other (each prints its own calibration figures: the spawn floor, the
bare YAML event loop, an orjson read, a fixed pure-Python loop):

  1. bench_startup.py   one-case eval and validate, `--help` (point 3)
  2. bench_runner.py    the whole run on the invoice workload at N=1000 against the spawn floor (point 2)
  3. bench_load.py      cold validate of 10k YAML cases against PyYAML's bare event loop; JSONL (point 4)
  4. bench_incremental.py --rescore-only   rescore against a dry run (point 5)
  5. bench_metrics.py --cpu-only           metrics against an orjson read (point 5)
  6. bench_compare.py --cpu-only           compare against metrics (point 5)
  7. bench_ray.py       Ray's overhead per case (point 6)
  8. bench_memory.py    peak memory at 10k and 100k cases (point 1; the longest part)

and prints every line that states a goal, grouped by script, with the minutes each took. On the
project's 2-core machine the whole table takes 15–17 minutes when the workloads are already
generated (`--data`, the peer harness's `data/` folder: n1000, n10000, n100000; missing ones are
generated, 100k taking a few minutes more), 8–10 of them the memory runs. Measured 2026-11-27
(second session): 15.4 and 16.8 minutes in two runs (issue 28's goal is 15 minutes: not met yet;
the first session's run took 23.3, before bench_memory ran its independent runs side by side).

Usage: python scripts/bench_all.py --bench ../shared/bench [--data DIR] [--skip NAME ...]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOAL_LINE = re.compile(r"goal|OVER\b|: ok\b|\bok$|calibration|overhead per case|MISSED", re.IGNORECASE)


def parts(bench: Path, data: Path) -> list[tuple[str, list[str]]]:
    return [
        ("startup", ["bench_startup.py", "--reps", "7"]),
        ("runner", ["bench_runner.py", "--workload", str(data / "n1000"), "--reps", "3"]),
        ("load", ["bench_load.py", "--bench", str(bench), "--data", str(data), "--repeat", "3"]),
        ("rescore", ["bench_incremental.py", "--rescore-only", "--repeat", "3"]),
        ("metrics", ["bench_metrics.py", "--cpu-only", "--repeat", "3"]),
        ("compare", ["bench_compare.py", "--cpu-only", "--repeat", "3"]),
        ("ray", ["bench_ray.py", "--reps", "2"]),
        ("memory", ["bench_memory.py", "--bench", str(bench), "--data", str(data), "--sizes", "10000", "100000"]),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", type=Path, required=True, help="the peer harness folder (its gen_dataset.py)")
    parser.add_argument("--data", type=Path, help="its generated workloads [default: BENCH/data]")
    parser.add_argument("--skip", nargs="*", default=[], help="parts to leave out (startup, runner, load, ...)")
    args = parser.parse_args()
    bench = args.bench.resolve()
    data = (args.data or bench / "data").resolve()
    chosen = [(name, argv) for name, argv in parts(bench, data) if name not in args.skip]
    unknown = set(args.skip) - {name for name, _ in parts(bench, data)}
    if unknown:
        raise SystemExit(f"--skip: no part named {', '.join(sorted(unknown))}")
    summary: list[tuple[str, float, int, list[str]]] = []
    started_all = time.perf_counter()
    for name, argv in chosen:
        print(f"== {name}: python scripts/{' '.join(argv)}", flush=True)
        started = time.perf_counter()
        command = [sys.executable, str(HERE / argv[0]), *argv[1:]]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            print("   " + line, end="", flush=True)
            if GOAL_LINE.search(line):
                lines.append(line.rstrip())
        code = proc.wait()
        summary.append((name, time.perf_counter() - started, code, lines))
    print(f"\n== issue 28's table ({(time.perf_counter() - started_all) / 60:.1f} min in all)")
    failed = 0
    for name, seconds, code, lines in summary:
        status = "" if code == 0 else f"  (exited {code})"
        failed += code != 0
        print(f"{name} ({seconds / 60:.1f} min){status}")
        for line in lines:
            print("   " + line.strip())
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
