"""Code judges written for AgentV (issue 12, point 6): agentv's payload carries every key AgentV
sent (agentv-reference §3.2), so a judge in the style of AgentV's SDK (`defineCodeJudge`: camelCase
conversion, then the SDK's input schema, §10) runs under `agentv eval` and scores as it did there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# A stand-in for `@agentv/eval`'s defineCodeJudge (2026-01-06): read stdin, convert every key to
# camelCase (keys starting with an uppercase letter untouched), validate the SDK's input schema,
# run the handler, print the result as pretty JSON; on any error print a score-0 object and exit 1.
AGENTV_SDK_JUDGE = r"""
import json
import re
import sys

ROLES = {"assistant", "user", "system", "tool"}


def camel(value):
    if isinstance(value, list):
        return [camel(v) for v in value]
    if isinstance(value, dict):
        return {
            (k if k[:1].isupper() else re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k)): camel(v)
            for k, v in value.items()
        }
    return value


def check_messages(name, messages):
    if not isinstance(messages, list):
        raise ValueError(f"{name}: expected array")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ValueError(f"{name}[{i}].role: invalid")
        content = message.get("content")
        ok = content is None or isinstance(content, (str, dict)) or (
            isinstance(content, list) and all(isinstance(item, dict) for item in content)
        )
        if not ok:
            raise ValueError(f"{name}[{i}].content: invalid")


def validate(inp):
    for key in ("question", "expectedOutcome", "candidateAnswer"):
        if not isinstance(inp.get(key), str):
            raise ValueError(f"{key}: Required string")
    for key in ("guidelineFiles", "inputFiles"):
        files = inp.get(key)
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ValueError(f"{key}: Required array of strings")
    check_messages("expectedMessages", inp.get("expectedMessages"))
    check_messages("inputMessages", inp.get("inputMessages"))
    if inp.get("outputMessages") is not None:
        check_messages("outputMessages", inp["outputMessages"])
    if inp.get("referenceAnswer") is not None and not isinstance(inp["referenceAnswer"], str):
        raise ValueError("referenceAnswer: Expected string")
    for key in ("traceSummary", "config"):
        if inp.get(key) is not None and not isinstance(inp[key], dict):
            raise ValueError(f"{key}: Expected object")


def handler(inp):
    expected = inp["expectedMessages"][-1]["content"]
    answer = json.loads(inp["candidateAnswer"])
    hits, misses = [], []
    for key, want in expected.items():
        got = answer.get(re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), key))
        (hits if got == want else misses).append(key)
    trace = inp.get("traceSummary") or {}
    return {
        "score": len(hits) / len(expected),
        "hits": hits,
        "misses": misses,
        "reasoning": f"{len(inp['guidelineFiles'])} guideline files, tools {trace.get('toolNames')}",
        "details": {"toolCallsByName": trace.get("toolCallsByName")},
    }


try:
    payload = camel(json.loads(sys.stdin.read()))
    validate(payload)
    result = handler(payload)
    result["score"] = min(1.0, max(0.0, result["score"]))
    print(json.dumps(result, indent=2))
except Exception as exc:
    failure = {"score": 0, "hits": [], "misses": [str(exc)], "reasoning": f"Evaluation failed: {exc}"}
    print(json.dumps(failure, indent=2))
    sys.exit(1)
"""

DATASET = """\
execution:
  target: t
  evaluators:
    - name: agentv_style
      type: code_judge
      script: [python3, judges/agentv_style.py]
evalcases:
  - id: plain
    expected_outcome: the gross total and currency are right
    input_messages: [{role: user, content: [{type: file, value: fx/plain.json}, {type: text, value: Extract.}]}]
    expected_messages: [{role: assistant, content: {gross_total: 5, currency: EUR}}]
  - id: tools
    expected_outcome: the gross total and currency are right
    input_messages: [{role: user, content: [{type: file, value: fx/tools.json}]}]
    expected_messages: [{role: assistant, content: {gross_total: 7, currency: USD}}]
"""

TOOLS_ENVELOPE = {
    "output_messages": [
        {"role": "assistant", "tool_calls": [{"tool": "readFile", "input": {"path": "inv.pdf"}}, {"tool": "ocr"}]},
        {"role": "assistant", "content": {"gross_total": 7, "currency": "GBP"}},
    ]
}


def agentv_eval(*args: str) -> subprocess.CompletedProcess[str]:
    agentv = Path(sys.executable).parent / "agentv"
    return subprocess.run([str(agentv), "eval", *args], capture_output=True, text=True, timeout=120)


def test_a_judge_in_agentv_sdk_style_scores_under_agentv_eval(ws):
    ws.file("judges/agentv_style.py", AGENTV_SDK_JUDGE)
    ws.file("fx/plain.json", json.dumps({"gross_total": 5, "currency": "EUR"}))
    ws.file("fx/tools.json", json.dumps(TOOLS_ENVELOPE))
    ws.cli_target("cat {FILES}")
    ws.dataset(DATASET)

    done = agentv_eval("dataset.yaml", "--out", "out.jsonl")

    assert done.returncode == 1, done.stderr  # `tools` scores 0.5: the gate fails, nothing errs
    rows = {row["eval_id"]: row for row in map(json.loads, Path("out.jsonl").read_text().splitlines())}
    plain = rows["plain"]["evaluator_results"][0]
    assert (plain["status"], plain["score"], plain["hits"], plain["misses"]) == (
        "processed",
        1.0,
        ["grossTotal", "currency"],
        [],
    )
    assert plain["reasoning"] == "0 guideline files, tools []"
    tools = rows["tools"]["evaluator_results"][0]
    assert (tools["status"], tools["score"], tools["hits"], tools["misses"]) == (
        "processed",
        0.5,
        ["grossTotal"],
        ["currency"],
    )
    assert tools["reasoning"] == "0 guideline files, tools ['ocr', 'readFile']"
    assert tools["details"] == {"toolCallsByName": {"readFile": 1, "ocr": 1}}


def test_the_same_judge_refuses_a_payload_without_agentv_keys(ws):
    """Why the keys are needed: without `guideline_files` (agentv's payload before issue 12) the
    SDK's schema check fails, and the judge exits 1 with AgentV's failure object."""
    judge = ws.file("judges/agentv_style.py", AGENTV_SDK_JUDGE)
    payload = {
        "question": "Extract.",
        "expected_outcome": "right",
        "expected_messages": [{"role": "assistant", "content": {"a": 1}}],
        "candidate_answer": '{"a": 1}',
        "input_files": [],
        "input_messages": [{"role": "user", "content": "Extract."}],
    }
    done = subprocess.run(
        [sys.executable, str(judge)], input=json.dumps(payload), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert json.loads(done.stdout) == {
        "score": 0,
        "hits": [],
        "misses": ["guidelineFiles: Required array of strings"],
        "reasoning": "Evaluation failed: guidelineFiles: Required array of strings",
    }
    done = subprocess.run(
        [sys.executable, str(judge)],
        input=json.dumps({**payload, "guideline_files": []}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, json.loads(done.stdout)["score"]) == (0, 1.0)
