"""`payload_format: "4.42"`: AgentV v4.42.4's code-grader payload and reply, beside the early-2026
code-judge payload, against real tiny grader scripts (issue 29, point 4).

The contract test (`test_contract_*`): graders written as AgentV's v4.42 examples write them
(reading `output`, `expected_output`, `criteria`, `input`) and judges written for the early-2026
payload score as they should under their own format, and under the other one fail with an error
naming the key they looked for, never a silent 0."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.grader_payload import PAYLOAD_KEYS, build_grader_payload
from agentv_py.evaluators.judge_payload import build_payload
from agentv_py.models.dataset import EvalCase
from agentv_py.models.evaluators import CodeJudgeConfig
from agentv_py.models.results import Trace

ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "judges" / "echo_payload.py")


def config(script, payload_format: str | float | None = "4.42", **extra) -> CodeJudgeConfig:
    data = {"type": "code_judge", "name": "g", "script": script, **extra}
    if payload_format is not None:
        data["payload_format"] = payload_format
    return CodeJudgeConfig.model_validate(data)


def context(tmp_path: Path, answer: str = "Total: 42 EUR", **extra) -> EvalContext:
    case = EvalCase.model_validate(
        {
            "id": "inv-1",
            "expected_outcome": "States the total, 42 EUR",
            "input_messages": [
                {"role": "system", "content": "You read invoices."},
                {"role": "user", "content": [{"type": "text", "value": "What is the total?"}]},
            ],
            "expected_messages": [{"role": "assistant", "content": "Total: 42 EUR"}],
        }
    )
    return EvalContext(
        eval_id="inv-1",
        dataset="invoices",
        dataset_dir=tmp_path,
        answer=answer,
        expected="Total: 42 EUR",
        question="What is the total?",
        files=("/data/inv.pdf",),
        case=case,
        **extra,
    )


def grader(tmp_path: Path, body: str, name: str = "grader.py") -> list[str]:
    path = tmp_path / name
    path.write_text("import json, sys\npayload = json.load(sys.stdin)\n" + textwrap.dedent(body))
    return ["python3", str(path)]


def test_the_payload_key_sets_are_the_documented_ones(tmp_path):
    ctx = context(tmp_path)
    assert tuple(build_payload(ctx, None)) == PAYLOAD_KEYS["2026-02"]
    assert tuple(build_grader_payload(ctx, None)) == tuple(k for k in PAYLOAD_KEYS["4.42"] if k != "output_path")
    assert tuple(build_grader_payload(ctx, None, "/tmp/x/output.json")) == PAYLOAD_KEYS["4.42"]


def test_the_442_payload_word_for_word(tmp_path):
    output = [
        {
            "role": "assistant",
            "content": "Looking it up",
            "tool_calls": [
                {"tool": "readFile", "input": {"filePath": "inv.pdf"}, "output": "42", "id": "c1", "durationMs": 12},
                {"tool": "Search", "input": {"q": "eur"}},
            ],
        },
        {"role": "assistant", "content": "Total: 42 EUR"},
    ]
    trace = Trace(duration_ms=900.0, token_usage={"input": 10, "output": 5}, cost_usd=0.002)
    cfg = config(["python3", ECHO], maxLength=50, nested={"innerKey": [1]})
    result = run_evaluator(cfg, context(tmp_path, output_messages=output, trace=trace))
    assert result.status == "processed", result.misses
    inputs = [
        {"role": "system", "content": "You read invoices."},
        {"role": "user", "content": [{"type": "text", "value": "What is the total?"}]},
    ]
    messages = [
        *inputs,
        {
            "role": "assistant",
            "content": "Looking it up",
            "tool_calls": [
                {"tool": "readFile", "input": {"file_path": "inv.pdf"}, "output": "42", "id": "c1", "duration_ms": 12},
                {"tool": "Search", "input": {"q": "eur"}},
            ],
        },
        {"role": "assistant", "content": "Total: 42 EUR"},
    ]
    summary = {"event_count": 2, "tool_calls": {"read_file": 1, "Search": 1}, "error_count": 0, "llm_call_count": 2}
    tool = {"name": "readFile", "call_id": "c1", "status": "ok"}
    assert result.details["payload"] == {
        "criteria": "States the total, 42 EUR",
        "expected_output": [{"role": "assistant", "content": "Total: 42 EUR"}],
        "output": "Total: 42 EUR",
        "messages": messages,
        "input_files": ["/data/inv.pdf"],
        "input": inputs,
        "metadata": None,
        "trace": {
            **summary,
            "tool_durations": {"read_file": [12]},
            "messages": messages,
            "events": [
                {
                    "event_id": "message-0",
                    "ordinal": 0,
                    "type": "message",
                    "message": inputs[0],
                    "metadata": {"message_index": 0},
                },
                {
                    "event_id": "message-1",
                    "ordinal": 1,
                    "type": "message",
                    "message": inputs[1],
                    "metadata": {"message_index": 1},
                },
                {
                    "event_id": "message-2",
                    "ordinal": 2,
                    "type": "message",
                    "message": {"role": "assistant", "content": "Looking it up"},
                    "metadata": {"message_index": 2},
                },
                {
                    "event_id": "message-2-tool-0",
                    "ordinal": 3,
                    "parent_event_id": "message-2",
                    "type": "tool_call",
                    "duration_ms": 12,
                    "tool": {**tool, "input": {"file_path": "inv.pdf"}, "output": "42"},
                    "metadata": {"message_index": 2, "tool_index": 0},
                },
                {
                    "event_id": "message-2-tool-0-result",
                    "parent_event_id": "message-2-tool-0",
                    "ordinal": 4,
                    "type": "tool_result",
                    "tool": {**tool, "output": "42"},
                    "metadata": {"message_index": 2, "tool_index": 0},
                },
                {
                    "event_id": "message-2-tool-1",
                    "ordinal": 5,
                    "parent_event_id": "message-2",
                    "type": "tool_call",
                    "tool": {"name": "Search", "status": "ok", "input": {"q": "eur"}},
                    "metadata": {"message_index": 2, "tool_index": 1},
                },
                {
                    "event_id": "message-3",
                    "ordinal": 6,
                    "type": "message",
                    "message": {"role": "assistant", "content": "Total: 42 EUR"},
                    "metadata": {"message_index": 3},
                },
                {
                    "event_id": "final-response",
                    "parent_event_id": "message-3",
                    "ordinal": 7,
                    "type": "final_response",
                    "message": {"role": "assistant", "content": "Total: 42 EUR"},
                    "metadata": {"message_index": 3},
                },
            ],
            "token_usage": {"input": 10, "output": 5},
            "cost_usd": 0.002,
            "duration_ms": 900.0,
            "metadata": {"eval_case_id": "inv-1"},
        },
        "trace_summary": {**summary, "tool_durations": {"read_file": [12]}},
        "token_usage": {"input": 10, "output": 5},
        "cost_usd": 0.002,
        "duration_ms": 900.0,
        "start_time": None,
        "end_time": None,
        "file_changes": None,
        "workspace_path": None,
        "config": {"max_length": 50, "nested": {"inner_key": [1]}},  # snake_cased, as AgentV did
    }


TRANSCRIPTS = [
    ("target-answer-only", None, 3),  # system + user + the answer as one assistant message
    ("whole-conversation", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}], 2),
]


@pytest.mark.parametrize("output, count", [c[1:] for c in TRANSCRIPTS], ids=[c[0] for c in TRANSCRIPTS])
def test_messages_are_agentv_transcript(tmp_path, output, count):
    payload = build_grader_payload(context(tmp_path, output_messages=output), None)
    assert len(payload["messages"]) == count
    assert payload["messages"][-1]["role"] == "assistant"


def test_message_timestamps_give_the_trace_start_and_end(tmp_path):
    output = [
        {"role": "assistant", "content": "a", "start_time": "2026-03-01T10:00:00+01:00"},
        {"role": "assistant", "content": "b", "endTime": "2026-03-01T09:00:02.5Z"},
    ]
    trace = build_grader_payload(context(tmp_path, output_messages=output), None)["trace"]
    assert (trace["start_time"], trace["end_time"]) == ("2026-03-01T09:00:00.000Z", "2026-03-01T09:00:02.500Z")


def test_a_long_answer_goes_to_output_path_and_the_file_is_removed_after(tmp_path):
    body = """
    path = payload["output_path"]
    text = json.load(open(path))
    print(json.dumps({"score": 1, "details": {"output": payload["output"], "path": path, "length": len(text)}}))
    """
    result = run_evaluator(config(grader(tmp_path, body)), context(tmp_path, answer="x" * 60_000))
    assert result.status == "processed", result.misses
    assert result.details["output"] is None and result.details["length"] == 60_000
    assert result.details["path"].endswith("output.json") and not Path(result.details["path"]).exists()


# --- the contract: graders of each format, under each format --------------------------------------

V442_GRADER = """
criteria = payload["criteria"]
output = payload["output"]
want = payload["expected_output"][-1]["content"]
asked = " ".join(m["content"] if isinstance(m["content"], str) else m["content"][0]["value"] for m in payload["input"])
print(json.dumps({"assertions": [
    {"text": "matches expected output", "passed": output == want},
    {"text": "criteria names 42", "passed": "42" in criteria},
    {"text": "asked for the total", "passed": "total" in asked, "evidence": asked[:40]},
    {"text": "says USD", "passed": "USD" in output},
]}))
"""

EARLY_JUDGE = """
answer = payload["candidate_answer"]
score = 1.0 if answer == payload["reference_answer"] and payload["expected_outcome"] and payload["question"] else 0.0
print(json.dumps({"score": score, "hits": ["same"] if score else [], "misses": [] if score else ["differs"]}))
"""

CONTRACT = [
    ("v442-grader-as-442", V442_GRADER, "4.42", "processed", 0.75),
    ("early-judge-as-2026-02", EARLY_JUDGE, "2026-02", "processed", 1.0),
    ("early-judge-by-default", EARLY_JUDGE, None, "processed", 1.0),
]


@pytest.mark.parametrize("body, fmt, status, score", [c[1:] for c in CONTRACT], ids=[c[0] for c in CONTRACT])
def test_contract_graders_score_under_their_own_format(tmp_path, body, fmt, status, score):
    result = run_evaluator(config(grader(tmp_path, body), payload_format=fmt), context(tmp_path))
    assert (result.status, result.score) == (status, pytest.approx(score)), result.misses


def test_contract_assertions_become_hits_and_misses(tmp_path):
    result = run_evaluator(config(grader(tmp_path, V442_GRADER)), context(tmp_path))
    assert result.hits == [
        "matches expected output",
        "criteria names 42",
        "asked for the total: You read invoices. What is the total?",
    ]
    assert result.misses == ["says USD"]
    assert (result.passed, result.verdict) == (False, "partial")


WRONG_FORMAT = [
    ("v442-grader-fed-2026-02", V442_GRADER, "2026-02", "criteria", "4.42"),
    ("early-judge-fed-442", EARLY_JUDGE, "4.42", "candidate_answer", "2026-02"),
]


@pytest.mark.parametrize("body, fmt, key, other", [c[1:] for c in WRONG_FORMAT], ids=[c[0] for c in WRONG_FORMAT])
def test_contract_a_grader_reading_a_key_we_do_not_send_is_an_error_naming_it(tmp_path, body, fmt, key, other):
    result = run_evaluator(config(grader(tmp_path, body), payload_format=fmt), context(tmp_path))
    assert (result.status, result.score) == ("error", 0.0)
    assert result.misses[0].endswith(
        f"KeyError: '{key}'); the judge read key '{key}', which the {fmt} payload does not have; "
        f'the {other} payload has it: set payload_format: "{other}" on this evaluator'
    ), result.misses


def test_a_keyerror_on_a_key_of_no_payload_is_not_blamed_on_the_payload(tmp_path):
    body = 'print(json.dumps({"score": payload["config"]["threshold"]}))\n'
    result = run_evaluator(config(grader(tmp_path, body), tolerance=1), context(tmp_path))
    assert result.status == "error"
    assert result.misses[0].endswith("KeyError: 'threshold')"), result.misses


def test_contract_a_442_grader_fed_2026_02_shapes_fails_loudly(tmp_path):
    """`output`, `expected_output` and `input` are in both payloads with other shapes (strings in
    2026-02): a grader indexing them as message arrays crashes, an error with its traceback."""
    body = 'print(json.dumps({"score": float(payload["expected_output"][-1]["content"] == payload["output"])}))\n'
    result = run_evaluator(config(grader(tmp_path, body), payload_format="2026-02"), context(tmp_path))
    assert (result.status, result.score) == ("error", 0.0)
    assert result.misses[0].startswith("code_judge 'g': exited with code 1 and printed nothing on stdout")
    assert result.misses[0].endswith("TypeError: string indices must be integers, not 'str')")


# --- hostile and unscorable replies -----------------------------------------------------------

REPLIES = [
    ("assertions-only", 'print(json.dumps({"assertions": [{"text": "a", "passed": True}]}))', "processed", 1.0, None),
    ("plain-text-pass", 'print("all good")', "processed", 1.0, None),
    ("plain-text-fail", 'print("bad total"); sys.exit(1)', "processed", 0.0, None),
    ("silent-exit-0", "pass", "processed", 1.0, None),
    (
        "empty-object",
        "print('{}')",
        "error",
        0.0,
        "code_judge 'g': the result has neither 'score' (a number in [0, 1]) nor 'assertions' "
        "(a list of {text, passed, evidence?} objects): nothing to score",
    ),
    (
        "score-nan",
        "print('{\"score\": NaN}')",
        "error",
        0.0,
        "code_judge 'g': score must be a number in [0, 1], got nan",
    ),
    (
        "score-clamped-by-agentv",
        "print('{\"score\": 7}')",
        "error",
        0.0,
        "code_judge 'g': score must be a number in [0, 1], got 7",
    ),
    (
        "assertions-wrong-shape",
        'print(json.dumps({"assertions": [{"text": "a", "passed": "true"}]}))',
        "error",
        0.0,
        "code_judge 'g': assertions[0].passed must be true or false, got \"true\"",
    ),
    ("bare-number", "print('0.7')", "error", 0.0, "code_judge 'g': stdout is a float, not a JSON object"),
    ("array", "print('[1, 2]')", "error", 0.0, "code_judge 'g': stdout is an array, not a JSON object"),
    (
        "truncated-json",
        "print('{\"score\": 0.')",
        "error",
        0.0,
        "code_judge 'g': stdout is not JSON: '{\"score\": 0.'",
    ),
    (
        "debug-line-first",
        'print("checking"); print(json.dumps({"score": 0}))',
        "error",
        0.0,
        "code_judge 'g': printed 1 line before its JSON result "
        "(stdout must hold only the result; print debug output to stderr)",
    ),
    (
        "nested-deep",
        "print('[' * 100000 + ']' * 100000)",
        "error",
        0.0,
        "code_judge 'g': stdout is not JSON (JSON nested too deeply): '" + "[" * 80 + "...'",
    ),
    (
        "exit-1-with-json",
        'print(json.dumps({"score": 1})); sys.exit(1)',
        "error",
        0.0,
        "code_judge 'g': exited with code 1 (a JSON result is read only on exit 0)",
    ),
    (
        "exit-1-with-stderr",
        'print("text", file=sys.stderr); print("fine"); sys.exit(1)',
        "error",
        0.0,
        "code_judge 'g': exited with code 1 (a JSON result is read only on exit 0) (stderr: text)",
    ),
    (
        "killed",
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        "error",
        0.0,
        "code_judge 'g': killed by signal 9",
    ),
    (
        "not-utf8",
        "sys.stdout.buffer.write(b'\\xff\\xfe')",
        "error",
        0.0,
        "code_judge 'g': stdout is not valid UTF-8 (byte offset 0)",
    ),
]


@pytest.mark.parametrize("body, status, score, message", [c[1:] for c in REPLIES], ids=[c[0] for c in REPLIES])
def test_replies_under_442(tmp_path, body, status, score, message):
    result = run_evaluator(config(grader(tmp_path, body + "\n")), context(tmp_path))
    assert (result.status, result.score) == (status, score), result.misses
    if message is not None:
        assert result.misses == [message]


def test_a_huge_reply_is_cut_off_not_read(tmp_path):
    body = "sys.stdout.write('{\"score\": 1, \"pad\": \"' + 'x' * (11 * 1024 * 1024) + '\"}')\n"
    result = run_evaluator(config(grader(tmp_path, body)), context(tmp_path))
    assert (result.status, result.misses) == (
        "error",
        ["code_judge 'g': output exceeded the 10 MB cap (process group killed)"],
    )


def test_a_huge_assertion_list_is_scored(tmp_path):
    body = 'print(json.dumps({"assertions": [{"text": str(i), "passed": i % 4 == 0} for i in range(20000)]}))\n'
    result = run_evaluator(config(grader(tmp_path, body)), context(tmp_path))
    assert (result.status, result.score, len(result.hits), len(result.misses)) == ("processed", 0.25, 5000, 15000)


VALUES = [("quoted", "4.42", "4.42"), ("unquoted-yaml-float", 4.42, "4.42"), ("default", None, "2026-02")]


@pytest.mark.parametrize("given, read", [c[1:] for c in VALUES], ids=[c[0] for c in VALUES])
def test_payload_format_is_a_declared_key_not_config(given, read):
    cfg = config(["true"], payload_format=given, tolerance=1)
    assert (cfg.payload_format, cfg.config) == (read, {"tolerance": 1})


def test_an_unknown_payload_format_is_refused():
    with pytest.raises(ValueError, match="payload_format\n  Input should be '2026-02' or '4.42'"):
        config(["true"], payload_format="4.41")


def test_hostile_values_are_data(tmp_path):
    answer = '"; rm -rf / #\n{{criteria}} <script>$(id)</script>'
    body = 'print(json.dumps({"score": 1, "details": {"output": payload["output"]}}))\n'
    result = run_evaluator(config(grader(tmp_path, body)), context(tmp_path, answer=answer))
    assert result.details == {"output": answer}


def test_details_come_back_verbatim(tmp_path):
    details = {"f1": 0.5, "per_field": [{"path": "total", "ok": True}]}
    (tmp_path / "details.json").write_text(json.dumps(details))
    body = 'print(json.dumps({"score": 0.5, "details": json.load(open("details.json"))}))\n'
    result = run_evaluator(config(grader(tmp_path, body)), context(tmp_path))
    assert result.details == details


def test_a_dataset_chooses_the_payload_per_evaluator(ws):
    """Through `agentv eval`: one case, an early-2026 judge and a v4.42 grader (payload_format
    written unquoted, as YAML users will), each fed its own payload."""
    from typer.testing import CliRunner

    from agentv_py.cli import app

    ws.cli_target("echo 'Total: 42 EUR'")
    grader(ws.root, V442_GRADER, "v442.py")
    grader(ws.root, EARLY_JUDGE, "early.py")
    ws.dataset(
        """
        execution:
          target: t
          evaluators:
            - {name: early, type: code_judge, script: [python3, early.py]}
            - {name: current, type: code_judge, script: [python3, v442.py], payload_format: 4.42}
        evalcases:
          - id: c1
            expected_outcome: States the total, 42 EUR
            input_messages: [{role: user, content: What is the total?}]
            expected_messages: [{role: assistant, content: "Total: 42 EUR\\n"}]
        """
    )
    result = CliRunner().invoke(app, ["eval", "dataset.yaml", "--out", "o.jsonl", "--threshold", "0"])
    assert result.exit_code == 0, result.output
    row = json.loads((ws.root / "o.jsonl").read_text())
    scores = {r["name"]: (r["status"], r["score"], r["misses"]) for r in row["evaluator_results"]}
    assert scores == {"early": ("processed", 1.0, []), "current": ("processed", 0.75, ["says USD"])}
