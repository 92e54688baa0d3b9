"""`provider_batching: true` through a real `agentv eval`: one command answers every case (the
target logs each invocation), a failed batch is said once and every case then runs on its own,
a case without a line is an error row, and Ctrl-C or SIGTERM during the batch kills it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, script, stderr_of, wait_dead

ANSWER = {"a": 1, "b": 2}
FAILED = "the batch call failed, so this case ran on its own: "


def _setup(ws, mode: str, cases: int = 3, extra: str = "") -> None:
    command = f"python3 {script('batch_answers.py')} log.txt {mode} {{EVAL_ID}} {{OUTPUT_FILE}} {{FILES}}"
    ws.cli_target(command, extra="provider_batching: true\n" + extra)
    ws.cases_dataset([(f"c{i}", ANSWER, ANSWER) for i in range(1, cases + 1)])


def _eval(ws, *args: str) -> tuple[subprocess.CompletedProcess[str], list[dict], list[str]]:
    """`agentv eval dataset.yaml --out out.jsonl ARGS`: the process, its rows by id order, and the
    target's invocation log (one EVAL_ID a line)."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "out.jsonl", *args],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    rows = sorted((json.loads(line) for line in (ws.root / "out.jsonl").read_text().splitlines()), key=_id)
    log = (ws.root / "log.txt").read_text().splitlines()
    return proc, rows, log


def _id(row: dict) -> str:
    return row["eval_id"]


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_one_command_answers_every_case(ws):
    _setup(ws, "ok")
    proc, rows, log = _eval(ws)
    assert proc.returncode == 0, proc.stderr
    assert log == ["batch"]
    assert [(r["eval_id"], r["verdict"], r["attempts"]) for r in rows] == [(f"c{i}", "pass", 1) for i in (1, 2, 3)]
    assert all(r["trace"] == {"duration_ms": 7.0, "batch": "answered by the batch call"} for r in rows)
    assert _warnings(proc.stderr) == []


def test_the_batch_holds_only_the_selected_cases_after_the_healthcheck(ws):
    _setup(ws, "ok", cases=4, extra="healthcheck:\n  command_template: sh -c 'echo health >> log.txt'")
    proc, rows, log = _eval(ws, "--eval-id", "c2", "--eval-id", "c4")
    assert proc.returncode == 0, proc.stderr
    assert log == ["health", "batch"]
    assert [r["eval_id"] for r in rows] == ["c2", "c4"]


def test_lines_for_ids_that_are_no_case_are_ignored(ws):
    _setup(ws, "extra")
    proc, rows, log = _eval(ws)
    assert proc.returncode == 0, proc.stderr
    assert (log, [r["verdict"] for r in rows]) == (["batch"], ["pass"] * 3)


def test_a_case_without_a_line_is_an_error_row_and_is_not_called_again(ws):
    _setup(ws, "missing")
    proc, rows, log = _eval(ws)
    assert proc.returncode == 4, proc.stderr
    assert log == ["batch"]
    assert [r["verdict"] for r in rows[:2]] == ["pass", "pass"]
    assert (rows[2]["status"], rows[2]["error"], rows[2]["trace"]["batch"]) == (
        "error",
        "target 't' failed: Batch output missing id 'c3'",
        "not in the batch call's output",
    )
    assert _warnings(proc.stderr) == []


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", "target 't' failed: exit code 3: batch mode is broken"),
        ("duplicate", "CLI batch output contains duplicate id: c1"),
    ],
    ids=["non-zero-exit", "duplicate-id"],
)
def test_a_failed_batch_is_said_once_and_every_case_runs_on_its_own(ws, mode, reason):
    _setup(ws, mode)
    proc, rows, log = _eval(ws)
    assert proc.returncode == 0, proc.stderr
    assert log[0] == "batch" and sorted(log[1:]) == ["c1", "c2", "c3"]
    assert _warnings(proc.stderr) == [
        f"warning: the batch call of target 't' failed; each case runs on its own: {reason}"
    ]
    assert [(r["verdict"], r["trace"]["batch"]) for r in rows] == [("pass", FAILED + reason)] * 3


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_during_the_batch_exits_130_kills_it_and_leaves_valid_jsonl(ws, sig):
    _setup(ws, "pidfile")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "out.jsonl"],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    pid_file: Path = ws.root / "log.txt.pid"
    deadline = time.monotonic() + 20
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    stderr = stderr_of(proc, timeout=15)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert wait_dead(int(pid_file.read_text()))
    assert (ws.root / "log.txt").read_text().splitlines() == ["batch"]  # no case ran on its own
    text = (ws.root / "out.jsonl").read_text()
    assert [json.loads(line) for line in text.splitlines()] == []
