"""`--executor ray` on a real local Ray instance (started by agentv, 2 CPUs here): the same rows
as the local executor, a worker that dies is that case's error row, Ctrl-C leaves valid JSONL, and
the problems before anything runs (no Ray, an unreachable cluster, a target Ray cannot run) are
clear errors, and nothing Ray prints reaches stdout (agentv's). Each eval runs in its own agentv
process: Ray's processes never touch pytest's."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import comparable_rows, wait_dead

pytest.importorskip("ray")  # a dev dependency: installed by the README's test command

AGENTV = str(Path(sys.executable).with_name("agentv"))
ANSWERS = [(f"c{i}", {"a": i, "b": "x"}, {"a": i, "b": "x" if i % 3 else "y"}) for i in range(8)]


# Ray's own lines: its log prefixes ("(raylet) ...", "(run_batch pid=12) ..."), its logger's format
# ("... WARNING authentication_token_setup.py:85 -- ..."), its banner, its dashboard address;
# not agentv's own words about Ray
RAY_SAYS = re.compile(r"ray|dashboard|pid=|\.py:\d+ --", re.IGNORECASE)
AGENTV_SAYS = ("(2 workers, Ray executor)", "the Ray task of the case failed", "Results written to: ray.jsonl")


def ray_lines(text: str) -> list[str]:
    """The lines of `text` that Ray wrote (not agentv about Ray)."""
    return [line for line in text.splitlines() if RAY_SAYS.search(line) and not any(s in line for s in AGENTV_SAYS)]


def agentv(ws, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAY_ADDRESS": "", "COLUMNS": "200"}
    env.pop("RAY_ADDRESS")
    return subprocess.run([AGENTV, *args], cwd=ws.root, env=env, capture_output=True, text=True, timeout=timeout)


def test_a_ray_run_gives_the_rows_of_a_local_run(ws):
    ws.file("target.sh", 'case "$1" in *c5.json) exit 7;; esac; cat "$1"\n')
    ws.cli_target("sh target.sh {FILES}")
    ws.cases_dataset(ANSWERS)
    local = agentv(ws, "eval", "dataset.yaml", "--out", "local.jsonl")
    ray = agentv(ws, "eval", "dataset.yaml", "--executor", "ray", "--workers", "2", "--out", "ray.jsonl")
    assert local.returncode == ray.returncode == 4, ray.stderr  # c5's target error, in both
    assert comparable_rows(ws.root / "ray.jsonl") == comparable_rows(ws.root / "local.jsonl")
    manifest = json.loads((ws.root / "ray.jsonl.meta.json").read_text())
    assert manifest["options"]["executor"] == "ray" and manifest["status"] == "completed"
    # stdout is agentv's summary, the local run's; without --verbose Ray says nothing on stderr either
    assert ray.stdout == local.stdout.replace("local.jsonl", "ray.jsonl")
    assert "Totals: 8 cases" in ray.stdout
    assert ray_lines(ray.stdout) == ray_lines(ray.stderr) == []


def test_a_task_whose_worker_dies_is_that_cases_error_row(ws):
    # case c2's target kills the Ray worker running it (its parent): the task is lost, not the run
    ws.file("target.sh", 'case "$1" in *c2.json) kill -9 $PPID; sleep 5;; esac; cat "$1"\n')
    ws.cli_target("sh target.sh {FILES}")
    ws.cases_dataset(ANSWERS[:4])
    args = ["--executor", "ray", "--workers", "2", "--out", "ray.jsonl", "--verbose"]
    result = agentv(ws, "eval", "dataset.yaml", *args)
    assert result.returncode == 4, result.stderr
    # Ray's driver prints the raylet's "A worker died or was killed ..." to stdout: with --verbose
    # it is a warning on stderr, never a line of agentv's stdout
    assert "Totals: 4 cases" in result.stdout
    assert ray_lines(result.stdout) == []
    assert [
        line for line in result.stderr.splitlines() if "(raylet)" in line and "warning: Ray (raylet): " not in line
    ] == []
    by_id = {row["eval_id"]: row for row in comparable_rows(ws.root / "ray.jsonl")}
    assert sorted(by_id) == ["c0", "c1", "c2", "c3"]
    assert by_id["c2"]["status"] == "error"
    assert by_id["c2"]["error"].startswith("the Ray task of the case failed: ")
    assert all(by_id[i]["status"] == "ok" for i in ("c0", "c1", "c3"))


def ray_eval(ws, out, **env: str) -> subprocess.Popen[str]:
    """`agentv eval dataset.yaml --executor ray --workers 2 --out OUT` in a child process."""
    return subprocess.Popen(
        [AGENTV, "eval", "dataset.yaml", "--executor", "ray", "--workers", "2", "--out", str(out)],
        cwd=ws.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_cancels_the_tasks_and_leaves_valid_jsonl(ws, sig):
    ws.file("target.sh", 'sleep 1; cat "$1"\n')
    ws.cli_target("sh target.sh {FILES}")
    ws.cases_dataset([(f"c{i}", {"a": 1, "b": "x"}, {"a": 1, "b": "x"}) for i in range(30)])
    out = ws.root / "ray.jsonl"
    process = ray_eval(ws, out)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 2):
        time.sleep(0.2)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Fatal Python error" not in stderr and "Traceback" not in stderr, stderr
    lines = out.read_text().splitlines()
    assert 2 <= len(lines) < 30
    assert all(json.loads(line)["status"] == "ok" for line in lines)  # every line whole
    assert json.loads((ws.root / "ray.jsonl.meta.json").read_text())["status"] == "interrupted"


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1", "RAY_ADDRESS": None}).invoke(app, list(args))


def test_without_ray_installed_the_extra_is_named(ws, monkeypatch):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(ANSWERS[:1])
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails
    result = invoke("eval", "dataset.yaml", "--executor", "ray", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --executor ray needs the 'ray' extra (ray is not installed): pip install 'agentv-py[ray]'"
    ]


def test_an_unreachable_cluster_is_an_error_at_once(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(ANSWERS[:1])
    started = time.monotonic()
    result = agentv(ws, "eval", "dataset.yaml", "--executor", "ray", "--ray-address", "127.0.0.1:1", "--out", "o.jsonl")
    assert result.returncode == 2
    assert "error: cannot reach the Ray cluster at 127.0.0.1:1: Connection refused" in result.stderr.splitlines()
    assert time.monotonic() - started < 60


@pytest.mark.parametrize(
    "args, message",
    [
        (["--executor", "threads"], "error: invalid --executor 'threads': choose local or ray"),
        (["--ray-address", "auto"], "error: --ray-address goes with --executor ray"),
    ],
    ids=["unknown-executor", "address-without-ray"],
)
def test_executor_usage_errors(ws, args, message):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(ANSWERS[:1])
    result = invoke("eval", "dataset.yaml", *args, "--out", "o.jsonl")
    assert result.exit_code == 2 and result.stderr.splitlines()[0] == message


def test_a_worker_mode_target_is_refused_before_anything_runs(ws):
    ws.cli_target("python3 -c 'import sys'", extra="mode: worker")
    ws.cases_dataset(ANSWERS[:1])
    result = invoke("eval", "dataset.yaml", "--executor", "ray", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "error: --executor ray: target 't' keeps a long-lived worker (mode: worker, provider: python), which a "
        "Ray task would start for every case; run it with the local executor"
    )


def test_a_worker_mode_judge_target_is_refused_before_anything_runs(ws):
    ws.file(
        ".agentv/targets.yaml",
        "targets:\n  - {name: t, provider: cli, command_template: 'cat {FILES}', judge_target: j}\n"
        "  - {name: j, provider: python, callable: 'judging:reply'}\n",
    )
    ws.file(
        "dataset.yaml",
        "execution:\n  target: t\n  evaluators:\n    - {name: llm, type: llm_judge}\n"
        "evalcases:\n  - {id: c1, input: q, expected_output: a}\n",
    )
    result = invoke("eval", "dataset.yaml", "--executor", "ray", "--out", "o.jsonl")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == (
        "error: --executor ray: judge target 'j' keeps a long-lived worker (mode: worker, provider: python), "
        "which a Ray task would start for every case; run it with the local executor"
    )
    assert not (ws.root / "o.jsonl").exists()


def test_the_local_executor_never_imports_ray(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(ANSWERS[:2])
    probe = (
        "import sys\n"
        "from agentv_py.cli import app\n"
        "try:\n"
        "    app(['eval', 'dataset.yaml', '--out', 'o.jsonl'], standalone_mode=False)\n"
        "finally:\n"
        "    print('ray' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ws.root, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_leaves_no_target_process_behind(ws, sig):
    """The tasks in flight are cancelled so that their runs kill what they started: no target
    process outlives an interrupted Ray run, not even one the target's own command started."""
    ws.file(
        "target.sh",
        'case "$1" in *c0.json|*c1.json|*c2.json) ;; *) echo $$ >> "$PIDS"; sleep 60 & echo $! >> "$PIDS"; wait;; '
        'esac; cat "$1"\n',
    )
    ws.cli_target("sh target.sh {FILES}")
    ws.cases_dataset([(f"c{i}", {"a": 1, "b": "x"}, {"a": 1, "b": "x"}) for i in range(8)])
    out, pids = ws.root / "ray.jsonl", ws.root / "pids"
    process = ray_eval(ws, out, PIDS=str(pids))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < 4):
        time.sleep(0.2)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    started = [int(pid) for pid in pids.read_text().split()]
    assert started and all(wait_dead(pid, 10) for pid in started), started


def test_sigterm_while_ray_starts_is_an_interrupt(ws):
    """SIGTERM during `ray.init` (seconds long): exit 130 like Ctrl-C, not Ray's `exit 15`."""
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(ANSWERS[:2])
    process = ray_eval(ws, ws.root / "ray.jsonl")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(process.pid), "-f", "raylet"], capture_output=True, text=True)
        if found.stdout.strip():
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "Fatal Python error" not in stderr, stderr


# A code judge that asks the target proxy for other targets of the targets file by name.
PROXY_JUDGE = r"""
import json, sys
from agentv_py.judge import TargetInvocationError, target_client

json.load(sys.stdin)
client = target_client()
asked = {}
for name in ["other", "unset_one", "nope"]:
    try:
        asked[name] = client.invoke({"question": "q?", "target": name}).raw_text
    except TargetInvocationError as exc:
        asked[name] = [str(exc), exc.status_code]
print(json.dumps({"score": 1 if asked["other"] == "from other" else 0, "details": {"asked": asked}}))
"""


def test_a_judge_calling_another_target_scores_the_same_under_ray(ws):
    """The proxy's catalog (every target of the targets file) travels to the Ray tasks: the rows
    are the local executor's, the unset variable's and the unknown name's errors included."""
    ws.file("judge.py", PROXY_JUDGE)
    ws.file(
        ".agentv/targets.yaml",
        "targets:\n"
        "  - {name: default, provider: mock, response: Paris}\n"
        "  - {name: judge, provider: mock, response: from judge}\n"
        "  - {name: other, provider: mock, response: from other}\n"
        "  - {name: unset_one, provider: openai, model: m, api_key: '${{ AGENTV_TEST_UNSET }}'}\n",
    )
    ws.file(
        "dataset.yaml",
        "execution:\n  target: default\n  evaluators:\n"
        f"    - {{name: proxy, type: code_judge, script: [{sys.executable}, judge.py], target: {{name: judge}}}}\n"
        "evalcases:\n"
        + "".join(f"  - {{id: c{i}, input: Capital of France?, expected_output: Paris}}\n" for i in range(3)),
    )
    local = agentv(ws, "eval", "dataset.yaml", "--out", "local.jsonl")
    ray = agentv(ws, "eval", "dataset.yaml", "--executor", "ray", "--workers", "2", "--out", "ray.jsonl")
    assert local.returncode == ray.returncode == 0, ray.stderr
    rows = comparable_rows(ws.root / "ray.jsonl")
    assert rows == comparable_rows(ws.root / "local.jsonl")
    asked = rows[0]["evaluator_results"][0]["details"]["asked"]
    assert asked["other"] == "from other" and rows[0]["score"] == 1.0
    assert "AGENTV_TEST_UNSET is not set" in asked["unset_one"][0]
    assert asked["nope"][0].startswith("target proxy /invoke: Unknown target 'nope'. Available: ")
