"""Whatever stops `agentv eval`, no target process outlives it: a failed write, a closed pipe.
A results file that cannot be written at all is refused (exit 2) before anything runs."""

from __future__ import annotations

import os
import resource
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
    ok = 'echo \'{"a": 1, "b": 2, "pad": "' + "x" * 20000 + "\"}'"
    wait = f"while [ $(ls {pids} | wc -l) -lt 3 ]; do sleep 0.02; done; {ok}"
    sleeper = f"echo $$ > {pids}/$$; sleep 60"
    ws.cases_dataset([(f"slow-{i}", sleeper, {"a": 1}) for i in range(3)] + [("fast", wait, {"a": 1, "b": 2})])


def _spawn(args: list[str], cwd: Path, stdout: int = subprocess.PIPE) -> subprocess.Popen[str]:
    """`agentv ARGS` started in `cwd`, stderr (and by default stdout) piped as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentv_py", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


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


def _small_file_limit() -> None:
    """In the child: files may grow to 16 KB (the pid files and the run manifest fit, the fast
    case's 20 KB row does not): a disk that fills up mid-run, for real (EFBIG from the kernel)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))


def test_a_write_error_stops_the_run_and_leaves_no_process_behind(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    _workspace(ws, pids)
    (ws.root / "out.jsonl").write_text("")
    started = time.monotonic()
    result = _agentv(
        ["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "4"],
        ws.root,
        capture_output=True,
        preexec_fn=_small_file_limit,
    )
    assert time.monotonic() - started < 30  # not the targets' 60 s sleeps
    assert result.returncode == 5, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "error: cannot write results to out.jsonl (File too large); the run was stopped after 0 rows "
        "and its processes were killed"
    )
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert (ws.root / "out.jsonl").read_bytes() == b""  # the partial row was cut off: no half line on disk
    assert _all_dead(pids) == []


def test_a_closed_stdout_pipe_stops_the_run_and_leaves_no_process_behind(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    _workspace(ws, pids)
    proc = _spawn(["eval", "dataset.yaml", "--out", "-", "--workers", "4"], ws.root)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader went away (`agentv eval ... --out - | head -0`)
    stderr = stderr_of(proc, timeout=30)
    assert proc.returncode == 5, stderr
    assert stderr.splitlines()[-1] == (
        "error: stdout was closed (Broken pipe); the run was stopped after 0 rows and its processes were killed"
    )
    assert "Traceback" not in stderr
    assert _all_dead(pids) == []


@pytest.mark.parametrize(
    ("out", "reason"),
    [
        ("blocked/out.jsonl", "Not a directory"),  # a path under a regular file
        ("a-directory", "Is a directory"),
        ("/dev/full", "a device, not a file (results go to a file, a pipe, a terminal or /dev/null)"),
    ],
)
def test_an_unwritable_results_path_is_exit_2_before_anything_runs(ws, tmp_path, out, reason):
    ran = tmp_path / "ran"
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.cli_target(f"sh -c 'touch {ran}; cat \"$0\"' {{FILES}}", extra=f"healthcheck:\n  command_template: touch {ran}")
    (ws.root / "blocked").write_text("a file, not a directory")
    (ws.root / "a-directory").mkdir()
    result = _agentv(["eval", path.name, "--out", out], ws.root, capture_output=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"error: cannot write results to {out}: {reason}"]
    assert not ran.exists()  # neither the healthcheck nor the target ran


def test_a_second_run_on_the_same_out_fails_at_once(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    _workspace(ws, pids)
    (ws.root / "out.jsonl").write_text("earlier rows\n")
    first = _spawn(["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "4"], ws.root, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while len(list(pids.iterdir())) < 3 and time.monotonic() < deadline:  # the first run is running
            time.sleep(0.05)
        second = _agentv(["eval", "dataset.yaml", "--out", "out.jsonl"], ws.root, capture_output=True)
        assert second.returncode == 2, second.stderr
        assert second.stderr.splitlines() == [
            "error: cannot write results to out.jsonl: another agentv run is writing it",
            "hint: wait for that run to finish, or pass another --out",
        ]
        assert len(list(pids.iterdir())) == 3  # the second run started no target
        out = ws.root / "out.jsonl"
        while not out.read_text() and time.monotonic() < deadline:  # the first run's row (case "fast")
            time.sleep(0.05)
        assert out.read_text().startswith('{"timestamp"')  # only the first run writes there
    finally:
        first.send_signal(signal.SIGINT)
        assert stderr_of(first, timeout=15) is not None
    assert first.returncode == 130
    assert _all_dead(pids) == []


def test_a_run_that_does_not_start_leaves_an_existing_results_file_alone(ws):
    ws.dataset("evalcases:\n  - id: c1\n    expected_mesages: []\n")
    (ws.root / "out.jsonl").write_text("rows of an earlier run\n")
    result = _agentv(["eval", "dataset.yaml", "--out", "out.jsonl"], ws.root, capture_output=True)
    assert result.returncode == 2
    assert (ws.root / "out.jsonl").read_text() == "rows of an earlier run\n"
    result = _agentv(["eval", "dataset.yaml", "--out", "new.jsonl"], ws.root, capture_output=True)
    assert result.returncode == 2 and not (ws.root / "new.jsonl").exists()  # nothing left behind


def test_out_dash_into_head_ends_quietly(ws):
    """`agentv eval ... --out - | head -1`: rows flowing, the reader leaves after one line."""
    ws.cli_target("sh {FILES}")
    # 20 kB answers (kept in each row): far more than a pipe holds, so writes go on after head left.
    big = 'printf \'{"a": 1, "b": 2, "pad": "%s"}\' "$(head -c 20000 /dev/zero | tr \'\\0\' x)"'
    ws.cases_dataset([(f"c{i}", big, {"a": 1, "b": 2}) for i in range(60)])
    result = subprocess.run(
        f"{sys.executable} -m agentv_py eval dataset.yaml --out - --workers 2 2>err.txt | head -1; "
        'echo "${PIPESTATUS[0]}" > status.txt',
        shell=True,
        executable="/bin/bash",
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.stdout.startswith('{"timestamp"') and result.stdout.count("\n") == 1
    assert len(result.stdout) > 20000  # a row with its 20 kB answer
    stderr = (ws.root / "err.txt").read_text().splitlines()
    assert (ws.root / "status.txt").read_text().strip() == "5", stderr
    assert stderr[0].startswith("agentv: 60 cases of 'dataset'")
    assert all(line.startswith("[") for line in stderr[1:-1]), stderr  # progress lines, then one error line
    assert stderr[-1].startswith("error: stdout was closed (Broken pipe); the run was stopped after ")
    assert stderr[-1].endswith(" and its processes were killed")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_during_the_healthcheck_exits_130_and_kills_it(ws, tmp_path, sig):
    pid_file = tmp_path / "healthcheck.pid"
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.cli_target("cat {FILES}", extra=f"healthcheck:\n  command_template: sh -c 'echo $$ > {pid_file}; sleep 60'")
    proc = _spawn(["eval", path.name], ws.root)
    deadline = time.monotonic() + 20
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    stderr = stderr_of(proc, timeout=15)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert wait_dead(int(pid_file.read_text()))


def test_a_summary_into_a_closed_stdout_is_exit_5_not_a_gate_failure(ws):
    """`agentv eval ... | true`: the rows go to the file, the summary to a pipe nobody reads (Rich
    alone would exit 1, which reads as "gate failed")."""
    ws.cli_target("sh {FILES}")
    ws.cases_dataset([(f"c{i}", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}) for i in range(3)])
    proc = _spawn(["eval", "dataset.yaml", "--out", "out.jsonl"], ws.root)
    assert proc.stdout is not None
    proc.stdout.close()
    stderr = stderr_of(proc, timeout=30)
    assert proc.returncode == 5, stderr
    assert stderr.splitlines()[-1] == "error: stdout was closed before the output was complete"
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert len((ws.root / "out.jsonl").read_text().splitlines()) == 3
