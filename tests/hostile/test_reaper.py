"""Issue 11, point 8: no process outlives the run, even one that double-forks and calls `setsid`.

Targets, code judges and healthchecks here start a `sleep 60` grandchild that leaves their
process group and session (double fork, `setsid`, stdio closed, as a daemon does) and write its
pid. It must be dead (and reaped: no zombie) shortly after the command that started it ends —
while the run goes on — and when a run is stopped. Processes the host program started itself are
never touched.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentv_py import run_eval
from agentv_py.process.spawn import ProcessRegistry, run_process
from tests.conftest import REPO_ROOT, process_alive, stderr_of, wait_dead

# argv: PID_FILE [then]; `then` = "sleep" keeps the command itself running afterwards.
DAEMON = """
import os, sys, time
pid_file = sys.argv[1]
if not os.path.exists(pid_file):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            with open(pid_file + ".tmp", "w") as handle:
                handle.write(str(os.getpid()))
            os.rename(pid_file + ".tmp", pid_file)
            os.execvp("sleep", ["sleep", "60"])
        os._exit(0)
    os.wait()
    while not os.path.exists(pid_file):
        time.sleep(0.01)
if sys.argv[2:] == ["sleep"]:
    time.sleep(60)
"""

# argv: PID_FILE; prints {"a": "dead"} once that pid is gone (or {"a": "alive"} after 10 s).
CHECK = """
import json, os, sys, time
pid = int(open(sys.argv[1]).read())
def alive():
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
deadline = time.monotonic() + 10
while alive() and time.monotonic() < deadline:
    time.sleep(0.02)
print(json.dumps({"a": "alive" if alive() else "dead"}))
"""


def reaped(pid: int, seconds: float = 5.0) -> bool:
    """True once `pid` is gone from /proc: dead and reaped, not a zombie."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not os.path.exists(f"/proc/{pid}"):
            return True
        time.sleep(0.02)
    return False


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    (tmp_path / "daemon.py").write_text(DAEMON)
    (tmp_path / "check.py").write_text(CHECK)
    return tmp_path


def _daemon_pid(pid_file: Path) -> int:
    return int(pid_file.read_text())


def test_a_setsid_grandchild_is_killed_and_reaped_when_its_command_ends(scripts):
    pid_file = scripts / "daemon.pid"
    result = run_process([sys.executable, str(scripts / "daemon.py"), str(pid_file)], timeout=30)
    assert result.ok, result.stderr
    pid = _daemon_pid(pid_file)
    try:
        assert reaped(pid)
    finally:
        _kill(pid)


def test_processes_the_host_started_itself_are_left_alone(scripts):
    host = [
        subprocess.Popen(["sleep", "60"]),
        subprocess.Popen(["sleep", "60"], start_new_session=True),
    ]
    pid_file = scripts / "daemon.pid"
    try:
        run_process([sys.executable, str(scripts / "daemon.py"), str(pid_file)], timeout=30)
        registry = ProcessRegistry()
        registry.close()
        assert reaped(_daemon_pid(pid_file))
        time.sleep(0.2)
        assert [proc.poll() for proc in host] == [None, None]
        assert all(process_alive(proc.pid) for proc in host)
    finally:
        for proc in host:
            proc.kill()
            proc.wait()


def test_closing_a_runs_registry_kills_what_its_running_commands_left_outside_their_group(scripts):
    pid_file = scripts / "daemon.pid"
    registry = ProcessRegistry()
    results = []
    worker = threading.Thread(
        target=lambda: results.append(
            run_process(
                [sys.executable, str(scripts / "daemon.py"), str(pid_file), "sleep"], timeout=60, registry=registry
            )
        )
    )
    worker.start()
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = _daemon_pid(pid_file)
    try:
        assert process_alive(pid)  # the command is still running: its daemon is left alone
        registry.close()
        assert wait_dead(pid)
        worker.join(10)
        assert not worker.is_alive() and results[0].returncode == -signal.SIGKILL
        assert reaped(pid)
    finally:
        _kill(pid)


def _dataset(ws, *, target: str, case_files: list[str], evaluators: list[dict], extra: str = "") -> None:
    ws.cli_target(target, extra=extra)
    cases = [
        {
            "id": f"c{i}",
            "input_messages": [{"role": "user", "content": [{"type": "file", "value": name}]}],
            "expected_output": {"a": "dead"},
        }
        for i, name in enumerate(case_files, 1)
    ]
    ws.file("dataset.yaml", json.dumps({"execution": {"target": "t", "evaluators": evaluators}, "evalcases": cases}))


FIELD_A = {"type": "field_accuracy", "fields": [{"path": "a"}]}


def test_a_targets_daemon_is_dead_before_the_next_case_starts(ws, scripts):
    """Case 1's target leaves a daemon; case 2's target (one worker: it runs after case 1)
    finds it already dead."""
    pid_file = scripts / "daemon.pid"
    ws.file("c1.sh", f'{sys.executable} {scripts / "daemon.py"} {pid_file}; echo \'{{"a": "dead"}}\'\n')
    ws.file("c2.sh", f"{sys.executable} {scripts / 'check.py'} {pid_file}\n")
    _dataset(ws, target="sh {FILES}", case_files=["c1.sh", "c2.sh"], evaluators=[FIELD_A])
    try:
        result = run_eval("dataset.yaml", out="out.jsonl", workers=1)
        assert [(row.eval_id, row.score, row.candidate_answer) for row in result.rows] == [
            ("c1", 1.0, '{"a": "dead"}\n'),
            ("c2", 1.0, '{"a": "dead"}\n'),
        ]
        assert reaped(_daemon_pid(pid_file))
    finally:
        _kill(_daemon_pid(pid_file))


def test_a_code_judges_daemon_is_dead_before_the_next_case_starts(ws, scripts):
    pid_file = scripts / "daemon.pid"
    ws.file(
        "judge.sh",
        f"cat > /dev/null; {sys.executable} {scripts / 'daemon.py'} {pid_file}; echo '{{\"score\": 1.0}}'\n",
    )
    ws.file("c1.sh", 'echo \'{"a": "dead"}\'\n')
    ws.file("c2.sh", f"{sys.executable} {scripts / 'check.py'} {pid_file}\n")
    judge = {"name": "j", "type": "code_judge", "script": ["sh", "judge.sh"]}
    _dataset(ws, target="sh {FILES}", case_files=["c1.sh", "c2.sh"], evaluators=[FIELD_A, judge])
    try:
        result = run_eval("dataset.yaml", out="out.jsonl", workers=1)
        assert [(row.eval_id, row.score) for row in result.rows] == [("c1", 1.0), ("c2", 1.0)]
        assert reaped(_daemon_pid(pid_file))
    finally:
        _kill(_daemon_pid(pid_file))


def test_a_healthchecks_daemon_is_dead_before_the_first_case_starts(ws, scripts):
    pid_file = scripts / "daemon.pid"
    ws.file("c1.sh", f"{sys.executable} {scripts / 'check.py'} {pid_file}\n")
    healthcheck = f"healthcheck:\n  command_template: {sys.executable} {scripts / 'daemon.py'} {pid_file}"
    _dataset(ws, target="sh {FILES}", case_files=["c1.sh"], evaluators=[FIELD_A], extra=healthcheck)
    try:
        result = run_eval("dataset.yaml", out="out.jsonl")
        assert [(row.eval_id, row.score) for row in result.rows] == [("c1", 1.0)]
        assert reaped(_daemon_pid(pid_file))
    finally:
        _kill(_daemon_pid(pid_file))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_during_a_daemonizing_healthcheck_exits_130_and_leaves_nothing(ws, scripts, sig):
    pid_file = scripts / "daemon.pid"
    ws.file("c1.sh", 'echo \'{"a": "dead"}\'\n')
    healthcheck = f"healthcheck:\n  command_template: {sys.executable} {scripts / 'daemon.py'} {pid_file} sleep"
    _dataset(ws, target="sh {FILES}", case_files=["c1.sh"], evaluators=[FIELD_A], extra=healthcheck)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml"],
        cwd=ws.root,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = _daemon_pid(pid_file)
    try:
        proc.send_signal(sig)
        stderr = stderr_of(proc, timeout=15)
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr
        assert wait_dead(pid)
    finally:
        _kill(pid)
