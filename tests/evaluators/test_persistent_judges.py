"""`persistent: true` code judges: one long-lived judge process per run slot, the SDK's @judge
serving in a loop by itself, and every misbehaviour an evaluator error, never a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app

SDK_JUDGE = """
import os
from agentv_py.judge import JudgeInput, JudgeResult, judge

@judge
def check(inp: JudgeInput) -> JudgeResult:
    print("debug output")  # never corrupts the protocol
    ok = inp.get("a") == inp.get_expected("a")
    return JudgeResult(score=1.0 if ok else 0.0, details={"pid": os.getpid()}, misses=[] if ok else ["a"])
"""

RAW_JUDGE = """
import json, os, sys, time
mode = sys.argv[1]
if mode == "no-handshake":
    sys.exit(4)
print(json.dumps({"agentv_worker": 1}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    case = request["case_id"]
    if case == "hang" and mode == "hang":
        time.sleep(60)
    if case == "crash" and mode == "crash":
        print("judge crashed hard", file=sys.stderr, flush=True)
        os._exit(7)
    result = {"score": 0.5, "details": {"pid": os.getpid(), "has_payload": "candidate_answer" in request["payload"]}}
    if case == "bad-score":
        result = {"score": 7}
    print(json.dumps({"id": request["id"], "result": result}), flush=True)
"""


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def setup(ws, judge: str, ids: list[str], timeout: float = 20) -> None:
    ws.file("judge_sdk.py", SDK_JUDGE)
    ws.file("judge_raw.py", RAW_JUDGE)
    ws.targets("targets:\n  - {name: t, provider: mock, echo_expected: true}\n")
    cases = "".join(
        f"  - {{id: {i}, input_messages: [{{role: user, content: hi}}], "
        f"expected_messages: [{{role: assistant, content: {{a: 1}}}}]}}\n"
        for i in ids
    )
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n"
        f"    - {{name: j, type: code_judge, persistent: true, timeout_seconds: {timeout}, script: {judge}}}\n"
        "evalcases:\n" + cases
    )


def results(path: str = "run.jsonl") -> dict[str, dict]:
    out = {}
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        out[row["eval_id"]] = row["evaluator_results"][0]
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_sdk_judge_serves_every_case_from_one_process(ws):
    setup(ws, "[python3, judge_sdk.py]", [f"c{i}" for i in range(6)])
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    found = results()
    assert all(r["status"] == "processed" and r["score"] == 1.0 for r in found.values())
    pids = {r["details"]["pid"] for r in found.values()}
    assert len(pids) == 1 and not alive(pids.pop())  # one judge process, stopped with the run


def test_the_protocol_from_any_program(ws):
    setup(ws, "[python3, judge_raw.py, ok]", ["c1", "c2", "bad-score"])
    invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1")
    found = results()
    assert found["c1"]["score"] == 0.5 and found["c1"]["details"]["has_payload"] is True
    assert found["bad-score"]["status"] == "error"
    assert found["bad-score"]["reasoning"].startswith("code_judge 'j': ")
    assert "score" in found["bad-score"]["reasoning"]


@pytest.mark.parametrize(
    ("mode", "case", "error"),
    [
        ("hang", "hang", "code_judge 'j': worker gave no reply within 1 s (killed; a new one starts)"),
        ("crash", "crash", "code_judge 'j': worker closed its stdout (exit code 7): judge crashed hard"),
    ],
    ids=["hang", "crash"],
)
def test_a_failing_judge_process_is_an_error_and_is_replaced(ws, mode, case, error):
    setup(ws, f"[python3, judge_raw.py, {mode}]", ["c1", case, "c2"], timeout=1)
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--workers", "1")
    assert result.exit_code == 4, result.output
    found = results()
    assert (found[case]["status"], found[case]["reasoning"]) == ("error", error)
    assert found["c1"]["score"] == found["c2"]["score"] == 0.5
    assert found["c1"]["details"]["pid"] != found["c2"]["details"]["pid"]  # replaced after the failure


def test_a_judge_that_cannot_start(ws):
    setup(ws, "[python3, judge_raw.py, no-handshake]", ["c1"])
    invoke("eval", "dataset.yaml", "--out", "run.jsonl")
    assert results()["c1"]["reasoning"] == (
        "code_judge 'j': persistent judge could not start: worker exited before its handshake (exit code 4)"
    )


def test_persistent_and_target_do_not_go_together(ws):
    ws.targets("targets:\n  - {name: t, provider: mock, echo_expected: true}\n")
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n"
        "    - {type: code_judge, persistent: true, target: {max_calls: 2}, script: [python3, j.py]}\n"
        "evalcases:\n  - {id: c1, input_messages: [{role: user, content: hi}], "
        "expected_messages: [{role: assistant, content: x}]}\n"
    )
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert "a persistent code_judge cannot use 'target'" in result.stderr


def test_a_persistent_judge_outside_a_run_leaves_no_process(tmp_path):
    """An evaluator called on its own (no run, no process registry): the judge process serves the
    one request and is stopped with it; no pool outlives the call in the module."""
    from agentv_py.evaluators import EvalContext, code_judge, run_evaluator
    from agentv_py.models.evaluators import CodeJudgeConfig

    (tmp_path / "judge_raw.py").write_text(RAW_JUDGE)
    config = CodeJudgeConfig.model_validate(
        {"type": "code_judge", "name": "j", "persistent": True, "script": ["python3", "judge_raw.py", "ok"]}
    )
    context = EvalContext(eval_id="c1", dataset="d", dataset_dir=tmp_path, answer='{"a": 1}', expected={"a": 1})
    result = run_evaluator(config, context)
    assert result.status == "processed" and result.score == 0.5
    assert not alive(result.details["pid"])
    assert not any(isinstance(value, dict) for name, value in vars(code_judge).items() if name.endswith("POOLS"))
