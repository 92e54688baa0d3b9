"""The judge SDK (agentv_py.judge): payload in, validated result out, errors never scores."""

from __future__ import annotations

import io
import json

import pytest

from agentv_py.judge import JudgeInput, JudgeResult, run

PAYLOAD = {
    "candidate_answer": '{"supplier": {"name": "Acme - Shipping"}}',
    "reference_answer": '{"supplier": {"name": "Acme Shipping"}}',
    "candidate": {"supplier": {"name": "Acme - Shipping"}},
    "expected": {"supplier": {"name": "Acme Shipping"}},
    "question": "Extract.",
    "config": {"threshold": 0.85},
    "eval_id": "inv-2",
    "dataset": "invoices",
}


def call(fn, payload=PAYLOAD) -> tuple[int, dict]:
    out = io.StringIO()
    code = run(fn, stdin=io.StringIO(json.dumps(payload)), stdout=out)
    return code, json.loads(out.getvalue())


def test_typed_input_and_path_helpers():
    seen = {}

    def fn(inp: JudgeInput) -> JudgeResult:
        seen.update(
            name=inp.get("supplier.name"),
            want=inp.get_expected("supplier.name"),
            threshold=inp.config["threshold"],
            missing=inp.get("nope", "default"),
        )
        return JudgeResult(score=1.0)

    assert call(fn) == (
        0,
        {"score": 1.0, "hits": [], "misses": [], "reasoning": "", "details": {}, "status": "processed"},
    )
    assert seen == {"name": "Acme - Shipping", "want": "Acme Shipping", "threshold": 0.85, "missing": "default"}


def test_input_from_older_payload_keys_only():
    inp = JudgeInput.from_payload({"output": '{"a": 1}', "expected_output": "x", "input": "q"})
    assert (inp.candidate_answer, inp.candidate, inp.reference_answer, inp.question) == ('{"a": 1}', {"a": 1}, "x", "q")


AGENTV_PAYLOAD = {  # exactly the keys AgentV sent (agentv-reference §3.2), snake_case on the wire
    "question": "Extract.",
    "expected_outcome": "totals match",
    "expected_messages": [{"role": "assistant", "content": {"gross_total": 5}}],
    "reference_answer": '{\n  "gross_total": 5\n}',
    "candidate_answer": '{"gross_total": 5}',
    "output_messages": None,
    "guideline_files": ["/repo/a.instructions.md"],
    "input_files": ["/repo/doc.pdf"],
    "input_messages": [{"role": "user", "content": "Extract."}],
    "trace_summary": {"event_count": 1, "tool_names": ["grep"], "tool_calls_by_name": {"grep": 1}, "error_count": 0},
    "config": None,
}


def test_input_from_an_agentv_payload():
    inp = JudgeInput.from_payload(AGENTV_PAYLOAD)
    assert (inp.candidate_answer, inp.candidate, inp.reference_answer) == (
        '{"gross_total": 5}',
        {"gross_total": 5},
        '{\n  "gross_total": 5\n}',
    )
    assert (inp.question, inp.expected_outcome, inp.config, inp.output_messages) == (
        "Extract.",
        "totals match",
        {},
        [],
    )
    assert (inp.guideline_files, inp.input_files, inp.trace_summary) == (
        ["/repo/a.instructions.md"],
        ["/repo/doc.pdf"],
        AGENTV_PAYLOAD["trace_summary"],
    )


def test_input_without_agentv_only_keys():
    inp = JudgeInput.from_payload(PAYLOAD)
    assert (inp.guideline_files, inp.trace_summary) == ([], None)


def test_camel_case_keys_are_not_payload_keys():
    # AgentV sent snake_case; only its SDK turned keys into camelCase, inside the judge.
    inp = JudgeInput.from_payload({"candidateAnswer": "x", "guidelineFiles": ["g"], "traceSummary": {}})
    assert (inp.candidate_answer, inp.guideline_files, inp.trace_summary) == ("", [], None)


@pytest.mark.parametrize(
    "returned, code, score, passed",
    [
        (JudgeResult(score=0.9), 0, 0.9, None),
        (JudgeResult(score=0.5), 1, 0.5, None),
        (JudgeResult(score=0.95, passed=False), 1, 0.95, False),
        ({"score": 0.85, "hits": ["x"]}, 0, 0.85, None),
        (0.7, 1, 0.7, None),
    ],
    ids=["result-pass", "result-fail", "passed-overrides", "dict", "bare-number"],
)
def test_results_and_exit_codes(returned, code, score, passed):
    got_code, out = call(lambda inp: returned)
    assert (got_code, out["score"], out.get("passed")) == (code, score, passed)


@pytest.mark.parametrize(
    "returned, message",
    [
        (JudgeResult(score=1.5), "invalid judge result: score must be a number in [0, 1], got 1.5"),
        (JudgeResult(score=float("nan")), "invalid judge result: score must be a number in [0, 1], got nan"),
        (JudgeResult(score="0.9"), "invalid judge result: score must be a number in [0, 1], got '0.9'"),
        (JudgeResult(score=1, hits=[1]), "invalid judge result: 'hits' must be a list of strings, got [1]"),
        ({"reasoning": "no score"}, "judge raised TypeError: the judge returned a dict without 'score'"),
        ("0.9", "judge raised TypeError: the judge returned str; return a JudgeResult, a dict or a number"),
    ],
    ids=["above-one", "nan", "string", "hits", "dict-without-score", "wrong-type"],
)
def test_invalid_results_become_error_results(returned, message):
    code, out = call(lambda inp: returned)
    assert code == 1
    assert (out["status"], out["score"], out["misses"]) == ("error", 0.0, [message])


def test_an_exception_is_an_error_result_with_traceback_on_stderr(capsys):
    def fn(inp):
        raise ValueError("config.fields is required")

    code, out = call(fn)
    assert code == 1 and out["status"] == "error"
    assert out["reasoning"] == "judge raised ValueError: config.fields is required"
    assert "Traceback" in capsys.readouterr().err


def test_a_payload_that_is_not_an_object():
    code, out = call(lambda inp: 1.0, payload=[1, 2])
    assert out["reasoning"] == "judge raised ValueError: the payload on stdin is not a JSON object"


@pytest.mark.parametrize(
    "returned, message",
    [
        (JudgeResult(score=1, reasoning=None), "invalid judge result: 'reasoning' must be a string, got None"),
        (JudgeResult(score=1, details="x"), "invalid judge result: 'details' must be an object, got 'x'"),
        (
            JudgeResult(score=1, status="ok"),
            "invalid judge result: status must be processed, error or skipped, got 'ok'",
        ),
        (
            {"score": 2, "misses": "x"},
            "invalid judge result: 'misses' must be a list of strings, got 'x'; "
            "score must be a number in [0, 1], got 2",
        ),
        (
            JudgeResult(score=1, details={"x": float("nan")}),
            "invalid judge result: it cannot be printed as JSON (Out of range float values are not JSON compliant",
        ),
    ],
    ids=["reasoning-none", "details-not-dict", "bad-status", "every-problem", "nan-in-details"],
)
def test_the_sdk_checks_the_evaluators_contract(returned, message):
    """Same checks and words as the code_judge evaluator (scoring/judge_contract.py), reprs for values."""
    code, out = call(lambda inp: returned)
    assert code == 1
    assert (out["status"], out["score"]) == ("error", 0.0)
    assert out["misses"][0].startswith(message)


def test_a_skipped_result_needs_no_valid_score():
    code, out = call(lambda inp: JudgeResult(score=None, status="skipped", reasoning="no items"))
    assert (code, out["status"], out["score"], out["reasoning"]) == (1, "skipped", None, "no items")


@pytest.mark.parametrize(
    ("args", "body"),
    [
        pytest.param(("q?",), {"question": "q?"}, id="question"),
        pytest.param(
            ("q?", "sys", "second"), {"question": "q?", "systemPrompt": "sys", "target": "second"}, id="named"
        ),
        pytest.param(
            ({"question": "q?", "target": "x", "attempt": None},), {"question": "q?", "target": "x"}, id="dict"
        ),
    ],
)
def test_proxy_request_bodies(args: tuple, body: dict) -> None:
    """`invoke(question, system_prompt, target)` sends AgentV's request shape; `target` names any
    target of the targets file, as AgentV's SDK allowed."""
    from agentv_py.judge_proxy import _request_body

    assert _request_body(*args) == body
