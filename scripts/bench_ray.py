#!/usr/bin/env python3
"""The Ray executor's overhead per case against the local executor, in one run.

The generated invoice workload of `bench_runner.py` (an `sh` target copying a file, 9-field
field_accuracy), at two sizes, through `agentv eval` with `--executor local` and `--executor ray`
(a local Ray instance started by agentv, as many CPUs as --workers): the cost per further case is
the difference between the two sizes over the difference in cases, which leaves out start-up
(Ray's ~4 s included). Runs alternate; medians of --reps.

Usage: python scripts/bench_ray.py [--small 50] [--large 300] [--workers 2] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import measured_child
from bench_runner import agentv_argv, make_workload


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--large", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentv-bench-ray-"))
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env["AGENTV_CACHE_DIR"] = str(work / "cache")
    try:
        roots = {n: make_workload(work / f"n{n}", n).parent.parent for n in (args.small, args.large)}
        walls: dict[tuple[str, int], list[float]] = {}
        for _ in range(args.reps):
            for executor in ("local", "ray"):
                for n, root in roots.items():
                    argv = agentv_argv() + ["eval", "evals/dataset.yaml", "--workers", str(args.workers)]
                    argv += ["--executor", executor, "--out", str(work / "out.jsonl")]
                    wall, _, _, code = measured_child(argv, root, env)
                    assert code in (0, 1), f"agentv eval --executor {executor} exited {code}"
                    assert sum(1 for _ in (work / "out.jsonl").open()) == n, "every case must have its row"
                    walls.setdefault((executor, n), []).append(wall)
        span = args.large - args.small
        per_case = {}
        print(f"agentv eval, {args.workers} workers, sh target; medians of {args.reps} alternating runs")
        for executor in ("local", "ray"):
            small = statistics.median(walls[executor, args.small])
            large = statistics.median(walls[executor, args.large])
            per_case[executor] = (large - small) / span * 1000
            print(
                f"  {executor:5}: {args.small} cases {small:6.2f} s, {args.large} cases {large:6.2f} s, "
                f"per further case {per_case[executor]:6.2f} ms"
            )
        overhead = per_case["ray"] - per_case["local"]
        print(f"Ray executor overhead: {overhead:.2f} ms per case ({per_case['ray'] / per_case['local']:.2f}x local)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
