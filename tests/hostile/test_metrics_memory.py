"""`agentv metrics` keeps memory bounded whatever the file holds (issue 11, point 9): a line over
the cap is skipped unread (and reported with its line number), and only the first skipped lines are
described. Peak memory is measured in a child process (`VmHWM`); the files are written to disk in
pieces, never held in the test's memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import orjson
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import processed_result
from agentv_py.report import jsonl
from agentv_py.report.metrics import PROBLEMS_KEPT, aggregate
from tests.conftest import REPO_ROOT, make_row

MIB = 1 << 20


def metrics_row(eval_id: str) -> bytes:
    details = {"metrics": {"total": {"tp": 1, "tn": 0, "fp": 0, "fn": 0}}}
    row = make_row(
        eval_id=eval_id, evaluator_results=[processed_result(name="m", type="code_judge", score=1.0, details=details)]
    )
    return orjson.dumps(row.to_json_dict()) + b"\n"


def write_pieces(path, pieces) -> None:
    with open(path, "wb") as handle:
        for piece in pieces:
            handle.write(piece)


PEAK = """
import json, sys
from agentv_py.report.metrics import aggregate
def peak():  # VmHWM, KiB: this process's own (ru_maxrss would carry the forking test's across exec)
    return int([line for line in open("/proc/self/status") if line.startswith("VmHWM")][0].split()[1])
before = peak()
report = aggregate(sys.argv[1], max_line=int(sys.argv[2]))
after = peak()
print(json.dumps({"growth_kib": after - before, "rows": report.rows, "skipped": report.skipped,
                  "described": len(report.problems), "first": report.problems[:1]}))
"""


def peak(path, max_line: int) -> dict:
    """Run `aggregate` in a fresh interpreter: how much its peak memory grew (KiB), and the report."""
    result = subprocess.run(
        [sys.executable, "-c", PEAK, str(path), str(max_line)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_huge_line_without_a_newline_is_skipped_in_bounded_memory(tmp_path):
    path = tmp_path / "huge.jsonl"
    write_pieces(path, [metrics_row("c1"), *(b"x" * (4 * MIB) for _ in range(48))])  # 192 MiB, no newline
    measured = peak(path, 4 * MIB)
    assert measured["rows"] == 1 and measured["skipped"] == 1
    assert measured["first"] == [[2, "line longer than 4 MiB: not read"]]
    assert measured["growth_kib"] < 40 * 1024, measured  # the cap and a chunk or two, not 192 MiB


def test_many_garbage_lines_are_counted_in_bounded_memory(tmp_path):
    path = tmp_path / "garbage.jsonl"
    garbage = (b"{not json " + b"y" * 4000 + b"\n") * 256  # 1 MiB of lines that are not JSON
    write_pieces(path, [garbage] * 96 + [metrics_row("last")])  # 96 MiB, 24576 bad lines
    measured = peak(path, 4 * MIB)
    assert measured["rows"] == 1 and measured["skipped"] == 96 * 256
    assert measured["described"] == PROBLEMS_KEPT
    assert measured["first"][0][0] == 1 and measured["first"][0][1].startswith("not JSON")
    assert measured["growth_kib"] < 40 * 1024, measured


def test_lines_longer_than_the_cap_are_reported_and_the_rest_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4096)
    path = tmp_path / "run.jsonl"
    write_pieces(path, [metrics_row("c1"), b"[" * 5000 + b"\n", b"\n", metrics_row("c2"), b"z" * 5000])
    report = aggregate(path)
    assert report.rows == 2 and report.per_field["total"].tp == 2
    assert report.problems == [(2, "line longer than 4 KiB: not read"), (5, "line longer than 4 KiB: not read")]
    result = CliRunner().invoke(app, ["metrics", str(path), "--format", "json"])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"{path}:2: skipped: line longer than 4 KiB: not read",
        f"{path}:5: skipped: line longer than 4 KiB: not read",
    ]
    assert json.loads(result.stdout)["skipped_count"] == 2


def test_only_the_first_skipped_lines_are_listed(tmp_path):
    path = tmp_path / "run.jsonl"
    write_pieces(path, [b"nope\n" * (PROBLEMS_KEPT + 25), metrics_row("c1")])
    result = CliRunner().invoke(app, ["metrics", str(path), "--format", "csv"])
    assert result.exit_code == 0
    errors = result.stderr.splitlines()
    assert len(errors) == PROBLEMS_KEPT + 1
    assert errors[0].startswith(f"{path}:1: skipped: not JSON")
    assert errors[-1] == f"{path}: 25 more skipped (not listed)"


def test_a_line_exactly_at_the_cap_is_read(tmp_path):
    row = metrics_row("c1")
    path = tmp_path / "run.jsonl"
    write_pieces(path, [row, row.rstrip(b"\n")])  # the last line has no newline
    assert aggregate(path, max_line=len(row) - 1).rows == 2
    assert aggregate(path, max_line=len(row) - 2).problems == [
        (1, f"line longer than {len(row) - 2} bytes: not read"),
        (2, f"line longer than {len(row) - 2} bytes: not read"),
    ]
