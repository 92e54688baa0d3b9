#!/usr/bin/env python3
"""Peak memory of agentv on the peer harness's invoice workload at 1k, 10k and 100k cases.

For each size it runs, in a fresh parse cache, one after the other (cwd `data/n<N>`, target
copy_sh, `--workers 4`): `eval` (cold: the file is parsed and the parse cache written),
`validate` (warm: the parse cache is read), `rescore` of the eval's results, and `eval --resume`
of a copy of those results cut to half of its rows. Each command's peak RSS ("Maximum resident
set size" of `/usr/bin/time -v`, the largest single process) is printed, then the goal of
issue 28: at 100k at most 150 MiB and at most 1.3x the 10k figure.

Usage: python scripts/bench_memory.py --bench ../shared/bench [--data /tmp/bench-data] [--sizes 1000 10000 100000]
Missing sizes are generated with the harness's `gen_dataset.py N --out DATA` (100k: about 250 MB).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_MIB = 150.0
GOAL_RATIO = 1.3
COMMANDS = ("eval", "validate", "rescore", "resume")


def peak_mib(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """The "Maximum resident set size" of one command, in MiB (also printed, with the wall time, to
    stderr as it ends); a failed command stops the bench."""
    started = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v", *argv], cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode not in (0, 1):  # 1: a case did not pass (the workload's perturbations)
        raise SystemExit(f"{' '.join(argv)} exited {out.returncode}:\n{out.stderr[-2000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    assert found is not None, out.stderr[-2000:]
    peak = int(found.group(1)) / 1024
    print(f"  {cwd.name} {' '.join(argv[1:3])}: {peak:.1f} MiB, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return peak


def halve(results: Path, to: Path) -> None:
    """A copy of a results file (and its manifest) keeping the first half of its rows: an
    interrupted run for `--resume`."""
    lines = results.read_bytes().splitlines(keepends=True)
    to.write_bytes(b"".join(lines[: len(lines) // 2]))
    for sidecar in results.parent.glob(results.stem + ".*"):
        if sidecar != results:
            shutil.copy(sidecar, to.parent / sidecar.name.replace(results.stem, to.stem, 1))


def measure(data: Path, agentv: str, workers: str, scratch: Path) -> dict[str, float]:
    env = {
        **os.environ,
        "HOME": str(scratch / "home"),
        "AGENTV_HOME": str(scratch / "agentv-home"),
        "AGENTV_NO_UPDATE_CHECK": "1",
        "AGENTV_CACHE_DIR": str(scratch / "cache"),
    }
    env.pop("AGENTV_NO_CACHE", None)
    out = scratch / "out"
    out.mkdir(parents=True)
    results, resumed = out / "run.jsonl", out / "resumed.jsonl"
    dataset = "evals/dataset.yaml"
    found = {"eval": peak_mib([agentv, "eval", dataset, "--workers", workers, "--out", str(results)], data, env)}
    found["validate"] = peak_mib([agentv, "validate", dataset], data, env)
    found["rescore"] = peak_mib([agentv, "rescore", str(results), "--out", str(out / "rescored.jsonl")], data, env)
    halve(results, resumed)
    found["resume"] = peak_mib([agentv, "eval", dataset, "--workers", workers, "--resume", str(resumed)], data, env)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", type=Path, required=True, help="the peer harness folder (its gen_dataset.py)")
    parser.add_argument("--data", type=Path, help="where the sizes are generated [default: BENCH/data]")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--workers", default="4")
    args = parser.parse_args()
    data_root = (args.data or args.bench / "data").resolve()
    agentv = str(Path(sys.executable).with_name("agentv"))
    table: dict[int, dict[str, float]] = {}
    for size in args.sizes:
        data = data_root / f"n{size}"
        if not (data / "expected_scores.json").exists():
            gen = [sys.executable, str(args.bench.resolve() / "gen_dataset.py"), str(size), "--out", str(data_root)]
            subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
        with tempfile.TemporaryDirectory(prefix="agentv-memory-") as scratch:
            table[size] = measure(data, agentv, args.workers, Path(scratch))
        print(f"{size:>7} cases: " + "  ".join(f"{name} {table[size][name]:6.1f} MiB" for name in COMMANDS), flush=True)
    if 10000 in table and 100000 in table:
        print(f"goal at 100k: <= {GOAL_MIB:.0f} MiB and <= {GOAL_RATIO}x the 10k peak")
        for name in COMMANDS:
            big, ten = table[100000][name], table[10000][name]
            ok = big <= GOAL_MIB and big <= GOAL_RATIO * ten
            print(
                f"  {name:<9} 10k {ten:6.1f}  100k {big:6.1f} MiB  ratio {big / ten:4.2f}  {'ok' if ok else 'MISSED'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
