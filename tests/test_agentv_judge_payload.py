"""Code judges written for AgentV (issue 12, point 6): agentv's payload carries every key AgentV
sent (agentv-reference §3.2), so a judge in the style of AgentV's SDK (`defineCodeJudge`: camelCase
conversion, then the SDK's input schema, §10) runs under `agentv eval` and scores as it did there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# A stand-in for `@agentv/eval`'s defineCodeJudge (2026-01-06): read stdin, convert every key to
# camelCase (keys starting with an uppercase letter untouched), validate the SDK's input schema,
# run the handler, print the result as pretty JSON; on any error print a score-0 object and exit 1.
AGENTV_SDK_JUDGE = r"""
import json

import pytest
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


# -- every AgentV key as AgentV converted it (agentv-reference §3.2, §5), pure ---------------------

from agentv_py.evaluators.base import EvalContext, reference_answer  # noqa: E402
from agentv_py.evaluators.judge_payload import build_payload  # noqa: E402
from agentv_py.models.dataset import EvalCase  # noqa: E402
from agentv_py.models.results import Trace  # noqa: E402


def payload_of(case: dict, answer: str = "ok", **extra) -> dict:
    model = EvalCase.model_validate({"id": "c1", **case})
    context = EvalContext(
        eval_id="c1", dataset="d", dataset_dir=Path("."), answer=answer, expected=None, case=model, **extra
    )
    return build_payload(context, {"maxCalls": 1})


@pytest.mark.parametrize(
    ("expected_output", "reference"),
    [
        pytest.param("Paris", "Paris", id="text"),
        pytest.param({"grossTotal": 5, "currency": "€"}, '{\n  "grossTotal": 5,\n  "currency": "€"\n}', id="object"),
        pytest.param(
            [{"role": "assistant", "content": "step"}, {"role": "user", "content": "last, any role"}],
            "last, any role",
            id="last-message-any-role",
        ),
        pytest.param(
            [{"role": "assistant", "tool_calls": [{"tool": "vector_search", "input": {"query": "q"}}]}],
            '[\n  {\n    "tool": "vector_search",\n    "input": {\n      "query": "q"\n    }\n  }\n]',
            id="tool-calls-only",
        ),
        pytest.param(None, "", id="none"),
    ],
)
def test_reference_answer_as_agentv_derived_it(expected_output, reference):
    case = {"input": "q"} if expected_output is None else {"input": "q", "expected_output": expected_output}
    assert reference_answer(EvalCase.model_validate({"id": "c1", **case}), None) == reference


def test_nested_keys_are_snake_cased_but_text_and_config_are_not():
    payload = payload_of(
        {
            "input": [{"role": "user", "content": "q"}],
            "expected_output": [
                {"role": "assistant", "tool_calls": [{"tool": "vectorSearch", "input": {"topK": 3}}]},
                {"role": "assistant", "content": {"grossTotal": 5, "Vendor": {"taxId": "x"}}},
            ],
        },
        answer='{"grossTotal": 5}',
        output_messages=[{"role": "assistant", "toolCalls": [{"tool": "readFile", "input": {"filePath": "a"}}]}],
    )
    assert payload["expected_messages"] == [
        {"role": "assistant", "tool_calls": [{"tool": "vectorSearch", "input": {"top_k": 3}}]},
        {"role": "assistant", "content": {"gross_total": 5, "Vendor": {"tax_id": "x"}}},
    ]
    assert payload["output_messages"] == [
        {"role": "assistant", "tool_calls": [{"tool": "readFile", "input": {"file_path": "a"}}]}
    ]
    assert payload["candidate_answer"] == '{"grossTotal": 5}'
    assert payload["reference_answer"] == '{\n  "grossTotal": 5,\n  "Vendor": {\n    "taxId": "x"\n  }\n}'
    assert payload["config"] == {"maxCalls": 1}  # agentv's pass-through is verbatim (AgentV snake_cased it)


def test_trace_summary_carries_the_target_calls_metrics_and_tool_durations():
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {"tool": "readFile", "duration_ms": 12},
                {"tool": "readFile", "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01.5Z"},
                {"tool": "grep"},
            ],
        },
        {"role": "assistant", "content": "done"},
    ]
    trace = Trace(duration_ms=840.0, token_usage={"input": 100, "output": 20, "cached": 5}, cost_usd=0.0125)
    payload = payload_of({"input": "q"}, output_messages=messages, trace=trace)
    assert payload["trace_summary"] == {
        "event_count": 3,
        "tool_names": ["grep", "readFile"],
        "tool_calls_by_name": {"read_file": 2, "grep": 1},
        "error_count": 0,
        "tool_durations": {"read_file": [12, 1500.0]},
        "token_usage": {"input": 100, "output": 20, "cached": 5},
        "cost_usd": 0.0125,
        "duration_ms": 840.0,
    }


def test_a_case_without_outcome_or_output_messages():
    payload = payload_of({"input": "q"}, answer="plain text")
    assert payload["expected_outcome"] == ""  # AgentV always sent a string (its SDK requires one)
    assert payload["output_messages"] == [{"role": "assistant", "content": "plain text"}]  # as AgentV's cli provider
    assert payload["trace_summary"] == {"event_count": 0, "tool_names": [], "tool_calls_by_name": {}, "error_count": 0}
    assert (payload["guideline_files"], payload["expected_messages"]) == ([], [])
