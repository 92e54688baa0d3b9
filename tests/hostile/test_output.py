"""Results are never lost or mixed: unique default names, one writer per file, unwritable files
refused before anything runs, no half row left by a failed write (issue 11, point 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agentv_py.errors import ResultsFileError
from agentv_py.models.results import ResultRow
from agentv_py.recorder import open_results_file as _open_results
from agentv_py.report import jsonl
from agentv_py.report.jsonl import JsonlWriter, ResultsUnavailable, open_new_results
from tests.conftest import REPO_ROOT


def a_row(eval_id: str = "c1") -> ResultRow:
    return ResultRow(timestamp="t", eval_id=eval_id, dataset="d", target="t", status="ok", score=1.0, verdict="pass")


def test_runs_started_together_write_distinct_default_files(ws):
    ws.cli_target("sh {FILES}")
    ws.cases_dataset([("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2})])
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml"],
            cwd=ws.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    written = sorted((ws.root / ".agentv" / "results").glob("dataset_*.jsonl"))
    assert len(written) == 4
    for path in written:
        assert [json.loads(line)["eval_id"] for line in path.read_text().splitlines()] == ["c1"]


def test_a_default_name_taken_by_another_run_is_never_reused(tmp_path, monkeypatch):
    tags = iter(["1-aaaa", "1-aaaa", "1-bbbb"])
    real = jsonl.default_results_path

    def same_millisecond(dataset, now=None, root=None, tag=None):
        return real(dataset, jsonl.dt.datetime(2026, 1, 1, tzinfo=jsonl.dt.UTC), root, next(tags))

    monkeypatch.setattr(jsonl, "default_results_path", same_millisecond)
    first = open_new_results("d", root=tmp_path)
    second = open_new_results("d", root=tmp_path)  # draws 1-aaaa (taken: O_EXCL refuses it), then 1-bbbb
    assert first.path is not None and second.path is not None
    assert first.path.name == "d_20260101T000000.000Z_1-aaaa.jsonl"
    assert second.path.name == "d_20260101T000000.000Z_1-bbbb.jsonl"
    first.close()
    second.close()


def test_a_locked_file_is_refused_and_an_existing_one_is_kept_until_the_run_starts(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text("earlier\n")
    first = JsonlWriter(path)
    assert path.read_text() == "earlier\n"  # opened and locked, not yet emptied
    with pytest.raises(ResultsFileError) as caught:
        _open_results(str(path))
    assert caught.value.message == f"cannot write results to {path}: another agentv run is writing it"
    assert caught.value.hint == "wait for that run to finish, or pass another --out"
    assert caught.value.exit_code == 2
    first.write(a_row())
    assert path.read_text().startswith('{"timestamp"') and path.read_text().count("\n") == 1
    first.close()
    JsonlWriter(path).close()  # unlocked once closed


def test_a_created_file_is_removed_when_the_run_never_starts(tmp_path):
    path = tmp_path / "results" / "out.jsonl"
    JsonlWriter(path).close()
    assert not path.exists()


def test_no_permission_is_refused_before_anything_runs(tmp_path):
    """A directory the user cannot write to. Root may write anywhere, so the check runs in a forked
    child that gives up root (uid nobody) when the tests run as root."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        locked = base / "read-only"
        locked.mkdir(mode=0o555)
        os.chmod(locked, 0o555)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report the message (or what went wrong) and leave at once
            try:
                os.close(read)
                if os.getuid() == 0:
                    os.setgid(65534)
                    os.setuid(65534)
                try:
                    _open_results(str(locked / "out.jsonl"))
                    message = "opened"
                except ResultsFileError as exc:
                    message = f"{exc.exit_code} {exc.message}"
                os.write(write, message.encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            told = pipe.read().decode()
        os.waitpid(pid, 0)
        assert told == f"2 cannot write results to {locked / 'out.jsonl'}: Permission denied"
        assert not (locked / "out.jsonl").exists()
    finally:
        os.chmod(base / "read-only", 0o755)
        (base / "read-only").rmdir()
        base.rmdir()


@pytest.mark.parametrize(
    ("out", "reason"),
    [
        ("/dev/full", "a device, not a file (results go to a file, a pipe, a terminal or /dev/null)"),
        ("/dev/zero", "a device, not a file (results go to a file, a pipe, a terminal or /dev/null)"),
    ],
)
def test_devices_other_than_dev_null_are_refused(out, reason):
    with pytest.raises(ResultsUnavailable) as caught:
        JsonlWriter(out)
    assert caught.value.reason == reason


def test_dev_null_and_pipes_take_rows(tmp_path):
    with JsonlWriter(os.devnull) as writer:
        writer.write(a_row())
    read, write = os.pipe()
    try:
        with JsonlWriter(f"/proc/self/fd/{write}") as writer:  # what /dev/stdout is when stdout is a pipe
            writer.write(a_row("piped"))
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as pipe:
            read = -1
            assert json.loads(pipe.read())["eval_id"] == "piped"
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)


def test_a_fifo_nobody_reads_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ResultsFileError) as caught:
        _open_results(str(fifo))
    assert caught.value.message == f"cannot write results to {fifo}: a pipe nobody reads"


def test_out_dev_stdout_into_a_pipe_works(ws):
    ws.cli_target("sh {FILES}")
    ws.cases_dataset([("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2})])
    result = subprocess.run(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "/dev/stdout"],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0])["eval_id"] == "c1"


def test_an_unwritable_default_results_folder_is_exit_2_before_any_case_runs(ws, tmp_path):
    ran = tmp_path / "ran"
    ws.cli_target(f"sh -c 'touch {ran}; cat \"$0\"' {{FILES}}")
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.file(".agentv/results", "a file where the results folder should be")
    result = subprocess.run(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml"],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 2, result.stderr
    assert (
        result.stderr.splitlines()[-1] == f"error: cannot write results to {ws.root}/.agentv/results: Not a directory"
    )
    assert not ran.exists()
