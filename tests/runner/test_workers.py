"""Worker mode (`mode: worker` cli targets) and `provider: python`: real worker processes,
started once per slot, each misbehaviour an error row with its reason, never a hang or a
mixed-up answer, and no process left behind."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import script

WORKER = script("hostile_worker.py")


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def rows(path: str = "run.jsonl") -> dict[str, dict]:
    return {row["eval_id"]: row for row in map(json.loads, Path(path).read_text().splitlines())}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def worker_dataset(ws, mode: str, ids=("c1", "c2", "bad", "c3", "c4"), timeout: float = 20) -> None:
    ws.cli_target(f"{sys.executable} {WORKER} {mode}", extra=f"mode: worker\ntimeout_seconds: {timeout}")
    ws.cases_dataset([(case_id, {"a": 1, "b": 2}, {"a": 1, "b": 2}) for case_id in ids])


def test_one_worker_answers_every_case_and_is_stopped_at_the_end(ws):
    worker_dataset(ws, "ok")
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    found = rows()
    pids = {json.loads(row["candidate_answer"])["pid"] for row in found.values()}
    assert len(found) == 5 and len(pids) == 1  # one worker, started once, asked five times
    assert not alive(pids.pop())


def test_two_slots_start_two_workers_lazily(ws):
    worker_dataset(ws, "ok", ids=tuple(f"c{i}" for i in range(8)))
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "2").exit_code == 0
    pids = {json.loads(row["candidate_answer"])["pid"] for row in rows().values()}
    assert 1 <= len(pids) <= 2 and not any(alive(pid) for pid in pids)


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        (
            "garbage",
            "target 't' failed: worker replied with a line that is not a JSON object: this is not json: stderr of bad",
        ),
        ("wrong-id", 'target \'t\' failed: worker replied to request "someone-else", not to "2": stderr of bad'),
        ("close-stdout", "target 't' failed: worker closed its stdout: killed by SIGKILL: stderr of bad"),
        ("crash", "target 't' failed: worker closed its stdout (exit code 9): stderr of bad"),
        ("error", "target 't' failed: the model refused second line (stderr of bad)"),
        ("deep", "target 't' failed: worker replied with JSON nested too deeply to read"),
        ("big-int", "target 't' failed: worker replied with JSON holding an integer longer than 4300 digits"),
    ],
    ids=["garbage", "wrong-id", "close-stdout", "crash", "error-reply", "deep", "big-int"],
)
def test_a_misbehaving_worker_fails_that_case_only(ws, mode, error):
    worker_dataset(ws, mode)
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1", "--max-retries", "0")
    assert result.exit_code == 4, result.output
    found = rows()
    assert found["bad"]["status"] == "error"
    assert found["bad"]["error"] == error
    for case_id in ("c1", "c2", "c3", "c4"):  # the others answered, each with its own answer
        assert found[case_id]["status"] == "ok" and found[case_id]["score"] == 1.0, found[case_id]
    pids = {json.loads(row["candidate_answer"])["pid"] for row in found.values() if row["status"] == "ok"}
    if mode not in ("error", "deep", "big-int"):  # a whole reply it could not read keeps the worker
        assert len(pids) == 2  # the worker was replaced after the bad case
    assert not any(alive(pid) for pid in pids)


def test_a_worker_that_answers_twice_never_mixes_answers(ws):
    worker_dataset(ws, "twice")
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1", "--max-retries", "0")
    found = rows()
    assert found["bad"]["status"] == "ok"  # its first reply was its answer
    # the stale second reply reached the next request: refused, that worker replaced
    assert found["c3"]["status"] == "error"
    assert found["c3"]["error"].startswith('target \'t\' failed: worker replied to request "2", not to "3"')
    assert found["c4"]["status"] == "ok"
    assert result.exit_code == 4


def test_a_worker_that_never_answers_is_killed_at_the_timeout(ws):
    worker_dataset(ws, "hang", ids=("c1", "bad", "c2"), timeout=1)
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1", "--max-retries", "0")
    assert result.exit_code == 4, result.output
    found = rows()
    assert found["bad"]["error"] == (
        "target 't' failed: worker gave no reply within 1 s (killed; a new one starts): stderr of bad"
    )
    assert found["c2"]["status"] == "ok"


def test_the_output_file_reply(ws):
    worker_dataset(ws, "output-file", ids=("bad",))
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl").exit_code == 0
    assert json.loads(rows()["bad"]["candidate_answer"])["a"] == 1


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        (
            "exit-at-start",
            "error: target 't' worker could not start: worker exited before its handshake "
            "(exit code 3): cannot load the model",
        ),
        (
            "no-handshake",
            "error: target 't' worker could not start: worker did not start with the handshake "
            '{"agentv_worker": 1}: its first line was {"hello": "world"} (docs/workers.md)',
        ),
    ],
    ids=["exit-at-start", "no-handshake"],
)
def test_a_worker_that_cannot_start_stops_the_run_before_any_case(ws, mode, message):
    worker_dataset(ws, mode, timeout=5)
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == message
    assert not Path("run.jsonl").exists() or Path("run.jsonl").read_text() == ""


def test_a_worker_command_takes_no_per_case_placeholder(ws):
    ws.cli_target("python3 w.py {PROMPT}", extra="mode: worker")
    ws.cases_dataset([("c1", {"a": 1}, {"a": 1})])
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert "with mode: worker the command starts the worker once, so it takes no per-case placeholder ({PROMPT})" in (
        result.stderr
    )


PACKAGE = """
import asyncio, json, os, time
time.sleep(0.1)  # a slow import

def extract(request):
    print("printed by the function")  # stderr: never the protocol
    with open(request["files"][0]) as handle:
        return {**json.load(handle), "pid": os.getpid(), "case": request["case_id"]}

async def extract_async(request):
    await asyncio.sleep(0)
    return extract(request)

def boom(request):
    raise RuntimeError("no model for " + request["case_id"])

def noisy(request):  # stdout at every level: none of it may reach the protocol
    import subprocess, sys
    print("print", flush=True)
    sys.__stdout__.write("sys.__stdout__\\n"); sys.__stdout__.flush()
    os.write(1, b"os.write to descriptor 1\\n")
    subprocess.run(["echo", "a child process"], check=True)
    return {"a": float("nan"), "b": 2}
"""


@pytest.mark.parametrize("function", ["extract", "extract_async"])
def test_provider_python_calls_the_function_in_workers(ws, function):
    ws.file("src/extractor/__init__.py", PACKAGE)
    ws.targets(f"targets:\n  - name: t\n    provider: python\n    callable: extractor:{function}\n    path: src\n")
    ws.cases_dataset([(f"c{i}", {"a": 1, "b": 2}, {"a": 1, "b": 2}) for i in range(4)])
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    answers = [json.loads(row["candidate_answer"]) for row in rows().values()]
    assert sorted(a["case"] for a in answers) == ["c0", "c1", "c2", "c3"]
    assert len({a["pid"] for a in answers}) == 1 and answers[0]["pid"] != os.getpid()  # never in agentv's process


def test_provider_python_errors(ws):
    ws.file("src/extractor/__init__.py", PACKAGE)
    ws.file("src/broken.py", "raise ImportError('the model weights are missing')\n")
    ws.targets(
        "targets:\n"
        "  - {name: t, provider: python, callable: 'extractor:boom', path: src}\n"
        "  - {name: nofunc, provider: python, callable: 'extractor:nothing', path: src}\n"
        "  - {name: broken, provider: python, callable: 'broken:run', path: src}\n"
        "  - {name: nomodule, provider: python, callable: 'nowhere:run', path: src}\n"
    )
    ws.cases_dataset([("c1", {"a": 1}, {"a": 1})])
    raised = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--max-retries", "0")
    assert raised.exit_code == 4
    assert rows()["c1"]["error"] == "target 't' failed: RuntimeError: no model for c1 (RuntimeError: no model for c1)"
    for target, message in [
        ("nofunc", "worker exited before its handshake (exit code 2): extractor has no 'nothing'"),
        (
            "broken",
            "worker exited before its handshake (exit code 2): cannot import broken: "
            "ImportError: the model weights are missing",
        ),
        (
            "nomodule",
            "worker exited before its handshake (exit code 2): cannot import nowhere: "
            "ModuleNotFoundError: No module named 'nowhere'",
        ),
    ]:
        result = invoke("eval", "dataset.yaml", "--target", target, "--out", f"{target}.jsonl")
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines()[0] == f"error: target '{target}' worker could not start: {message}"
    ws.targets("targets:\n  - {name: t, provider: python, callable: 'just_a_module'}\n")
    bad = invoke("validate", "dataset.yaml")
    assert bad.exit_code == 2
    assert "callable must be 'package.module:function', got 'just_a_module'" in bad.stderr


def test_an_interrupted_run_leaves_no_worker_behind(ws, tmp_path):
    """SIGINT while a worker is busy: exit 130, valid rows so far, every worker process gone."""
    import signal
    import subprocess
    import time

    pids = tmp_path / "pids"
    pids.mkdir()
    worker_dataset(ws, "hang", ids=("c1", "c2", "bad", "c3"), timeout=60)
    env = {**os.environ, "WORKER_PIDS": str(pids)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "2"],
        cwd=ws.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    results = Path(ws.root / "run.jsonl")

    def written() -> int:
        return len(results.read_text().splitlines()) if results.exists() else 0

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and written() < 3:  # c1, c2, c3 answered; bad hangs
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    started = [int(name.name) for name in pids.iterdir()]
    assert started and not any(alive(pid) for pid in started)
    for line in results.read_text().splitlines():
        json.loads(line)  # every row whole


def test_a_worker_that_stops_reading_cannot_hang_the_run(ws):
    """A request over the 64 KB a pipe holds, to a worker that never reads: the write has the
    case's deadline, the worker is killed and replaced, and every case gets its row."""
    ws.cli_target(f"{sys.executable} {WORKER} stop-reading", extra="mode: worker\ntimeout_seconds: 2")
    big = "x" * 200_000
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\nevalcases:\n"
        + "".join(f"  - id: {c}\n    input: {big}\n    expected_output: {{a: 1}}\n" for c in ("c1", "c2"))
    )
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1", "--max-retries", "0")
    assert result.exit_code == 4, result.output
    found = rows()
    assert sorted(found) == ["c1", "c2"]
    for row in found.values():
        assert (
            row["error"] == "target 't' failed: worker did not read its request within 2 s (killed; a new one starts)"
        )


def test_a_worker_that_closes_its_stdin_is_replaced_with_the_reason(ws):
    worker_dataset(ws, "close-stdin", ids=("c1", "c2"), timeout=5)
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1", "--max-retries", "0")
    assert result.exit_code == 4, result.output
    assert "internal error" not in result.output
    for row in rows().values():
        assert row["error"] == "target 't' failed: worker closed its stdin (still running: killed; a new one starts)"


def test_a_python_callables_own_output_never_reaches_the_protocol_and_nan_is_kept(ws):
    """Descriptor-level isolation: print, sys.__stdout__, os.write(1, ...) and a child process all
    write to stderr; the answer's NaN is recorded as the worker said it, not as null."""
    ws.file("src/extractor/__init__.py", PACKAGE)
    ws.targets("targets:\n  - {name: t, provider: python, callable: 'extractor:noisy', path: src}\n")
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2}), ("c2", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1", "--max-retries", "0")
    found = rows()
    assert sorted(found) == ["c1", "c2"] and all(row["status"] == "ok" for row in found.values()), result.output
    assert all(row["candidate_answer"] == '{"a":NaN,"b":2}' for row in found.values())


def test_workers_the_start_check_started_belong_to_the_run(ws):
    """The start check's workers are handed to the run (no module keeps them): a run adopts them,
    and closing the handle stops those no run took."""
    from agentv_py.models.targets import PythonTarget
    from agentv_py.runner.target_checks import run_healthcheck

    ws.file("src/extractor/__init__.py", PACKAGE)
    config = PythonTarget.model_validate(
        {"name": "t", "provider": "python", "callable": "extractor:extract", "path": ["src"]}
    )
    warm = run_healthcheck(config, ws.root, [], slots=2)
    assert warm is not None
    started = list(warm._workers)
    assert len(started) == 2 and all(worker.alive for worker in started)
    assert warm.take(("other",)) == []  # another target's key takes nothing
    warm.close()
    assert not any(worker.alive for worker in started)
    assert warm.take(warm._key) == []


SERVE = """
import json, os, sys
from agentv_py.worker import serve

def extract(request):
    with open(request["files"][0]) as handle:
        return {**json.load(handle), "python": sys.executable}

serve(extract)
"""


@pytest.mark.parametrize("python", ["python3", "base"], ids=["python3-on-path", "a-python-without-agentv"])
def test_a_worker_command_imports_agentv_py_whatever_python_runs_it(ws, python):
    """`mode: worker` starts like a code judge: agentv's interpreter first on PATH (`python3` is
    agentv's Python) and `agentv_py` on PYTHONPATH (so even another Python imports the helper)."""
    base = os.path.join(sys.base_prefix, "bin", "python3")
    program = base if python == "base" else "python3"
    ws.file("w.py", SERVE)
    ws.cli_target(f"{program} w.py", extra="mode: worker")
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl")
    assert result.exit_code == 0, result.output
    answer = json.loads(rows()["c1"]["candidate_answer"])
    if python == "python3":
        assert os.path.dirname(answer["python"]) == os.path.dirname(sys.executable)
    else:
        assert answer["python"] != sys.executable
