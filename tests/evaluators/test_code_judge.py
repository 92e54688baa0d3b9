"""code_judge (SPEC §3.2) against real tiny judge scripts: payload, results, every failure mode."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.media import ImageRef
from agentv_py.models.dataset import EvalCase
from agentv_py.models.evaluators import CodeJudgeConfig
from tests.conftest import wait_dead

JUDGES = Path(__file__).resolve().parents[1] / "fixtures" / "judges"


def config(script, **extra) -> CodeJudgeConfig:
    return CodeJudgeConfig.model_validate({"type": "code_judge", "name": "j", "script": script, **extra})


def context(answer: str = '{"total": 5}', expected=None, **extra) -> EvalContext:
    case = EvalCase.model_validate(
        {
            "id": "inv-7",
            "expected_outcome": "totals match",
            "input_messages": [
                {
                    "role": "user",
                    "content": [{"type": "file", "value": "doc.pdf"}, {"type": "text", "value": "Extract."}],
                }
            ],
            "expected_messages": [{"role": "assistant", "content": expected if expected is not None else {"total": 5}}],
        }
    )
    return EvalContext(
        eval_id="inv-7",
        dataset="invoices",
        dataset_dir=JUDGES,
        answer=answer,
        expected=expected if expected is not None else {"total": 5},
        question="Extract.",
        files=("/data/doc.pdf",),
        images=(ImageRef("file", "/data/page1.png", "image/png"),),
        case=case,
        **extra,
    )


def reply(code: int, *lines: str):
    return run_evaluator(config(["sh", "reply.sh", str(code), *lines]), context())


def test_payload_has_every_key_with_its_value():
    cfg = config(
        ["python3", "echo_payload.py"],
        fields=[{"path": "supplier.name", "threshold": 0.85}],
        Algorithm="jaro_winkler",
        nested={"a": [1, {"B": None}]},
    )
    result = run_evaluator(cfg, context())
    assert result.status == "processed", result.misses
    assert result.details["payload"] == {
        "candidate_answer": '{"total": 5}',
        "output": '{"total": 5}',
        "reference_answer": '{\n  "total": 5\n}',  # pretty JSON, as AgentV derived it
        "expected_output": '{\n  "total": 5\n}',
        "candidate": {"total": 5},
        "expected": {"total": 5},
        "question": "Extract.",
        "input": "Extract.",
        "expected_outcome": "totals match",
        "expected_messages": [{"role": "assistant", "content": {"total": 5}}],
        "input_messages": [
            {"role": "user", "content": [{"type": "file", "value": "doc.pdf"}, {"type": "text", "value": "Extract."}]}
        ],
        "output_messages": [{"role": "assistant", "content": '{"total": 5}'}],
        "input_files": ["/data/doc.pdf"],
        "image_files": ["/data/page1.png"],
        "guideline_files": [],
        "trace_summary": {"event_count": 0, "tool_names": [], "tool_calls_by_name": {}, "error_count": 0},
        "config": {
            "fields": [{"path": "supplier.name", "threshold": 0.85}],
            "Algorithm": "jaro_winkler",
            "nested": {"a": [1, {"B": None}]},
        },
        "eval_id": "inv-7",
        "dataset": "invoices",
    }


def test_payload_without_config_and_with_unparseable_answer():
    result = run_evaluator(config(["python3", "echo_payload.py"]), context(answer="no json here"))
    payload = result.details["payload"]
    assert payload["config"] is None and payload["candidate"] is None


def test_target_output_messages_are_passed_through():
    messages = [{"role": "assistant", "content": "step 1"}, {"role": "assistant", "content": '{"total": 5}'}]
    result = run_evaluator(config(["python3", "echo_payload.py"]), context(output_messages=messages))
    assert result.details["payload"]["output_messages"] == messages


def test_trace_summary_counts_the_target_tool_calls_as_agentv_did():
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {"tool": "knowledgeSearch", "input": {"q": "x"}},
                {"tool": "Read"},
                {"tool": "knowledgeSearch"},
                {"tool": "knowledge_search"},
                {"input": "no tool name"},
                {"tool": 7},
                "not a call",
            ],
        },
        {"role": "tool", "tool_calls": "not a list"},
        "not a message",
        {"role": "assistant", "content": "done", "tool_calls": [{"tool": "grep"}]},
    ]
    result = run_evaluator(config(["python3", "echo_payload.py"]), context(output_messages=messages))
    assert result.status == "processed", result.misses
    payload = result.details["payload"]
    assert payload["trace_summary"] == {
        "event_count": 5,
        "tool_names": ["Read", "grep", "knowledgeSearch", "knowledge_search"],
        "tool_calls_by_name": {"knowledge_search": 3, "Read": 1, "grep": 1},
        "error_count": 0,
    }
    assert payload["output_messages"] == messages


def test_a_full_result_is_kept_verbatim():
    out = {
        "score": 0.5,
        "hits": ["a"],
        "misses": ["b (off)"],
        "reasoning": "half",
        "details": {"metrics": {"b": {"fp": 1}}},
    }
    result = reply(0, json.dumps(out))
    assert (result.status, result.score, result.verdict, result.passed) == ("processed", 0.5, "fail", False)
    assert (result.hits, result.misses, result.reasoning, result.details) == (
        ["a"],
        ["b (off)"],
        "half",
        {"metrics": {"b": {"fp": 1}}},
    )


def test_passed_overrides_the_score_based_pass():
    assert reply(0, '{"score": 0.5, "passed": true}').passed is True
    assert reply(0, '{"score": 0.95, "passed": false}').passed is False


def test_exit_1_with_a_valid_result_is_a_result_that_did_not_pass():
    result = reply(1, '{"score": 0.9}')
    assert (result.status, result.score, result.passed) == ("processed", 0.9, False)


def test_judge_may_skip():
    result = reply(0, '{"status": "skipped", "reasoning": "no line items"}')
    assert (result.status, result.score, result.reasoning) == ("skipped", None, "no line items")


ERRORS = [
    (
        "exit-2",
        ["sh", "crash.sh"],
        "code_judge 'j': exited with code 2 (0 or 1 with a JSON result expected) "
        "(stderr: Traceback (most recent call last): | KeyError: 'supplier')",
    ),
    (
        "debug-lines-before-json",
        ["sh", "reply.sh", "0", "loading rules", "checking 3 fields", '{"score": 1}'],
        "code_judge 'j': printed 2 lines before its JSON result "
        "(stdout must hold only the result; print debug output to stderr)",
    ),
    ("not-json", ["sh", "reply.sh", "0", "looks good to me"], "code_judge 'j': stdout is not JSON: 'looks good to me'"),
    ("empty-stdout", ["sh", "reply.sh", "0"], "code_judge 'j': printed nothing on stdout (one JSON object expected)"),
    ("array", ["sh", "reply.sh", "0", "[1, 2]"], "code_judge 'j': stdout is an array, not a JSON object"),
    ("nan", ["sh", "reply.sh", "0", '{"score": NaN}'], "code_judge 'j': score must be a number in [0, 1], got nan"),
    (
        "above-one",
        ["sh", "reply.sh", "0", '{"score": 1.5}'],
        "code_judge 'j': score must be a number in [0, 1], got 1.5",
    ),
    (
        "negative",
        ["sh", "reply.sh", "0", '{"score": -0.1}'],
        "code_judge 'j': score must be a number in [0, 1], got -0.1",
    ),
    (
        "string-score",
        ["sh", "reply.sh", "0", '{"score": "0.9"}'],
        "code_judge 'j': score must be a number in [0, 1], got \"0.9\"",
    ),
    (
        "bool-score",
        ["sh", "reply.sh", "0", '{"score": true}'],
        "code_judge 'j': score must be a number in [0, 1], got true",
    ),
    (
        "no-score",
        ["sh", "reply.sh", "0", '{"reasoning": "fine"}'],
        "code_judge 'j': the result has no 'score' (a number in [0, 1])",
    ),
    (
        "hits-not-strings",
        ["sh", "reply.sh", "0", '{"score": 1, "hits": [1]}'],
        "code_judge 'j': 'hits' must be a list of strings, got [1]",
    ),
    (
        "details-not-object",
        ["sh", "reply.sh", "0", '{"score": 1, "details": "x"}'],
        "code_judge 'j': 'details' must be an object, got \"x\"",
    ),
    (
        "bad-status",
        ["sh", "reply.sh", "0", '{"score": 1, "status": "ok"}'],
        "code_judge 'j': status must be processed, error or skipped, got \"ok\"",
    ),
    (
        "judge-reports-error",
        ["sh", "reply.sh", "0", '{"score": 0, "status": "error", "reasoning": "rules file missing"}'],
        "code_judge 'j': reported an error: rules file missing",
    ),
    (
        "exit-1-without-result",
        ["sh", "reply.sh", "1", "nope"],
        "code_judge 'j': exited with code 1 and stdout is not JSON: 'nope'",
    ),
    ("flood", ["sh", "flood.sh"], "code_judge 'j': output exceeded the 10 MB cap (process group killed)"),
    (
        "missing-program",
        ["no-such-judge-runner", "x"],
        "code_judge 'j': command not found: no-such-judge-runner (not on PATH)",
    ),
]


@pytest.mark.parametrize("script, message", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_failures_are_errors_never_scores(script, message):
    result = run_evaluator(config(script), context())
    assert (result.status, result.score, result.passed, result.verdict) == ("error", 0.0, False, "fail")
    assert result.misses == [message]


def test_timeout_kills_the_judge_and_its_grandchild(tmp_path):
    pid_file = tmp_path / "pid"
    result = run_evaluator(config(["sh", "grandchild_hang.sh", str(pid_file)], timeout_seconds=0.5), context())
    assert result.misses == ["code_judge 'j': timed out after 0.5s (process group killed)"]
    assert wait_dead(int(pid_file.read_text()))


def test_a_judge_that_ignores_a_large_stdin_is_fine():
    big = {"blob": "x" * 2_000_000}
    result = run_evaluator(config(["sh", "reply.sh", "0", '{"score": 1}']), context(expected=big))
    assert result.status == "processed" and result.score == 1.0


def test_shell_string_script():
    result = run_evaluator(config("echo '{\"score\": 0.25}' | cat"), context())
    assert result.score == 0.25


def test_uv_run_with_inline_metadata():
    result = run_evaluator(config(["uv", "run", "pep723.py"], mode="strict"), context())
    assert result.status == "processed", result.misses
    assert (result.score, result.hits, result.details) == (1.0, ["total"], {"config": {"mode": "strict"}})


def test_sdk_judge_that_raises_is_an_error_with_the_exception():
    result = run_evaluator(config(["python3", "sdk_raises.py"]), context())
    assert result.status == "error"
    assert result.misses[0].startswith(
        "code_judge 'j': reported an error: judge raised KeyError: 'missing_key' (stderr: "
    )


# Code judges' stdout is read whole: no fenced block, no JSON picked out of prose (unlike target
# answers and LLM-judge replies, which share the fence finder in scoring/jsontext.py).
STDOUT_NOT_ACCEPTED = [
    (
        "fenced",
        ["```json", '{"score": 1}', "```"],
        "code_judge 'j': stdout is not JSON: '```json\\n{\"score\": 1}\\n```'",
    ),
    ("bare-fence", ["```", '{"score": 1}', "```"], "code_judge 'j': stdout is not JSON: '```\\n{\"score\": 1}\\n```'"),
    (
        "prose-around-json",
        ['Result: {"score": 1} done'],
        "code_judge 'j': stdout is not JSON: 'Result: {\"score\": 1} done'",
    ),
]


@pytest.mark.parametrize(
    "lines, message", [c[1:] for c in STDOUT_NOT_ACCEPTED], ids=[c[0] for c in STDOUT_NOT_ACCEPTED]
)
def test_stdout_must_be_only_the_json_object(lines, message):
    result = reply(0, *lines)
    assert (result.status, result.misses) == ("error", [message])


@pytest.mark.parametrize(
    "stdout, problem",
    [
        ('{"score": 1}', None),
        ('\n  {"score": NaN}\n', None),  # read, so that the contract names the NaN score
        ("[" * 100_000 + "]" * 100_000, "stdout is not JSON (JSON nested too deeply): '" + "[" * 80 + "...'"),
        (
            '{"score": 1, "n": ' + "7" * 5000 + "}",
            f"stdout is not JSON (an integer longer than {sys.get_int_max_str_digits()} digits): "
            '\'{"score": 1, "n": ' + "7" * 62 + "...'",
        ),
        ('```json\n{"score": 1}\n```', "stdout is not JSON: '```json\\n{\"score\": 1}\\n```'"),
        (
            'debug\n{"score": 1}',
            "printed 1 line before its JSON result (stdout must hold only the result; print debug output to stderr)",
        ),
    ],
    ids=["object", "nan-read", "nested-too-deeply", "integer-too-long", "fenced", "debug-line"],
)
def test_one_json_object(stdout, problem):
    from agentv_py.evaluators.judge_reply import one_json_object

    value, found = one_json_object(stdout)
    assert found == problem
    assert (value is None) is (problem is not None)


def test_skipped_with_a_null_score_is_skipped():
    result = reply(0, '{"status": "skipped", "score": null}')
    assert (result.status, result.score) == ("skipped", None)
