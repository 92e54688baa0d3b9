#!/usr/bin/env python3
"""Runner benchmark: our per-case cost against the cost of merely spawning the same target.

Everything is measured in one run on this machine, so the ratios are comparable even when the
machine is noisy. It prints:

  1. `agentv eval` on N cases (default 1000) with a trivial `sh` target that copies a file, at
     4 workers: wall and CPU time (agentv and every process it started), cold (YAML parse cache
     empty) and warm, and of one case of the same dataset (`--eval-id`: start-up and loading);
  2. the spawn floor: launching that same target N times (and once), 4 at a time, with
     `xargs -P 4`; and, for reference, the same from a bare CPython parent with 4 threads
     (`subprocess.run`, output captured, nothing else): what any Python runner pays per case;
  3. their ratios, CPU and wall, of the whole run and of the cost per case (the N-case run less
     the one-case run, over N - 1; issue 16's bar: <= 1.5x);
  4. `agentv --help` wall time (bar: < 0.3 s);
  5. field_accuracy fields scored per second in-process (bar: >= 100,000);
  6. peak RSS of `agentv eval` at several N (bar: < 80 MB and flat as N grows).

Usage: python scripts/bench_runner.py [--cases 1000] [--reps 3] [--sizes 250,1000,4000]
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
import time
from pathlib import Path

WHOLE_RUN_GOAL = 1.5  # issue 28, point 2: whole-run CPU <= 1.5x the spawn floor's, same run
PER_CASE_GOAL = 1.3  # ... and per further case <= 1.3x

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import calibration_cpu, installed_env, measured_child, report, timed_child  # noqa: E402

FIELDS = [
    {"path": "invoice_number", "match": "exact", "weight": 2},
    {"path": "invoice_date", "match": "date", "formats": ["DD-MMM-YYYY", "YYYY-MM-DD", "MM/DD/YYYY"]},
    {"path": "currency", "match": "exact"},
    {"path": "supplier.name", "match": "fuzzy", "threshold": 0.85},
    {"path": "importer.name", "match": "exact"},
    {"path": "net_total", "match": "numeric_tolerance", "tolerance": 1.0, "weight": 3},
    {"path": "tax_total", "match": "numeric_tolerance", "tolerance": 1.0, "required": False},
    {"path": "gross_total", "match": "numeric_tolerance", "tolerance": 1.0, "weight": 3},
    {"path": "line_items[0].description", "match": "exact", "required": False},
]
CHARGES = [
    "OCEAN FREIGHT",
    "Bunker Adjustment Factor",
    "Terminal Handling Charge",
    "Documentation Fee",
    "Port Security Charge",
    "Energy Transition Surcharge",
    "Container maintenance Fee at destination",
]


def invoice(i: int) -> dict:
    items = [
        {
            "description": CHARGES[(i + k) % len(CHARGES)],
            "quantity": 1 + (i + k) % 4,
            "unit_price": 100 + 37 * k,
            "line_total": (1 + (i + k) % 4) * (100 + 37 * k),
            "hs_code": f"8{i % 7}{k}130",
        }
        for k in range(5 + i % 5)
    ]
    net = sum(item["line_total"] for item in items)
    return {
        "invoice_number": f"INV-2025-{i:06d}",
        "invoice_date": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
        "currency": ["USD", "EUR", "GBP"][i % 3],
        "incoterm": "FOB",
        "supplier": {"name": "Acme Shipping", "address": "123 Harbor Boulevard\nSuite 400\nLos Angeles"},
        "importer": {"name": "Global Trade Co", "address": "456 Commerce Street\nNew York"},
        "net_total": net,
        "tax_total": round(net * 0.15, 2),
        "gross_total": round(net * 1.15, 2),
        "line_items": items,
    }


def perturb(i: int, truth: dict) -> dict:
    """What the "extractor" returns: mostly right, with the usual kinds of mistakes."""
    answer = json.loads(json.dumps(truth))
    kind = i % 10
    if kind == 1:
        answer["supplier"]["name"] = "Acme - Shipping"
    elif kind == 2:
        answer["net_total"] += 0.5
    elif kind == 3:
        del answer["invoice_number"]
    elif kind == 5:
        answer["invoice_date"] = "15-JAN-2025"
    elif kind == 7:
        answer["gross_total"] += 2.0
    return answer


def make_workload(root: Path, n: int) -> Path:
    """fixtures/, copy.sh, .agentv/targets.yaml and evals/dataset.yaml for n cases."""
    (root / "fixtures").mkdir(parents=True)
    (root / "evals").mkdir()
    (root / ".agentv").mkdir()
    (root / ".git").mkdir()  # the workload is its own repository root
    (root / "copy.sh").write_text('#!/bin/sh\nexec cp "$1" "$2"\n')
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: copy_sh\n    provider: cli\n    command_template: sh ../copy.sh {FILES} {OUTPUT_FILE}\n"
    )
    lines = [
        "execution:",
        "  target: copy_sh",
        "  evaluators:",
        "    - name: invoice_fields",
        "      type: field_accuracy",
        f"      fields: {json.dumps(FIELDS)}",
        "evalcases:",
    ]
    for i in range(1, n + 1):
        truth = invoice(i)
        name = f"invoice-{i:05d}.json"
        (root / "fixtures" / name).write_text(json.dumps(perturb(i, truth), indent=2))
        lines += [
            f"  - id: invoice-{i:05d}",
            "    input_messages:",
            "      - role: user",
            "        content:",
            f"          - {{type: file, value: ../fixtures/{name}}}",
            "          - {type: text, value: Extract the invoice as JSON.}",
            "    expected_messages:",
            "      - role: assistant",
            "        content:",
        ]
        lines += ["          " + line for line in _yaml_block(truth)]
    dataset = root / "evals" / "dataset.yaml"
    dataset.write_text("\n".join(lines) + "\n")
    return dataset


def _yaml_block(value: dict, indent: int = 0) -> list[str]:
    """Block-style YAML (what people write by hand), values JSON-quoted."""
    out = []
    pad = "  " * indent
    for key, item in value.items():
        if isinstance(item, dict):
            out.append(f"{pad}{key}:")
            out += _yaml_block(item, indent + 1)
        elif isinstance(item, list):
            out.append(f"{pad}{key}:")
            for element in item:
                block = _yaml_block(element, indent + 2)
                out.append(f"{pad}  - {block[0].strip()}")
                out += block[1:]
        else:
            out.append(f"{pad}{key}: {json.dumps(item)}")
    return out


def agentv_argv() -> list[str]:
    console = Path(sys.executable).with_name("agentv")
    return [str(console)] if console.exists() else [sys.executable, "-m", "agentv_py"]


def floor_xargs(root: Path, workers: int, first_only: bool = False) -> tuple[float, float]:
    """(wall, CPU) of launching the target once per fixture (only the first: `first_only`)."""
    out_dir = Path(tempfile.mkdtemp(prefix="floor-"))
    files = "$(ls ../fixtures/*.json | head -1)" if first_only else "../fixtures/*.json"
    command = (
        f'cd evals && for f in {files}; do printf \'%s\\n%s\\n\' "$f" {out_dir}/"${{f##*/}}"; done'
        f" | xargs -P {workers} -n 2 sh ../copy.sh"
    )
    wall, cpu, _, _ = measured_child(["sh", "-c", command], root)
    shutil.rmtree(out_dir, ignore_errors=True)
    return wall, cpu


_PYTHON_PARENT = (
    "import subprocess, sys, threading\n"
    "cwd, workers, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]\n"
    "jobs = iter(zip(pairs[::2], pairs[1::2]))\n"
    "lock = threading.Lock()\n"
    "def work():\n"
    "    while True:\n"
    "        with lock:\n"
    "            job = next(jobs, None)\n"
    "        if job is None:\n"
    "            return\n"
    "        subprocess.run(['sh', '../copy.sh', *job], cwd=cwd, capture_output=True, start_new_session=True)\n"
    "threads = [threading.Thread(target=work) for _ in range(workers)]\n"
    "for t in threads: t.start()\n"
    "for t in threads: t.join()\n"
)


def floor_python(root: Path, workers: int, first_only: bool = False) -> tuple[float, float]:
    """(wall, CPU) of the least a CPython parent does per case: `subprocess.run` of the same
    target with its output captured, `workers` threads, nothing scored or written. What agentv
    spends beyond it is its own work; what it spends itself is CPython's price of a spawn."""
    files = sorted((root / "fixtures").glob("*.json"))[: 1 if first_only else None]
    out_dir = Path(tempfile.mkdtemp(prefix="floor-py-"))
    pairs = [str(arg) for path in files for arg in (path, out_dir / path.name)]
    argv = [sys.executable, "-c", _PYTHON_PARENT, str(root / "evals"), str(workers), *pairs]
    wall, cpu, _, _ = measured_child(argv, root)
    shutil.rmtree(out_dir, ignore_errors=True)
    return wall, cpu


def fields_per_second(seconds: float = 1.5) -> tuple[float, float]:
    """field_accuracy throughput in-process: (fields/s through the evaluator, fields/s pure scoring)."""
    from agentv_py.evaluators import EvalContext, run_evaluator
    from agentv_py.evaluators.field_accuracy import score_fields
    from agentv_py.models.fields import FieldAccuracyConfig

    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": FIELDS})
    truth = invoice(11)
    answer_text = json.dumps(perturb(11, truth))
    answer = json.loads(answer_text)
    rates = []
    for run in (
        lambda: run_evaluator(config, EvalContext("c", "d", Path("."), answer_text, truth)),
        lambda: score_fields(config, answer, truth),
    ):
        count = 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            for _ in range(200):
                run()
            count += 200
        rates.append(count * len(FIELDS) / (time.perf_counter() - started))
    return rates[0], rates[1]


def _first_id(dataset: Path) -> str:
    for line in dataset.read_text().splitlines():
        if line.startswith("  - id: "):
            return line.split(": ", 1)[1].strip().strip('"')
    raise SystemExit(f"no case id found in {dataset}")


def dataset_mib(path: Path) -> float:
    """Memory the loaded dataset keeps (parsed ground truth, models), measured with tracemalloc."""
    import gc
    import tracemalloc

    from agentv_py.loading import load_dataset

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    here = os.getcwd()
    os.chdir(path.parent.parent)  # as `agentv eval` is run: from the workload's root
    try:
        loaded = load_dataset(path)
    finally:
        os.chdir(here)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del loaded
    return held / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3, help="measured repetitions (medians are reported)")
    parser.add_argument("--sizes", default="250,1000,4000", help="N values for the memory check")
    parser.add_argument(
        "--workload",
        type=Path,
        help="time an existing workload folder instead (fixtures/, copy.sh, evals/dataset.yaml, "
        ".agentv/targets.yaml), e.g. the peer harness's ../shared/bench/data/n1000",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="agentv-bench-"))
    cache = work / "cache"
    env = installed_env(work, AGENTV_CACHE_DIR=str(cache))
    w = args.workers
    try:
        if args.workload:
            root = args.workload.resolve()
            dataset = root / "evals" / "dataset.yaml"
            n = len(list((root / "fixtures").glob("*.json")))
        else:
            n = args.cases
            root = work / f"n{n}"
            dataset = make_workload(root, n)
        eval_argv = agentv_argv() + ["eval", str(dataset), "--workers", str(w), "--out", str(work / "out.jsonl")]

        first_id = _first_id(dataset)
        one_argv = eval_argv + ["--eval-id", first_id, "--out", str(work / "one.jsonl")]
        # Warm-up (file system caches, agentv's bytecode), then alternate measurements so drift
        # hits all alike.
        floor_xargs(root, w)
        measured_child(one_argv, root, env)
        cold, warm, floors, py_floors, rss, ones, floor_ones, py_ones, loops = [], [], [], [], [], [], [], [], []
        for _ in range(args.reps):
            shutil.rmtree(cache, ignore_errors=True)
            wall, cpu, peak, code = measured_child(eval_argv, root, env)
            assert code in (0, 1), f"agentv eval exited {code}"
            cold.append((wall, cpu))
            wall, cpu, peak, _ = measured_child(eval_argv, root, env)
            warm.append((wall, cpu))
            rss.append(peak)
            wall, cpu, _, _ = measured_child(one_argv, root, env)
            ones.append((wall, cpu))
            floors.append(floor_xargs(root, w))
            floor_ones.append(floor_xargs(root, w, first_only=True))
            py_floors.append(floor_python(root, w))
            py_ones.append(floor_python(root, w, first_only=True))
            loops.append(calibration_cpu())
        rows = [json.loads(line) for line in (work / "out.jsonl").read_text().splitlines()]
        assert len(rows) == n and all(r["status"] == "ok" for r in rows), "every case must be scored"
        mean_score = statistics.fmean(r["score"] for r in rows)

        def median(pairs: list[tuple[float, float]]) -> tuple[float, float]:
            return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)

        floor, floor_one = median(floors), median(floor_ones)
        per_case = lambda total, one: (total - one) / (n - 1) * 1000  # noqa: E731 - ms per further case
        floor_case = (per_case(floor[0], floor_one[0]), per_case(floor[1], floor_one[1]))
        print(f"agentv eval, N={n} cases, {w} workers, trivial sh target (copy a file); medians of {args.reps}")
        print(f"  scored {len(rows)}/{n} cases, mean score {mean_score:.4f}")
        print(
            f"  spawn floor, xargs -P {w}     : wall {floor[0]:6.2f} s  CPU {floor[1]:6.2f} s   "
            f"per case: wall {floor_case[0]:5.2f} ms  CPU {floor_case[1]:5.2f} ms"
        )
        py_floor, py_one = median(py_floors), median(py_ones)
        py_case = per_case(py_floor[1], py_one[1])
        print(
            f"  spawn floor, Python parent   : wall {py_floor[0]:6.2f} s  CPU {py_floor[1]:6.2f} s   "
            f"per case: CPU {py_case:5.2f} ms = {py_case / floor_case[1]:4.2f} x xargs (CPython's own "
            "price of a spawn: no scoring, no rows)"
        )
        one = median(ones)
        print(f"  agentv eval, one case        : wall {one[0]:6.2f} s  CPU {one[1]:6.2f} s (start-up and loading)")
        for label, pairs in (("cold YAML cache", cold), ("warm YAML cache", warm)):
            wall, cpu = median(pairs)
            case_wall, case_cpu = per_case(wall, one[0]), per_case(cpu, one[1])
            print(
                f"  agentv eval, {label}: wall {wall:6.2f} s  CPU {cpu:6.2f} s   "
                f"per case: wall {case_wall:5.2f} ms  CPU {case_cpu:5.2f} ms"
            )
            print(
                f"      ratio to the floor: whole run wall {wall / floor[0]:4.2f} x, CPU {cpu / floor[1]:4.2f} x; "
                f"per case wall {case_wall / floor_case[0]:4.2f} x, CPU {case_cpu / floor_case[1]:4.2f} x"
            )
            if label == "warm YAML cache":  # issue 28, point 2: the whole run near the floor
                report(f"whole run CPU, N={n}", cpu, floor[1], "spawn floor", WHOLE_RUN_GOAL, unit="s")
                report("CPU per further case", case_cpu, floor_case[1], "spawn floor", PER_CASE_GOAL, unit="ms")
        print(f"  calibration: pure-Python loop {statistics.median(loops):.3f} s CPU (bench_startup.py's)")

        helps = []
        for _ in range(7):
            started = time.perf_counter()
            subprocess.run(agentv_argv() + ["--help"], capture_output=True, check=True)
            helps.append(time.perf_counter() - started)
        print(f"agentv --help: {statistics.median(helps):.3f} s (median of 7)")

        via_evaluator, pure = fields_per_second()
        print(f"field_accuracy: {via_evaluator:,.0f} fields/s through the evaluator, {pure:,.0f} fields/s pure scoring")

        print(f"peak RSS of agentv eval (warm cache) by N, {w} workers; the loaded dataset's own size")
        print("(tracemalloc, in process) is subtracted to show what the runner itself holds:")
        sizes = [int(s) for s in args.sizes.split(",") if s]
        for size in sizes if not args.workload else [n]:
            if size == n:
                peak, path = max(rss), dataset
            else:
                path = make_workload(work / f"n{size}", size)
                argv = agentv_argv() + ["eval", str(path), "--workers", str(w), "--out", str(work / "o.jsonl")]
                timed_child(argv, path.parent.parent, env)  # fill the cache
                _, peak, _ = timed_child(argv, path.parent.parent, env)
            held = dataset_mib(path)
            print(
                f"  N={size:>6}: peak RSS {peak:6.1f} MiB, dataset {held:5.1f} MiB, "
                f"RSS - dataset {peak - held:5.1f} MiB"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
