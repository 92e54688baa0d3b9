#!/usr/bin/env python3
"""`agentv explain RESULTS CASE` on one case with 1,000 and 10,000 field_accuracy fields: wall time
of each (a child process, start-up included) and their ratio (linear: about 10; it was quadratic).

Usage: python scripts/bench_explain.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import print_calibration

from agentv_py.evaluators.base import processed_result
from agentv_py.models.results import ResultRow


def explain_seconds(fields: int, work: Path) -> float:
    entries = [
        {"path": f"f{i}", "match": "exact", "expected": i, "actual": i, "status": "hit", "score": 1.0, "weight": 1.0}
        for i in range(fields)
    ]
    result = processed_result(name="fa", type="field_accuracy", score=1.0, details={"fields": entries})
    row = ResultRow(
        timestamp="2026-01-01T00:00:00Z",
        eval_id="c1",
        dataset="d",
        target="t",
        status="ok",
        score=1.0,
        verdict="pass",
        evaluator_results=[result],
    )
    path = work / f"r{fields}.jsonl"
    path.write_text(json.dumps(row.to_json_dict()) + "\n")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agentv_py", "explain", str(path), "c1"],
        capture_output=True,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - start


def main() -> int:
    print_calibration()
    with tempfile.TemporaryDirectory() as work:
        small, big = (explain_seconds(n, Path(work)) for n in (1_000, 10_000))
    print(f"agentv explain, one case: 1,000 fields {small:.2f} s, 10,000 fields {big:.2f} s, ratio {big / small:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
