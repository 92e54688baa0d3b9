"""Whatever stops `agentv eval`, no target process outlives it: a failed write, a closed pipe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, stderr_of, wait_dead


def _workspace(ws, pids: Path) -> None:
    """Three slow cases (record their pid, sleep 60 s) and one fast case that answers once all
    three are running."""
    ws.cli_target("sh {FILES}")
    ok = 'echo \'{"a": 1, "b": 2}\''
    wait = f"while [ $(ls {pids} | wc -l) -lt 3 ]; do sleep 0.02; done; {ok}"
    sleeper = f"echo $$ > {pids}/$$; sleep 60"
    ws.cases_dataset([(f"slow-{i}", sleeper, {"a": 1}) for i in range(3)] + [("fast", wait, {"a": 1, "b": 2})])


def _agentv(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentv_py", *args],
        cwd=cwd,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        **kwargs,
    )


def _all_dead(pids: Path) -> list[int]:
    recorded = [int(p.read_text()) for p in pids.iterdir()]
    assert len(recorded) == 3
    return [pid for pid in recorded if not wait_dead(pid)]


def test_a_write_error_stops_the_run_and_leaves_no_process_behind(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    _workspace(ws, pids)
    started = time.monotonic()
    result = _agentv(["eval", "dataset.yaml", "--out", "/dev/full", "--workers", "4"], ws.root, capture_output=True)
    assert time.monotonic() - started < 30  # not the targets' 60 s sleeps
    assert result.returncode == 5, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "error: cannot write results to /dev/full (No space left on device); the run was stopped after 0 rows "
        "and its processes were killed"
    )
    assert _all_dead(pids) == []


def test_a_closed_stdout_pipe_stops_the_run_and_leaves_no_process_behind(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    _workspace(ws, pids)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "-", "--workers", "4"],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader went away (`agentv eval ... --out - | head -0`)
    stderr = stderr_of(proc, timeout=30)
    assert proc.returncode == 5, stderr
    assert stderr.splitlines()[-1] == (
        "error: stdout was closed (Broken pipe); the run was stopped after 0 rows and its processes were killed"
    )
    assert "Traceback" not in stderr
    assert _all_dead(pids) == []


def test_an_unwritable_results_path_is_exit_5_without_a_traceback(ws):
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.cli_target("cat {FILES}")
    (ws.root / "blocked").write_text("a file, not a directory")
    result = _agentv(["eval", path.name, "--out", "blocked/out.jsonl"], ws.root, capture_output=True)
    assert result.returncode == 5, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: cannot write results to blocked/out.jsonl")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_during_the_healthcheck_exits_130_and_kills_it(ws, tmp_path, sig):
    pid_file = tmp_path / "healthcheck.pid"
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.cli_target("cat {FILES}", extra=f"healthcheck:\n  command_template: sh -c 'echo $$ > {pid_file}; sleep 60'")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_py", "eval", path.name],
        cwd=ws.root,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    deadline = time.monotonic() + 20
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    stderr = stderr_of(proc, timeout=15)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert wait_dead(int(pid_file.read_text()))
