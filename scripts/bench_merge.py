#!/usr/bin/env python3
"""`agentv merge` of many shards: wall time and peak memory.

Runs a real one-case eval (mock target, 9-field field_accuracy) for a row and a manifest to copy,
then writes `--shards` shard files of `--rows` rows in all (each row that one with its own case id;
each manifest that one with its shard, case ids and evaluator hashes), and times
`agentv merge` of them in a fresh process (peak RSS of the largest process). Prints rows per second
and the peak at a tenth of the rows and at all of them, to show memory stays flat.

Usage: python scripts/bench_merge.py [--rows 1000000] [--shards 10]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import measured_child, print_calibration  # noqa: E402

FIELDS = [{"path": p} for p in ("a", "b", "c", "d", "e", "f", "g", "h", "i")]


def template(work: Path) -> tuple[dict, dict]:
    """A real row and manifest of a one-case eval."""
    (work / ".git").mkdir()
    (work / ".agentv").mkdir()
    (work / ".agentv" / "targets.yaml").write_text("targets:\n  - {name: m, provider: mock, echo_expected: true}\n")
    truth = {name["path"]: f"value {name['path']}" for name in FIELDS}
    (work / "d.yaml").write_text(
        "execution:\n  target: m\n  evaluators:\n"
        f"    - {{type: field_accuracy, fields: {json.dumps(FIELDS)}}}\n"
        "evalcases:\n"
        f"  - {{id: c0, input_messages: [{{role: user, content: x}}], "
        f"expected_messages: [{{role: assistant, content: {json.dumps(truth)}}}]}}\n"
    )
    wall, cpu, peak, code = measured_child(
        [str(Path(sys.executable).with_name("agentv")), "eval", "d.yaml", "--out", "one.jsonl"], work
    )
    assert code == 0, "the template eval failed"
    return json.loads((work / "one.jsonl").read_text()), json.loads((work / "one.jsonl.meta.json").read_text())


def write_shards(work: Path, row: dict, manifest: dict, rows: int, shards: int) -> list[Path]:
    line = json.dumps(row, separators=(",", ":"))
    head, tail = line.split('"eval_id":"c0"', 1)
    digest = manifest["case_evaluators"]["c0"]
    paths = []
    for k in range(1, shards + 1):
        ids = [f"case-{i:07d}" for i in range(k - 1, rows, shards)]
        path = work / f"shard-{k}.jsonl"
        with path.open("w") as handle:
            for case_id in ids:
                handle.write(f'{head}"eval_id":"{case_id}"{tail}\n')
        shard_manifest = {
            **manifest,
            "results": str(path),
            "dataset": {**manifest["dataset"], "cases": rows, "case_ids": ids},
            "case_evaluators": dict.fromkeys(ids, digest),
            "shard": {"index": k, "count": shards},
            "counts": {**manifest["counts"], "selected": len(ids), "written": len(ids)},
        }
        (work / f"shard-{k}.jsonl.meta.json").write_text(json.dumps(shard_manifest))
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=10)
    args = parser.parse_args()
    print_calibration()
    work = Path(tempfile.mkdtemp(prefix="agentv-bench-merge-"))
    agentv = str(Path(sys.executable).with_name("agentv"))
    try:
        row, manifest = template(work)
        for rows in (args.rows // 10, args.rows):
            paths = write_shards(work, row, manifest, rows, args.shards)
            size = sum(p.stat().st_size for p in paths) / 2**20
            wall, cpu, peak, code = measured_child([agentv, "merge", *map(str, paths), "-o", "all.jsonl"], work)
            assert code == 0, f"agentv merge exited {code}"
            merged = sum(1 for _ in (work / "all.jsonl").open())
            assert merged == rows, f"{merged} rows merged of {rows}"
            print(
                f"merge of {args.shards} shards, {rows:,} rows ({size:.0f} MiB): wall {wall:.1f} s, CPU {cpu:.1f} s, "
                f"{rows / wall:,.0f} rows/s, peak RSS {peak:.1f} MiB",
                flush=True,
            )
            for path in paths:
                path.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
