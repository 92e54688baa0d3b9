#!/usr/bin/env python3
"""Metrics benchmark: `agentv metrics` over large results files, and line-item alignment speed.

Prints, from one run:
  1. wall time and peak RSS of `agentv metrics` over a results file of N rows (default 100,000;
     bar: < 5 s) and over N/4 rows (memory must not grow with the file);
  2. optimal (and greedy) alignment of 200 x 200 line items, median of 20 (bar: < 50 ms),
     plus the one-off cost of importing scipy;
  3. one `field_accuracy` `match: items` field over 1,500 shuffled line items: distinct
     descriptions, and all called `Fee` (ties: agreement, content pairing), wall time of one call.

  4. CPU (user + sys, median of --repeat, interleaved) of `agentv metrics` over N rows of two
     shapes: the judges' `details.metrics` above, and `field_accuracy` rows with typed fields
     (9 fields in `details.fields`, as scripts/bench_compare.py writes them), each against an
     orjson read of the same file (calibration; goal: <= 4x), with bytecode cached as an installed
     package runs (`_bench.installed_env`).

Usage: python scripts/bench_metrics.py [--rows 100000] [--repeat 3] [--cpu-only]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import cpu_medians, installed_env, measured_child, orjson_read, report, timed_child  # noqa: E402
from bench_compare import write_pair  # noqa: E402

HEADER_FIELDS = [
    "invoice_number",
    "invoice_date",
    "currency",
    "supplier.name",
    "importer.name",
    "po_number",
    "net_total",
    "gross_total",
]
ITEM_FIELDS = ["line_items[].description", "line_items[].quantity", "line_items[].line_total"]


def counts(rng: random.Random) -> dict[str, float | None]:
    kind = rng.random()
    if kind < 0.8:
        return {"tp": 1, "tn": 0, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    if kind < 0.9:
        return {"tp": 0, "tn": 0, "fp": 1, "fn": 1, "precision": 0.0, "recall": 0.0, "f1": None}
    return {"tp": 0, "tn": 0, "fp": 0, "fn": 1, "precision": None, "recall": 0.0, "f1": None}


def write_results(path: Path, rows: int, seed: int = 7) -> int:
    """A results file shaped like a run of the two metrics judges; returns its size in bytes."""
    rng = random.Random(seed)
    answer = json.dumps({"invoice_number": "INV-2025-000001", "line_items": [{"description": "OCEAN FREIGHT"}] * 8})
    with open(path, "wb") as handle:
        for i in range(rows):
            header = {f: counts(rng) for f in HEADER_FIELDS}
            items = {f: counts(rng) for f in ITEM_FIELDS}
            row = {
                "timestamp": "2026-11-21T00:00:00.000Z",
                "eval_id": f"inv-{i:06d}",
                "dataset": "bench",
                "conversation_id": None,
                "target": "t",
                "status": "ok",
                "score": 0.9,
                "verdict": "pass",
                "hits": HEADER_FIELDS,
                "misses": [],
                "reasoning": "",
                "candidate_answer": answer,
                "evaluator_results": [
                    {
                        "name": "header_metrics",
                        "type": "code_judge",
                        "status": "processed",
                        "score": 0.9,
                        "passed": True,
                        "verdict": "pass",
                        "weight": 1.0,
                        "hits": [],
                        "misses": [],
                        "reasoning": "",
                        "details": {"metrics": header},
                    },
                    {
                        "name": "line_item_metrics",
                        "type": "code_judge",
                        "status": "processed",
                        "score": 0.9,
                        "passed": True,
                        "verdict": "pass",
                        "weight": 1.0,
                        "hits": [],
                        "misses": [],
                        "reasoning": "",
                        "details": {
                            "metrics": items,
                            "alignment": {"pairs": [{"expected": k, "parsed": k, "similarity": 1.0} for k in range(8)]},
                        },
                    },
                ],
                "attempts": 1,
                "duration_ms": 3.1,
                "trace": {"duration_ms": 2.9},
            }
            handle.write(orjson.dumps(row) + b"\n")
    return path.stat().st_size


def alignment_timings() -> tuple[float, float, float]:
    started = time.perf_counter()
    import scipy.optimize  # noqa: F401

    scipy_import = time.perf_counter() - started
    from agentv_py.scoring.alignment import align_items

    rng = random.Random(1)
    words = [
        "ocean",
        "freight",
        "bunker",
        "adjustment",
        "factor",
        "terminal",
        "handling",
        "charge",
        "documentation",
        "fee",
        "port",
        "security",
        "energy",
        "surcharge",
        "container",
        "maintenance",
    ]
    expected = [
        {"description": " ".join(rng.sample(words, 3)) + f" {i}", "quantity": i, "line_total": i * 10}
        for i in range(200)
    ]
    parsed = list(reversed(expected))
    results = []
    for assignment in ("optimal", "greedy"):
        align_items(expected, parsed, assignment=assignment)  # warm
        runs = []
        for _ in range(20):
            started = time.perf_counter()
            alignment = align_items(expected, parsed, assignment=assignment)
            runs.append(time.perf_counter() - started)
        assert len(alignment.pairs) == 200
        results.append(statistics.median(runs))
    return results[0], results[1], scipy_import


def items_field_timings(n: int = 1500) -> list[tuple[str, float, float]]:
    """(label, seconds, score) of one `match: items` field over `n` shuffled items."""
    from agentv_py.evaluators import EvalContext, run_evaluator
    from agentv_py.models.fields import FieldAccuracyConfig

    sub = [{"path": "description"}, {"path": "amount"}]
    config = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "fields": [{"path": "items", "match": "items", "fields": sub}]}
    )
    out = []
    for label, name in (("distinct descriptions", "Item {}"), ("all called Fee", "Fee")):
        truth = [{"description": name.format(i), "amount": i} for i in range(n)]
        answer = list(truth)
        random.Random(1).shuffle(answer)
        context = EvalContext("c", "d", Path("."), json.dumps({"items": answer}), {"items": truth})
        start = time.perf_counter()
        result = run_evaluator(config, context)
        out.append((label, time.perf_counter() - start, result.score or 0.0))
    return out


def cpu_ratios(work: Path, agentv: list[str], rows: int, repeat: int) -> None:
    """Part 4: `agentv metrics` CPU against an orjson read of the same file, for both row shapes."""
    judges, fields = work / "cpu-judges.jsonl", work / "cpu-fields.jsonl"
    write_results(judges, rows)
    write_pair(fields, work / "cpu-fields-new.jsonl", rows)
    env = installed_env(work)  # bytecode cached, as an installed package runs
    measured_child([*agentv, str(judges)], env=env)  # compiles agentv's modules once: not timed
    print(f"agentv metrics CPU over {rows:,} rows against an orjson read of the file (median of {repeat})")
    for label, path in (("judges' details.metrics", judges), ("field_accuracy fields  ", fields)):
        cpu = cpu_medians({"metrics": [*agentv, str(path)], "orjson": orjson_read(path)}, repeat, env=env)
        report(f"{label} ({path.stat().st_size / 2**20:5.1f} MiB)", cpu["metrics"], cpu["orjson"], "orjson read", 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per command for the CPU medians")
    parser.add_argument("--cpu-only", action="store_true", help="only part 4 (the CPU ratios)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentv-metrics-bench-"))
    agentv = [sys.executable, "-m", "agentv_py", "metrics"]
    try:
        cpu_ratios(work, agentv, args.rows, args.repeat)
        if args.cpu_only:
            return 0
        print(
            "agentv metrics over results files "
            f"(2 metrics judges per row, {len(HEADER_FIELDS) + len(ITEM_FIELDS)} fields)"
        )
        for rows in (args.rows // 4, args.rows):
            path = work / f"results-{rows}.jsonl"
            size = write_results(path, rows)
            walls, peaks, _ = zip(*(timed_child([*agentv, str(path)]) for _ in range(3)), strict=False)
            print(
                f"  {rows:>7} rows ({size / 2**20:6.1f} MiB): {statistics.median(walls):5.2f} s (median of 3), "
                f"peak RSS {max(peaks):5.1f} MiB"
            )
        optimal, greedy, scipy_import = alignment_timings()
        print("line-item alignment, 200 x 200 items (matched on description), median of 20:")
        print(f"  optimal (scipy linear_sum_assignment): {optimal * 1000:6.1f} ms")
        print(f"  greedy                               : {greedy * 1000:6.1f} ms")
        print(f"  one-off scipy import                 : {scipy_import * 1000:6.1f} ms")
        print("field_accuracy match: items, 1,500 shuffled line items, one call:")
        for label, seconds, score in items_field_timings():
            print(f"  {label:<22}: {seconds:6.2f} s (score {score:.3f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
