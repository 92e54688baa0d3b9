#!/usr/bin/env python3
"""Is TEDS the bottleneck of a run? (issue 31) `agentv eval` on N cases whose answer is a 50-cell
table (rows of cells; typos, a dropped cell, a merged cell, as `bench_doc_metrics.py` makes them)
from a target that takes S seconds a case (an extractor's time: a sleep), 4 workers, scored three
ways in one run of this script: `match: exact` (no table metric), `match: table` (TEDS) and
`match: table, metric: grits_con`. Prints each run's wall time and the ratio to the exact run's,
and `agentv rescore` of the TEDS run (no target call: scoring alone) with its time per case.

Usage: python scripts/bench_table_run.py [--cases 200] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import print_calibration  # noqa: E402
from bench_doc_metrics import table  # noqa: E402

TARGET = """\
import sys, time
time.sleep({seconds})
sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
"""


def _dataset(folder: Path, cases: int, match: str) -> Path:
    rng = random.Random(43)
    lines = ["execution:", "  target: extractor", "  evaluators:", f"    - {{type: field_accuracy, fields: [{match}]}}"]
    lines.append("evalcases:")
    for index in range(cases):
        truth, answer = table(rng)
        (folder / f"a{index}.json").write_text(json.dumps({"table": answer}), encoding="utf-8")
        lines.append(
            f"  - id: t{index:05d}\n"
            f"    input_messages: [{{role: user, content: [{{type: file, value: a{index}.json}}]}}]\n"
            f"    expected_messages: [{{role: assistant, content: {json.dumps({'table': truth})}}}]"
        )
    path = folder / f"dataset-{abs(hash(match)) % 10_000}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=False, capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.5)
    args = parser.parse_args()
    print_calibration()
    agentv = str(Path(sys.executable).with_name("agentv"))
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "extractor.py").write_text(TARGET.format(seconds=args.seconds), encoding="utf-8")
        (folder / ".agentv").mkdir()
        (folder / ".agentv" / "targets.yaml").write_text(
            "targets:\n  - name: extractor\n    provider: cli\n"
            f"    command_template: {sys.executable} extractor.py {{FILES}}\n",
            encoding="utf-8",
        )
        runs = {}
        for label, match in (
            ("exact", "{path: table, match: exact}"),
            ("teds", "{path: table, match: table}"),
            ("grits_con", "{path: table, match: table, metric: grits_con}"),
        ):
            dataset = _dataset(folder, args.cases, match)
            out = folder / f"{label}.jsonl"
            command = [agentv, "eval", str(dataset), "--out", str(out), "--workers", "4", "--no-cache"]
            runs[label] = _timed(command, folder)
            rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            scored = [r["evaluator_results"][0]["details"]["fields"][0]["score"] for r in rows if r["status"] == "ok"]
            mean = sum(scored) / len(scored) if scored else float("nan")
            print(
                f"{label}: {runs[label]:.1f} s wall for {args.cases} cases ({args.seconds:g} s a case, 4 workers); "
                f"{len(scored)} scored, mean field score {mean:.3f}"
            )
        for label in ("teds", "grits_con"):
            print(f"{label} / exact: {runs[label] / runs['exact']:.2f}x")
        rescored = _timed([agentv, "rescore", str(folder / "teds.jsonl"), "--out", str(folder / "r.jsonl")], folder)
        print(
            f"rescore of the TEDS run (scoring alone): {rescored:.1f} s, {1000 * rescored / args.cases:.0f} ms a case"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
