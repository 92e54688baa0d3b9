#!/usr/bin/env python3
"""Compare benchmark (issue 14): `agentv compare` and `agentv metrics` over two large results files.

Writes two results files of N rows (default 100,000) and of N/10 rows, each row one
`field_accuracy` result with 9 fields in `details.fields` (path, match, expected, actual,
status, ... as agentv_py/evaluators/field_accuracy.py writes them); NEW flips ~5% of BASE's
fields (hit <-> miss). Prints, at both sizes, wall time, peak RSS and exit code of
`agentv metrics BASE` and `agentv compare BASE NEW --format json`, then the growth of each
per 1,000 rows (memory should grow only with the per-case tables, not with the rows' size).
`compare` exits 1 here: the flips are mostly hit -> miss (BASE hits 90%), a significant regression.

Then the CPU (user + sys, median of --repeat, interleaved) of `agentv compare BASE NEW` against
`agentv metrics BASE` + `agentv metrics NEW` at N rows (goal: compare <= 2x metrics of one file,
the issue's bar, printed as such), with an orjson read of BASE as the machine's calibration;
bytecode cached, as an installed package runs (`_bench.installed_env`).

Usage: python scripts/bench_compare.py [--rows 100000] [--repeat 3] [--cpu-only]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import cpu_medians, installed_env, measured_child, orjson_read, report, timed_child  # noqa: E402

from agentv_py.scoring.case import verdict_for  # noqa: E402

FLIP_RATE = 0.05
BASE_MISS_RATE = 0.1

# (path, match, expected, the wrong answer, the matcher's info on a hit, on a miss, the miss reason)
FIELDS: list[tuple[str, str, Any, Any, dict[str, Any], dict[str, Any], str]] = [
    ("invoice_number", "exact", "INV-2025-000001", "INV-2025-00001", {}, {}, "values differ"),
    (
        "invoice_date",
        "date",
        "2025-03-14",
        "2025-03-41",
        {"parsed": "2025-03-14", "expected_date": "2025-03-14"},
        {"parsed": "2025-04-13", "expected_date": "2025-03-14"},
        "date mismatch: got 2025-04-13, expected 2025-03-14",
    ),
    ("currency", "exact", "USD", "EUR", {}, {}, "values differ"),
    (
        "supplier.name",
        "fuzzy",
        "Maersk Line A/S",
        "Maresk Lines",
        {"similarity": 1.0, "threshold": 0.85, "algorithm": "levenshtein"},
        {"similarity": 0.733333, "threshold": 0.85, "algorithm": "levenshtein"},
        "similarity 0.73 < 0.85",
    ),
    (
        "importer.name",
        "fuzzy",
        "Acme Trading GmbH",
        "ACME Trade",
        {"similarity": 1.0, "threshold": 0.85, "algorithm": "levenshtein"},
        {"similarity": 0.588235, "threshold": 0.85, "algorithm": "levenshtein"},
        "similarity 0.59 < 0.85",
    ),
    ("po_number", "exact", "PO-778812", "PO-778821", {}, {}, "values differ"),
    (
        "net_total",
        "numeric_tolerance",
        12450.0,
        12540.0,
        {"diff": 0.0, "tolerance": 0.01, "relative": False},
        {"diff": 90.0, "tolerance": 0.01, "relative": False},
        "outside tolerance: diff=90.00, tolerance=0.01",
    ),
    (
        "tax_total",
        "numeric_tolerance",
        2365.5,
        2356.5,
        {"diff": 0.0, "tolerance": 0.01, "relative": False},
        {"diff": 9.0, "tolerance": 0.01, "relative": False},
        "outside tolerance: diff=9.00, tolerance=0.01",
    ),
    (
        "gross_total",
        "numeric_tolerance",
        14815.5,
        14185.5,
        {"diff": 0.0, "tolerance": 0.01, "relative": False},
        {"diff": 630.0, "tolerance": 0.01, "relative": False},
        "outside tolerance: diff=630.00, tolerance=0.01",
    ),
]


def field_entry(spec: tuple[str, str, Any, Any, dict[str, Any], dict[str, Any], str], hit: bool) -> dict[str, Any]:
    """One `details.fields` entry, keys in field_accuracy's order (row, then matcher info, then status)."""
    path, match, expected, wrong, hit_info, miss_info, reason = spec
    entry: dict[str, Any] = {"path": path, "match": match, "expected": expected}
    entry["actual"] = expected if hit else wrong
    entry["weight"] = 1.0
    entry.update(hit_info if hit else miss_info)
    entry.update(status="hit" if hit else "miss", score=1.0 if hit else 0.0)
    if not hit:
        entry["reason"] = reason
    return entry


# Every entry is the same object for one (field, outcome): rows are built by reference, dumped by orjson.
ENTRIES = [(field_entry(spec, True), field_entry(spec, False)) for spec in FIELDS]


def make_row(i: int, hits: list[bool]) -> dict[str, Any]:
    """A results row shaped like a run with one `field_accuracy` evaluator over 9 fields."""
    passed = sum(hits)
    score = passed / len(hits)
    verdict = verdict_for(score)
    misses = [
        f"{FIELDS[k][0]} ({FIELDS[k][6]}; expected {FIELDS[k][2]!r}, got {FIELDS[k][3]!r})"
        for k, ok in enumerate(hits)
        if not ok
    ]
    hit_paths = [FIELDS[k][0] for k, ok in enumerate(hits) if ok]
    answer = {spec[0]: (spec[2] if ok else spec[3]) for spec, ok in zip(FIELDS, hits, strict=True)}
    return {
        "timestamp": "2026-11-21T00:00:00.000Z",
        "eval_id": f"inv-{i:06d}",
        "dataset": "bench",
        "conversation_id": None,
        "target": "t",
        "status": "ok",
        "score": score,
        "verdict": verdict,
        "hits": hit_paths,
        "misses": misses,
        "reasoning": "",
        "candidate_answer": orjson.dumps(answer).decode(),
        "evaluator_results": [
            {
                "name": "fields",
                "type": "field_accuracy",
                "status": "processed",
                "score": score,
                "passed": verdict == "pass",
                "verdict": verdict,
                "weight": 1.0,
                "hits": hit_paths,
                "misses": misses,
                "reasoning": f"{passed}/{len(hits)} fields matched",
                "details": {
                    "fields": [ENTRIES[k][0 if ok else 1] for k, ok in enumerate(hits)],
                    "aggregation": "weighted_average",
                },
            }
        ],
        "attempts": 1,
        "duration_ms": 3.1,
        "trace": {"duration_ms": 2.9},
    }


def write_pair(base: Path, new: Path, rows: int, seed: int = 14) -> tuple[int, int]:
    """BASE and NEW results files of `rows` rows; NEW flips each field of BASE with probability
    FLIP_RATE. Returns the number of flipped fields and BASE's size in bytes."""
    rng = random.Random(seed)
    flipped = 0
    with open(base, "wb") as before, open(new, "wb") as after:
        for i in range(rows):
            hits = [rng.random() >= BASE_MISS_RATE for _ in FIELDS]
            changed = [ok != (rng.random() < FLIP_RATE) for ok in hits]
            flipped += sum(a != b for a, b in zip(hits, changed, strict=True))
            before.write(orjson.dumps(make_row(i, hits)) + b"\n")
            after.write(orjson.dumps(make_row(i, changed)) + b"\n")
    return flipped, base.stat().st_size


def measure(argv: list[str], repeat: int) -> tuple[float, float, int]:
    """Median wall time, highest peak RSS (MiB) and the exit codes' maximum over `repeat` runs."""
    walls, peaks, codes = zip(*(timed_child(argv, cwd=REPO) for _ in range(repeat)), strict=True)
    return statistics.median(walls), max(peaks), max(codes)


def cpu_ratio(work: Path, agentv: list[str], rows: int, repeat: int) -> None:
    """`agentv compare BASE NEW` CPU against `agentv metrics BASE` (goal: <= 2x)."""
    base, new = work / "cpu-base.jsonl", work / "cpu-new.jsonl"
    write_pair(base, new, rows)
    commands = {
        "compare": [*agentv, "compare", str(base), str(new), "--format", "json"],
        "metrics": [*agentv, "metrics", str(base)],
        "orjson": orjson_read(base),
    }
    env = installed_env(work)  # bytecode cached, as an installed package runs
    measured_child(commands["metrics"], cwd=REPO, env=env)  # compiles agentv's modules once: not timed
    cpu = cpu_medians(commands, repeat, cwd=REPO, env=env)
    print(f"CPU over {rows:,} rows each (median of {repeat}); calibration: orjson read of BASE {cpu['orjson']:.2f} s")
    report("agentv compare BASE NEW", cpu["compare"], cpu["metrics"], "agentv metrics BASE", 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (median wall, max RSS)")
    parser.add_argument("--cpu-only", action="store_true", help="only the CPU ratio at --rows")
    args = parser.parse_args()
    agentv = [sys.executable, "-m", "agentv_py"]
    work = Path(tempfile.mkdtemp(prefix="agentv-compare-bench-"))
    sizes = [args.rows // 10, args.rows]
    figures: dict[str, list[tuple[int, float, float]]] = {"metrics": [], "compare": []}
    try:
        cpu_ratio(work, agentv, args.rows, args.repeat)
        if args.cpu_only:
            return 0
        print(
            f"results files: 1 field_accuracy result per row, {len(FIELDS)} fields, "
            f"NEW flips {FLIP_RATE:.0%} of BASE's fields; median wall of {args.repeat}, max peak RSS"
        )
        for rows in sizes:
            base, new = work / f"base-{rows}.jsonl", work / f"new-{rows}.jsonl"
            flipped, size = write_pair(base, new, rows)
            print(f"  {rows:>7} rows ({size / 2**20:6.1f} MiB each, {flipped} fields flipped)")
            commands = {
                "metrics": [*agentv, "metrics", str(base)],
                "compare": [*agentv, "compare", str(base), str(new), "--format", "json"],
            }
            for name, argv in commands.items():
                wall, peak, code = measure(argv, args.repeat)
                figures[name].append((rows, wall, peak))
                print(f"    agentv {name:<7}: {wall:6.2f} s, peak RSS {peak:6.1f} MiB, exit {code}")
        print(f"growth per 1,000 rows ({sizes[0]} -> {sizes[1]} rows)")
        for name, ((n0, w0, m0), (n1, w1, m1)) in figures.items():
            per = 1000 / (n1 - n0)
            print(f"  agentv {name:<7}: {(w1 - w0) * per * 1000:6.1f} ms, {(m1 - m0) * per * 1024:7.1f} KiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
