"""run_process: own session, capped capture, group kill, no hang from grandchildren."""

from __future__ import annotations

import sys
import time

import pytest

from agentv_py.process.spawn import run_process
from tests.conftest import script, wait_dead


def test_captures_stdout_stderr_and_exit_code():
    result = run_process(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (result.returncode, result.stdout, result.stderr) == (3, b"out\n", b"err\n")
    assert not result.ok and not result.timed_out


def test_timeout_kills_the_whole_group_including_a_grandchild_that_ignores_sigterm(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = run_process(["sh", script("grandchild_hang.sh"), str(pid_file)], timeout=0.5, kill_grace=0.2)
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert elapsed < 5  # returns promptly: no wait for the 60 s sleeps
    assert wait_dead(int(pid_file.read_text()))


def test_grandchild_holding_the_pipe_does_not_keep_the_run_waiting(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = run_process(["sh", script("grandchild_orphan.sh"), str(pid_file)], timeout=30)
    assert time.monotonic() - started < 5
    assert result.ok and result.stdout == b'{"ok": true}\n'
    assert wait_dead(int(pid_file.read_text()))  # left-overs in the group are killed


def test_output_cap_stops_a_flood():
    result = run_process(["sh", script("flood.sh")], timeout=30, output_cap=10 * 1024 * 1024)
    assert result.overflow and not result.ok
    assert len(result.stdout) <= 10 * 1024 * 1024 + 65536


def test_stdin_is_delivered_in_full():
    payload = b"x" * 300_000
    result = run_process(["cat"], timeout=10, stdin=payload)
    assert result.stdout == payload


def test_a_command_that_ignores_stdin_is_fine():
    result = run_process(["true"], timeout=10, stdin=b"y" * 2_000_000)
    assert result.ok


def test_missing_program_is_a_result_not_an_exception():
    result = run_process(["definitely-not-a-program-xyz"], timeout=10)
    assert result.spawn_error == "command not found: definitely-not-a-program-xyz (not on PATH)"


def test_stderr_tail_is_one_line():
    result = run_process(["sh", script("crash.sh")], timeout=10)
    assert result.stderr_tail() == "loading model | boom: extractor crashed on page 2"


@pytest.mark.parametrize("cwd_exists", [True, False])
def test_cwd(tmp_path, cwd_exists):
    cwd = tmp_path if cwd_exists else tmp_path / "missing"
    result = run_process(["pwd"], timeout=10, cwd=cwd)
    if cwd_exists:
        assert result.stdout.decode().strip() == str(tmp_path)
    else:
        assert result.spawn_error is not None and "No such file or directory" in result.spawn_error


LOUD_TARGET = (
    "import sys\n"
    "chunk = b'x' * 1023 + b'\\n'\n"
    "for _ in range(20 * 1024):\n"  # 20 MB of logging, twice the output cap
    "    sys.stderr.buffer.write(chunk)\n"
    "sys.stderr.buffer.write(b'last log line\\n')\n"
    "sys.stdout.write('{\"total\": 5}')\n"
)


def test_a_target_that_logs_20_mb_to_stderr_is_not_failed_and_its_tail_is_kept():
    result = run_process([sys.executable, "-c", LOUD_TARGET], timeout=60)
    assert result.ok and not result.overflow and result.returncode == 0
    assert result.stdout == b'{"total": 5}'
    assert len(result.stderr) <= 2 * 64 * 1024  # bounded: only the tail is held
    assert result.stderr.endswith(b"last log line\n")
    assert result.stderr_tail().endswith("last log line")


def test_stdout_keeps_its_cap_while_stderr_does_not_have_one():
    flood = "import sys\nsys.stderr.buffer.write(b'e' * 3_000_000)\nsys.stdout.buffer.write(b'o' * 3_000_000)\n"
    result = run_process([sys.executable, "-c", flood], timeout=60, output_cap=1024 * 1024)
    assert result.overflow and not result.ok
    assert result.abnormal_end(60, 1024 * 1024) == "output exceeded the 1 MB cap (process group killed)"
