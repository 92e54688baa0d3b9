#!/usr/bin/env python3
"""Code-judge benchmark: what a Python code judge costs per case, and where that cost goes.

From one run it prints, for N cases at 4 workers:
  1. the floor: starting `python -c pass` N times, 4 at a time;
  2. `agentv eval` with a mock target (no target process) and one code judge per case, for a
     trivial stdlib-only judge and for the same judge written with the SDK (agentv_py.judge);
     per-case cost and its ratio to the floor;
  3. a persistent-worker prototype (not a product feature): 4 long-lived Python processes that
     import the judge once and answer JSON lines, driven with the same payloads, to measure how
     much of the cost is interpreter start-up.

Usage: python scripts/bench_judges.py [--cases 300] [--workers 4]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import print_calibration, run_parallel, timed_child  # noqa: E402

PLAIN_JUDGE = """\
import json, sys
payload = json.load(sys.stdin)
print(json.dumps({"score": 1.0 if payload["candidate"] == payload["expected"] else 0.0}))
"""

SDK_JUDGE = """\
from agentv_py.judge import JudgeInput, JudgeResult, judge

@judge
def same(inp: JudgeInput) -> JudgeResult:
    return JudgeResult(score=1.0 if inp.candidate == inp.expected else 0.0)
"""

# The prototype worker: loads a judge file once (capturing the @judge function instead of
# running it), then answers one JSON payload per line.
WORKER = """\
import importlib.util, io, json, sys
import agentv_py.judge as sdk
captured = []
sdk.judge = lambda fn: captured.append(fn) or fn
spec = importlib.util.spec_from_file_location("judge_module", sys.argv[1])
spec.loader.exec_module(importlib.util.module_from_spec(spec))
fn = captured[0]
for line in sys.stdin:
    out = io.StringIO()
    sdk.run(fn, stdin=io.StringIO(line), stdout=out)
    sys.stdout.write(out.getvalue())
    sys.stdout.flush()
"""


def write_dataset(root: Path, n: int, judge: str) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / ".agentv").mkdir(exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text("targets:\n  - {name: echo, provider: mock, echo_expected: true}\n")
    lines = [
        "execution:",
        "  target: echo",
        f"  evaluators: [{{name: j, type: code_judge, script: [{json.dumps(sys.executable)}, {judge}]}}]",
        "evalcases:",
    ]
    for i in range(n):
        lines.append(f"  - {{id: c{i}, expected_output: {{invoice_number: INV-{i}, total: {i}.5}}}}")
    path = root / f"dataset-{Path(judge).stem}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def persistent_workers(judge: Path, payloads: list[bytes], workers: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(judge)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        for _ in range(workers)
    ]
    # Warm: each worker has imported the judge before timing starts (that cost is paid once per run).
    for proc in procs:
        proc.stdin.write(payloads[0] + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
    pending = iter(payloads)
    lock = threading.Lock()

    def drive(proc: subprocess.Popen) -> None:
        while True:
            with lock:
                payload = next(pending, None)
            if payload is None:
                return
            proc.stdin.write(payload + b"\n")
            proc.stdin.flush()
            json.loads(proc.stdout.readline())

    started = time.perf_counter()
    threads = [threading.Thread(target=drive, args=(p,)) for p in procs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    for proc in procs:
        proc.stdin.close()
        proc.wait()
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print_calibration()
    n, w = args.cases, args.workers
    work = Path(tempfile.mkdtemp(prefix="agentv-judge-bench-"))
    try:
        (work / "plain.py").write_text(PLAIN_JUDGE)
        (work / "sdk.py").write_text(SDK_JUDGE)
        datasets = {name: write_dataset(work, n, f"{name}.py") for name in ("plain", "sdk")}
        agentv = [sys.executable, "-m", "agentv_py", "eval"]
        env_note = f"python {sys.version.split()[0]}"

        floor, evals = [], {"plain": [], "sdk": []}
        for _ in range(args.reps):
            floor.append(run_parallel([[sys.executable, "-c", "pass"]] * n, w))
            for name, dataset in datasets.items():
                evals[name].append(
                    timed_child([*agentv, str(dataset), "--workers", str(w), "--out", str(work / "o.jsonl")], work)[0]
                )
        rows = [json.loads(line) for line in (work / "o.jsonl").read_text().splitlines()]
        assert len(rows) == n and all(r["score"] == 1.0 for r in rows), "every judge must have scored 1.0"

        payload = json.dumps({"candidate_answer": "{}", "candidate": {"a": 1}, "expected": {"a": 1}}).encode()
        spawned_sdk = statistics.median(
            run_parallel([[sys.executable, str(work / "sdk.py")]] * n, w, payload) for _ in range(args.reps)
        )
        persistent = statistics.median(persistent_workers(work / "sdk.py", [payload] * n, w) for _ in range(args.reps))

        ms = lambda seconds: seconds / n * 1000  # noqa: E731
        base = statistics.median(floor)
        print(f"code judges, N={n} cases, {w} workers, mock target, {env_note}; medians of {args.reps}")
        print(f"  floor: `python -c pass` x N            : {ms(base):6.2f} ms/case")
        for name in ("plain", "sdk"):
            wall = statistics.median(evals[name])
            print(
                f"  agentv eval, {name:<5} judge             : {ms(wall):6.2f} ms/case  "
                f"ratio {wall / base:4.2f} x floor"
            )
        print("persistent-worker prototype (SDK judge, same payload, no agentv around it):")
        print(f"  spawn one judge process per case       : {ms(spawned_sdk):6.2f} ms/case")
        print(
            f"  4 persistent workers, judge loaded once: {ms(persistent):6.3f} ms/case"
            f"  ({(1 - persistent / spawned_sdk):.1%} less)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
