#!/usr/bin/env python3
"""Peak memory of agentv on the peer harness's invoice workload at 1k, 10k and 100k cases.

For each size it runs, in a fresh parse cache (cwd `data/n<N>`, `--workers 4`): `eval` (cold: the
file is parsed and the parse cache written), then, side by side, `validate` (warm: the parse cache
is read), `rescore` of the eval's results, and `eval --resume` of a copy of those results cut to
90% of its rows (an interrupted run: the done set at its largest, a tenth left to run). Each
command's peak RSS ("Maximum resident set size" of `/usr/bin/time -v`, the largest single
process) is printed, then the goal of issue 28: at 100k at most 150 MiB and at most 1.3x the 10k
figure.

Peak memory is a property of each agentv process alone, so the runs that do not depend on each
other share the machine: the sizes run side by side, and so do the three commands that follow a
size's eval. The target is the harness's dataset with `cp FIXTURE OUTPUT` (one program launch a
case, where the harness's `copy_sh` target starts `sh`, which starts `cp`): what agentv holds does
not depend on the program its target runs, and the 100k runs take half the time.

Usage: python scripts/bench_memory.py --bench ../shared/bench [--data /tmp/bench-data] [--sizes 1000 10000 100000]
Missing sizes are generated with the harness's `gen_dataset.py N --out DATA` (100k: about 250 MB).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import installed_env

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


KEPT = 0.9  # the share of rows an interrupted run kept, for --resume
TARGETS = (
    "targets:\n  - name: copy_cp\n    provider: cli\n"
    '    command_template: "cp {FILES} {OUTPUT_FILE}"\n    timeout_seconds: 60\n'
)


def cut(results: Path, to: Path, kept: float = KEPT) -> None:
    """A copy of a results file (and its manifest) keeping the first `kept` of its rows: an
    interrupted run for `--resume`."""
    lines = results.read_bytes().splitlines(keepends=True)
    to.write_bytes(b"".join(lines[: int(len(lines) * kept)]))
    for sidecar in results.parent.glob(results.stem + ".*"):
        if sidecar != results:
            shutil.copy(sidecar, to.parent / sidecar.name.replace(results.stem, to.stem, 1))


def measure(data: Path, agentv: str, workers: str, scratch: Path, pyc: Path) -> dict[str, float]:
    env = {
        **installed_env(pyc),
        "HOME": str(scratch / "home"),
        "AGENTV_HOME": str(scratch / "agentv-home"),
        "AGENTV_NO_UPDATE_CHECK": "1",
        "AGENTV_CACHE_DIR": str(scratch / "cache"),
    }
    env.pop("AGENTV_NO_CACHE", None)
    out = scratch / "out"
    out.mkdir(parents=True)
    targets = scratch / "targets.yaml"
    targets.write_text(TARGETS)
    results, resumed = out / "run.jsonl", out / "resumed.jsonl"
    dataset = "evals/dataset.yaml"
    run = [agentv, "eval", dataset, "--workers", workers, "--targets", str(targets), "--target", "copy_cp"]
    found = {"eval": peak_mib([*run, "--out", str(results)], data, env)}
    cut(results, resumed)
    after = {
        "validate": [agentv, "validate", dataset],
        "rescore": [agentv, "rescore", str(results), "--out", str(out / "rescored.jsonl")],
        "resume": [*run, "--resume", str(resumed)],
    }
    with ThreadPoolExecutor(len(after)) as pool:
        peaks = {name: pool.submit(peak_mib, argv, data, env) for name, argv in after.items()}
        found.update({name: peak.result() for name, peak in peaks.items()})
    return found


def generated(data_root: Path, size: int, bench: Path) -> Path:
    data = data_root / f"n{size}"
    if not (data / "expected_scores.json").exists():
        gen = [sys.executable, str(bench / "gen_dataset.py"), str(size), "--out", str(data_root)]
        subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
    return data


def compiled(data: Path, agentv: str, pyc: Path) -> None:
    """agentv's bytecode written once, as an installed package has it (a one-case eval, in a parse
    cache of its own), before the measured runs start side by side."""
    first = next(iter(json.loads((data / "expected_scores.json").read_text())))
    with tempfile.TemporaryDirectory(prefix="agentv-memory-warm-") as warm:
        env = {**installed_env(pyc), "AGENTV_CACHE_DIR": str(Path(warm) / "cache"), "AGENTV_NO_UPDATE_CHECK": "1"}
        argv = [agentv, "eval", "evals/dataset.yaml", "--eval-id", first, "--out", str(Path(warm) / "out.jsonl")]
        subprocess.run(argv, cwd=data, env=env, capture_output=True, check=False)


def measure_size(data: Path, size: int, agentv: str, workers: str, pyc: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agentv-memory-") as scratch:
        found = measure(data, agentv, workers, Path(scratch), pyc)
    print(f"{size:>7} cases: " + "  ".join(f"{name} {found[name]:6.1f} MiB" for name in COMMANDS), flush=True)
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
    bench = args.bench.resolve()
    datas = {size: generated(data_root, size, bench) for size in args.sizes}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agentv-memory-pyc-") as pyc:
        compiled(datas[min(args.sizes)], agentv, Path(pyc))
        with ThreadPoolExecutor(len(args.sizes)) as pool:  # the sizes side by side
            sizes = {
                size: pool.submit(measure_size, datas[size], size, agentv, args.workers, Path(pyc))
                for size in args.sizes
            }
            table = {size: found.result() for size, found in sizes.items()}
    print(f"all sizes in {(time.perf_counter() - started) / 60:.1f} min")
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
