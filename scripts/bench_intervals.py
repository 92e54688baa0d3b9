#!/usr/bin/env python3
"""Interval benchmark (issue 30): `agentv metrics` with its confidence intervals against the same
command without them (`--no-intervals`, the metrics of before), over a results file of N rows
(default 100,000) of two shapes: judges' `details.metrics` (scripts/bench_metrics.py) and
`field_accuracy` rows with 9 typed fields (scripts/bench_compare.py). Prints wall time, CPU and
peak RSS of each, the ratios (goal: <= 2x), and the resamples the bootstrap took.

Usage: python scripts/bench_intervals.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import installed_env, measured_child  # noqa: E402
from bench_compare import write_pair  # noqa: E402
from bench_metrics import write_results  # noqa: E402

AGENTV = [sys.executable, "-m", "agentv_py"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = installed_env(work)
        judges = work / "judges.jsonl"
        write_results(judges, args.rows)
        typed, typed_new = work / "typed.jsonl", work / "typed_new.jsonl"
        write_pair(typed, typed_new, args.rows)
        for label, path in (("judges' details.metrics", judges), ("field_accuracy, 9 fields", typed)):
            plain = measured_child([*AGENTV, "metrics", str(path), "--no-intervals"], REPO, env)
            with_ci = measured_child([*AGENTV, "metrics", str(path)], REPO, env)
            out = subprocess.run(
                [*AGENTV, "metrics", str(path), "-f", "json"], cwd=REPO, env=env, capture_output=True, check=True
            )
            run = json.loads(out.stdout)["intervals"]
            print(f"{args.rows:,} rows, {label}: {run['documents']:,} documents, {run['resamples']:,} resamples")
            print(f"  without intervals: {plain[0]:.2f} s wall, {plain[1]:.2f} s CPU, {plain[2]:.0f} MiB peak RSS")
            wall, cpu, rss = with_ci[0], with_ci[1], with_ci[2]
            print(f"  with intervals:    {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MiB peak RSS")
            print(f"  ratio: {with_ci[1] / plain[1]:.2f}x CPU, {with_ci[2] / plain[2]:.2f}x memory (goal <= 2x)")
        # compare's per-field tests (McNemar, adjusted p, the F1 deltas' paired bootstrap) on the pair
        plain = measured_child([*AGENTV, "metrics", str(typed), "--no-intervals"], REPO, env)
        compared = measured_child([*AGENTV, "compare", str(typed), str(typed_new), "-f", "json"], REPO, env)
        print(
            f"{args.rows:,} paired rows, agentv compare with per-field tests: {compared[0]:.2f} s wall, "
            f"{compared[1]:.2f} s CPU, {compared[2]:.0f} MiB peak RSS"
        )
        print(
            f"  against metrics --no-intervals of one file: {compared[1] / plain[1]:.2f}x CPU, "
            f"{compared[2] / plain[2]:.2f}x memory"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
