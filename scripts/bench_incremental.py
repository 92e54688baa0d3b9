#!/usr/bin/env python3
"""Incremental-work benchmark (issue 13): the cache, rescore and resume, measured in one run.

A dataset of N cases (default 1000) and a target that sleeps 50 ms and appends one line per
invocation to a counter file. It prints:

  1. a cold `agentv eval --cache` against a warm one (fresh results file, same cache): wall times,
     their ratio (bar: >= 20x) and the warm run's target invocations (bar: 0);
  2. one evaluator's option changed, `agentv rescore`: target invocations (bar: 0) and its wall
     time against the time agentv takes merely to read and re-write the same results (bar: <= 2x);
  3. SIGINT at about half way, then `--resume`: invocations over both runs (bar: exactly N) and
     each case exactly once in the final file;
  4. `agentv rescore` of a 10,000-row field_accuracy run: wall time (bar: < 5 s), and its CPU
     (user + sys, median of --repeat, interleaved) against `agentv eval --dry-run` of the same
     dataset (calibration; goal: <= 1.2x).

Usage: python scripts/bench_incremental.py [--cases 1000] [--big 10000] [--workers 4] [--repeat 3] [--rescore-only]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import cpu_medians, report  # noqa: E402

AGENTV = [sys.executable, "-m", "agentv_py"]

# Counts an invocation when it answers (a call killed by Ctrl-C before it answered is not a call
# whose answer could have been kept); the counter lives outside the project, since the cache key
# hashes every project file the command names.
TARGET = """\
import json, sys, time
time.sleep(0.05)
with open(sys.argv[1], "a") as counter:
    counter.write(sys.argv[2] + "\\n")
n = int(sys.argv[2].split("-")[1])
print(json.dumps({"id": sys.argv[2], "total": n * 1.5, "name": f"Vendor {n}"}))
"""


def dataset(path: Path, cases: int, tolerance: float) -> None:
    lines = [
        "execution:",
        "  target: slow",
        "  evaluators:",
        "    - type: field_accuracy",
        "      fields: [{path: id}, {path: name},",
        f"               {{path: total, match: numeric_tolerance, tolerance: {tolerance}}}]",
        "evalcases:",
    ]
    for i in range(cases):
        expected = json.dumps({"id": f"case-{i}", "total": i * 1.5 + (0.4 if i % 3 == 0 else 0), "name": f"Vendor {i}"})
        lines.append(f"  - {{id: case-{i}, input: 'case-{i}', expected_output: {expected}}}")
    path.write_text("\n".join(lines) + "\n")


def targets(path: Path, counter: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "targets:\n"
        "  - name: slow\n"
        "    provider: cli\n"
        f"    command_template: {json.dumps(f'{sys.executable} target.py {counter} {{PROMPT}}')}\n"
        "  - name: echo\n"
        "    provider: mock\n"
        "    echo_expected: true\n"
    )


def agentv(args: list[str], cwd: Path) -> tuple[float, int]:
    started = time.perf_counter()
    code = subprocess.run(
        [*AGENTV, *args], cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True
    ).returncode
    return time.perf_counter() - started, code


def scores(path: Path) -> dict[str, float]:
    return {row["eval_id"]: row["score"] for row in map(json.loads, path.read_text().splitlines())}


def invocations(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--big", type=int, default=10000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="runs per command for the CPU medians of part 4")
    parser.add_argument("--rescore-only", action="store_true", help="only part 4")
    options = parser.parse_args()
    if options.rescore_only:
        with tempfile.TemporaryDirectory(prefix="agentv-bench-incr-") as tmp:
            big_rescore(Path(tmp), options)
        return
    n, workers = options.cases, str(options.workers)
    with tempfile.TemporaryDirectory(prefix="agentv-bench-incr-") as tmp:
        root = Path(tmp) / "project"
        (root / ".git").mkdir(parents=True)
        counter = Path(tmp) / "calls.txt"
        (root / "target.py").write_text(TARGET)
        targets(root / ".agentv" / "targets.yaml", counter)
        dataset(root / "d.yaml", n, tolerance=0.5)

        # 1. the cache
        cold, cold_code = agentv(["eval", "d.yaml", "--cache", "-w", workers, "--out", "cold.jsonl"], root)
        cold_calls = invocations(counter)
        warm, warm_code = agentv(["eval", "d.yaml", "--cache", "-w", workers, "--out", "warm.jsonl"], root)
        warm_calls = invocations(counter) - cold_calls
        print(
            f"1. cache: cold {cold:.2f} s ({cold_calls} invocations, exit {cold_code}), warm {warm:.2f} s "
            f"({warm_calls} invocations, exit {warm_code}): warm is {cold / warm:.1f}x faster (bar: >= 20x, 0 calls)"
        )

        # 2. rescore after one evaluator option changed
        dataset(root / "d.yaml", n, tolerance=0.1)
        before = invocations(counter)
        rescore, rescore_code = agentv(["rescore", "cold.jsonl", "--out", "rescored.jsonl"], root)
        rescore_calls = invocations(counter) - before
        copy_script = (
            "import sys\nfrom agentv_py.report.jsonl import JsonlWriter, read_rows\n"
            "w = JsonlWriter('copied.jsonl'); w.start()\n"
            "[w.write(r) for _, r in read_rows('cold.jsonl') if not isinstance(r, str)]\nw.close()\n"
        )
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", copy_script], cwd=root, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True
        )
        copy = time.perf_counter() - started
        changed = sum(
            json.loads(a)["score"] != json.loads(b)["score"]
            for a, b in zip(
                sorted((root / "cold.jsonl").read_text().splitlines(), key=lambda line: json.loads(line)["eval_id"]),
                sorted(
                    (root / "rescored.jsonl").read_text().splitlines(), key=lambda line: json.loads(line)["eval_id"]
                ),
                strict=True,
            )
        )
        print(
            f"2. rescore: {rescore:.2f} s, {rescore_calls} invocations (exit {rescore_code}), "
            f"{changed} scores changed; "
            f"reading and re-writing the rows alone {copy:.2f} s: ratio {rescore / copy:.2f} (bar: <= 2.0, 0 calls)"
        )

        # 3. SIGINT at about half, then --resume
        counter.unlink()
        proc = subprocess.Popen(
            [*AGENTV, "eval", "d.yaml", "-w", workers, "--out", "resumed.jsonl"],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while invocations(counter) < n // 2 and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        first_code = proc.wait()
        first_calls = invocations(counter)
        rows_after_first = len((root / "resumed.jsonl").read_text().splitlines())
        _, resume_code = agentv(["eval", "d.yaml", "-w", workers, "--resume", "resumed.jsonl"], root)
        ids = [json.loads(line)["eval_id"] for line in (root / "resumed.jsonl").read_text().splitlines()]
        total_calls = invocations(counter)
        print(
            f"3. resume: interrupted (exit {first_code}) after {first_calls} invocations and {rows_after_first} rows; "
            f"--resume (exit {resume_code}): {total_calls} invocations in all (bar: exactly {n}); final file "
            f"{len(ids)} rows, {len(set(ids))} distinct cases, each once: {len(ids) == len(set(ids)) == n}"
        )

        big_rescore(Path(tmp), options)


def big_rescore(tmp: Path, options: argparse.Namespace) -> None:
    """Part 4: rescore of a big field_accuracy run, its wall time, then its CPU against a dry run."""
    big = tmp / "big"
    (big / ".git").mkdir(parents=True)
    targets(big / ".agentv" / "targets.yaml", tmp / "calls.txt")
    dataset(big / "d.yaml", options.big, tolerance=0.5)
    workers = str(options.workers)
    made, made_code = agentv(["eval", "d.yaml", "--target", "echo", "-w", workers, "--out", "big.jsonl"], big)
    dataset(big / "d.yaml", options.big, tolerance=0.1)
    big_rescore, big_code = agentv(["rescore", "big.jsonl", "--out", "big-rescored.jsonl"], big)
    print(
        f"4. rescore of {options.big:,} rows: {big_rescore:.2f} s (exit {big_code}; the run itself took "
        f"{made:.2f} s, exit {made_code}) (bar: < 5 s)"
    )
    commands = {
        "rescore": [*AGENTV, "rescore", "big.jsonl", "--out", "cpu-rescored.jsonl"],
        "dry-run": [*AGENTV, "eval", "d.yaml", "--dry-run", "-w", workers, "--out", "cpu-dry.jsonl"],
    }
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cpu = cpu_medians(commands, options.repeat, cwd=big, env=env)
    print(f"   CPU, median of {options.repeat}:")
    report(f"rescore of {options.big:,} rows", cpu["rescore"], cpu["dry-run"], "eval --dry-run", 1.2)


if __name__ == "__main__":
    main()
