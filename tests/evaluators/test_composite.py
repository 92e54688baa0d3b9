"""`composite`: members on the same case, the three aggregators, member errors, nesting, and the
config errors, with field_accuracy members (pure), tiny real aggregator scripts and a real
scripted chat server for the llm_judge aggregator."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.composite import DEFAULT_AGGREGATOR_PROMPT
from agentv_py.models.dataset import EvalCase
from agentv_py.models.evaluators import CompositeConfig, calls_judge
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.models.results import ResultRow
from agentv_py.runner.targets import OpenAIRunner
from agentv_py.scoring.case import case_verdict
from tests.chat_server import text

ANSWER = json.dumps({"a": 1, "b": 2})
EXPECTED = {"a": 1, "b": 3, "d": "x"}

# Members with known results on ANSWER / EXPECTED.
RIGHT = {"name": "right", "type": "field_accuracy", "fields": [{"path": "a"}]}  # 1.0
WRONG = {"name": "wrong", "type": "field_accuracy", "fields": [{"path": "b"}]}  # 0.0
HALF = {"name": "half", "type": "field_accuracy", "fields": [{"path": "a"}, {"path": "b"}]}  # 0.5
SKIPS = {"name": "skips", "type": "field_accuracy", "fields": [{"path": "c"}]}  # no expected value: skipped
BROKEN = {  # the expected value of d is not a number: error
    "name": "broken",
    "type": "field_accuracy",
    "fields": [{"path": "d", "match": "numeric_tolerance", "tolerance": 1}],
}


def composite(members, aggregator=None, **extra) -> CompositeConfig:
    return CompositeConfig.model_validate(
        {
            "type": "composite",
            "name": "gate",
            "evaluators": members,
            "aggregator": aggregator or {"type": "weighted_average"},
            **extra,
        }
    )


def context(tmp_path: Path, judges=None) -> EvalContext:
    case = EvalCase.model_validate({"id": "c1", "input": "Give a and b.", "expected_outcome": "a and b right"})
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=tmp_path,
        answer=ANSWER,
        expected=EXPECTED,
        question="Give a and b.",
        case=case,
        judges=judges or {},
        default_judge="judge" if judges else None,
    )


WEIGHTED = [
    pytest.param([RIGHT, WRONG], None, 0.5, "fail", id="equal-weights-by-default"),
    pytest.param([RIGHT, WRONG], {"right": 3, "wrong": 1}, 0.75, "partial", id="weights-by-member-name"),
    pytest.param([RIGHT, WRONG], {"right": 1}, 0.5, "fail", id="unnamed-member-weighs-1"),
    pytest.param([RIGHT, WRONG], {"right": 0, "wrong": 0}, 0.0, "fail", id="all-weights-0-score-0"),
    pytest.param([RIGHT, SKIPS], None, 1.0, "pass", id="skipped-member-left-out"),
    pytest.param([RIGHT, {**WRONG, "weight": 9}], None, 0.5, "fail", id="member-own-weight-ignored"),
]


@pytest.mark.parametrize(("members", "weights", "score", "verdict"), WEIGHTED)
def test_weighted_average(tmp_path, members, weights, score, verdict):
    aggregator = {"type": "weighted_average", **({"weights": weights} if weights else {})}
    result = run_evaluator(composite(members, aggregator), context(tmp_path))
    assert (result.status, result.score, result.verdict, result.type) == ("processed", score, verdict, "composite")
    assert [child.name for child in result.evaluator_results] == [m["name"] for m in members]
    assert [child.weight for child in result.evaluator_results] == [
        (weights or {}).get(m["name"], 1.0) for m in members
    ]


def test_weighted_average_prefixes_hits_misses_and_joins_reasoning(tmp_path):
    result = run_evaluator(composite([RIGHT, HALF]), context(tmp_path))
    assert result.hits == ["[right] a", "[half] a"]
    assert result.misses == ["[half] b (value mismatch)"]
    assert result.reasoning == "right: 1/1 fields matched; half: 1/2 fields matched"
    assert result.details == {"aggregator": {"type": "weighted_average"}}
    assert result.score == 0.75


def test_member_error_makes_the_composite_an_error(tmp_path):
    result = run_evaluator(composite([RIGHT, BROKEN], weight=2), context(tmp_path))
    broken = result.evaluator_results[1]
    assert broken.status == "error"
    assert (result.status, result.score, result.verdict, result.weight) == ("error", 0.0, "fail", 2.0)
    assert result.reasoning == f"composite 'gate': member 'broken' failed: {broken.reasoning}"
    assert result.misses == [result.reasoning]
    assert case_verdict([result]).verdict == "fail"  # counted against the case, as any evaluator error


def test_every_member_skipped_skips_the_composite(tmp_path):
    result = run_evaluator(composite([SKIPS]), context(tmp_path))
    assert (result.status, result.score, result.verdict) == ("skipped", None, None)
    assert result.reasoning == "no member produced a score: skips: " + result.evaluator_results[0].reasoning


def test_nested_composite(tmp_path):
    inner = {
        "name": "inner",
        "type": "composite",
        "evaluators": [RIGHT, WRONG],
        "aggregator": {"type": "weighted_average", "weights": {"right": 3, "wrong": 1}},
    }
    result = run_evaluator(composite([inner, HALF], {"type": "weighted_average"}), context(tmp_path))
    assert result.score == pytest.approx((0.75 + 0.5) / 2)
    [nested, half] = result.evaluator_results
    assert (nested.type, nested.score, [c.name for c in nested.evaluator_results]) == (
        "composite",
        0.75,
        ["right", "wrong"],
    )
    assert result.hits[0] == "[inner] [right] a"
    # JSONL: children nested at any depth, and no empty `evaluator_results` on plain evaluators.
    row = ResultRow(
        timestamp="t",
        eval_id="c1",
        dataset="d",
        target="t",
        status="ok",
        score=0.6,
        verdict="partial",
        evaluator_results=[result],
    ).to_json_dict()
    written = row["evaluator_results"][0]
    assert [c["name"] for c in written["evaluator_results"][0]["evaluator_results"]] == ["right", "wrong"]
    assert "evaluator_results" not in written["evaluator_results"][1]
    assert ResultRow.model_validate(json.loads(json.dumps(row))).evaluator_results[0] == result


def test_the_case_counts_a_composite_as_one_evaluator(tmp_path):
    gate = run_evaluator(composite([RIGHT, WRONG], weight=3), context(tmp_path))
    other = run_evaluator(_field(RIGHT), context(tmp_path))
    verdict = case_verdict([gate, other])
    assert verdict.score == pytest.approx((0.5 * 3 + 1.0) / 4)


def _field(member):
    from agentv_py.models.fields import FieldAccuracyConfig

    return FieldAccuracyConfig.model_validate({k: v for k, v in member.items() if k != "name"} | {"name": "solo"})


# --- code_judge aggregator -------------------------------------------------------------------

SAFETY_GATE = """
import json, sys
results = json.load(sys.stdin)["results"]
if results["wrong"]["score"] < 0.8:
    print(json.dumps({"score": 0.9, "verdict": "fail", "misses": ["gate closed"], "reasoning": "wrong failed"}))
else:
    print(json.dumps({"score": results["right"]["score"], "hits": ["gate open"]}))
"""


def aggregator_script(tmp_path: Path, body: str) -> str:
    (tmp_path / "agg.py").write_text(body)
    return f"{sys.executable} agg.py"


def test_code_aggregator_reads_agentv_score_objects(tmp_path):
    body = "import json, sys\nopen('seen.json', 'w').write(sys.stdin.read())\nprint(json.dumps({'score': 0.7}))\n"
    config = composite([RIGHT, HALF], {"type": "code_judge", "path": aggregator_script(tmp_path, body)})
    result = run_evaluator(config, context(tmp_path))
    assert (result.status, result.score, result.verdict) == ("processed", 0.7, "partial")
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["results"]["half"] == {
        "score": 0.5,
        "verdict": "fail",
        "hits": ["a"],
        "misses": ["b (value mismatch)"],
        "expectedAspectCount": 2,
        "status": "processed",
        "reasoning": "1/2 fields matched",
        "details": result.evaluator_results[1].details,
    }
    assert result.details["aggregator"]["type"] == "code_judge"


def test_code_aggregator_verdict_fail_gates_the_composite(tmp_path):
    config = composite([RIGHT, WRONG], {"type": "code_judge", "path": aggregator_script(tmp_path, SAFETY_GATE)})
    result = run_evaluator(config, context(tmp_path))
    assert (result.status, result.score, result.verdict, result.passed) == ("processed", 0.9, "fail", False)
    assert result.misses == ["gate closed"] and result.reasoning == "wrong failed"
    assert case_verdict([result]).verdict == "fail"


BAD_AGGREGATORS = [
    pytest.param(
        "import sys\nsys.stderr.write('boom')\nsys.exit(3)\n",
        "composite 'gate': code_judge 'aggregator': exited with code 3 (0 or 1 with a JSON result expected) "
        "(stderr: boom)",
        id="crash",
    ),
    pytest.param(
        "print('all good!')\n",
        "composite 'gate': code_judge 'aggregator': stdout is not JSON: 'all good!'",
        id="junk",
    ),
    pytest.param(
        "print('{\"score\": 2}')\n",
        "composite 'gate': code_judge 'aggregator': score must be a number in [0, 1], got 2",
        id="score-out-of-range",
    ),
    pytest.param(
        'print(\'{"score": 1, "verdict": "great"}\')\n',
        "composite 'gate': code_judge 'aggregator': verdict must be pass, borderline or fail, got \"great\"",
        id="unknown-verdict",
    ),
]


@pytest.mark.parametrize(("body", "message"), BAD_AGGREGATORS)
def test_bad_code_aggregator_is_an_error(tmp_path, body, message):
    config = composite([RIGHT], {"type": "code_judge", "path": aggregator_script(tmp_path, body)})
    result = run_evaluator(config, context(tmp_path))
    assert (result.status, result.score, result.reasoning) == ("error", 0.0, message)
    assert [child.name for child in result.evaluator_results] == ["right"]


def test_hanging_code_aggregator_times_out(tmp_path):
    body = "import time\ntime.sleep(60)\n"
    path = aggregator_script(tmp_path, body)
    config = composite([RIGHT], {"type": "code_judge", "path": path, "timeout_seconds": 0.5})
    result = run_evaluator(config, context(tmp_path))
    assert result.status == "error"
    assert result.reasoning.startswith("composite 'gate': code_judge 'aggregator': timed out after 0.5")


# --- llm_judge aggregator --------------------------------------------------------------------


def judge(server) -> OpenAIRunner:
    key = "sk-judge-SECRET-123456"
    config = OpenAITarget.model_validate(
        {
            "name": "judge",
            "provider": "openai",
            "model": "judge-model",
            "api_key": key,
            "base_url": server.base_url,
            "max_retries": 0,
        }
    )
    return OpenAIRunner(config, [key])


def test_llm_aggregator_default_prompt_and_reply(tmp_path, chat_server):
    chat_server.reply(text(json.dumps({"score": 0.85, "hits": ["balanced"], "reasoning": "fine", "verdict": "pass"})))
    config = composite([RIGHT, WRONG], {"type": "llm_judge"})
    result = run_evaluator(config, context(tmp_path, {"judge": judge(chat_server)}))
    assert (result.status, result.score, result.verdict, result.hits, result.reasoning) == (
        "processed",
        0.85,
        "pass",
        ["balanced"],
        "fine",
    )
    [request] = chat_server.requests
    user = request.body["messages"][1]["content"]
    user = user if isinstance(user, str) else user[0]["text"]
    results = json.dumps(
        {child.name: _agentv(child) for child in result.evaluator_results}, ensure_ascii=False, indent=2
    )
    assert user == DEFAULT_AGGREGATOR_PROMPT.replace("{{EVALUATOR_RESULTS_JSON}}", results)
    assert result.details["judge"]["token_usage"] == {"input": 42, "output": 7}
    assert calls_judge(config)


def _agentv(child):
    from agentv_py.evaluators.composite import agentv_score

    return agentv_score(child.model_copy(update={"weight": 1.0}))


def test_llm_aggregator_inline_prompt_keeps_results_out_of_case_variables(tmp_path, chat_server):
    chat_server.reply(text(json.dumps({"score": 1})))
    prompt = "Task: {{input}}\nResults: {{ EVALUATOR_RESULTS_JSON }}"
    config = composite([{**RIGHT, "name": "{{input}}"}], {"type": "llm_judge", "prompt": prompt})
    run_evaluator(config, context(tmp_path, {"judge": judge(chat_server)}))
    user = chat_server.requests[0].body["messages"][1]["content"]
    user = user if isinstance(user, str) else user[0]["text"]
    assert user.startswith('Task: Give a and b.\nResults: {\n  "{{input}}": {')


def test_llm_aggregator_invalid_replies_are_an_error(tmp_path, chat_server):
    chat_server.reply(text("looks fine"), text("still prose"), text('{"score": 7}'))
    result = run_evaluator(composite([RIGHT], {"type": "llm_judge"}), context(tmp_path, {"judge": judge(chat_server)}))
    assert result.status == "error"
    assert result.reasoning.startswith(
        "composite 'gate': llm_judge aggregator: no valid reply from judge target 'judge' in 3 attempts"
    )


def test_llm_aggregator_without_judge_is_an_error(tmp_path):
    result = run_evaluator(composite([RIGHT], {"type": "llm_judge"}), context(tmp_path))
    assert result.status == "error"
    assert result.reasoning.startswith("composite 'gate': llm_judge aggregator: no judge target")


# --- config errors ---------------------------------------------------------------------------

CONFIG_ERRORS = [
    pytest.param({"evaluators": []}, "evaluators must list at least one member evaluator", id="no-members"),
    pytest.param(
        {"evaluators": [RIGHT, {**WRONG, "name": "right"}]},
        "duplicate member name 'right' (first used by evaluators[0])",
        id="duplicate-names",
    ),
    pytest.param(
        {"evaluators": [{"type": "field_accuracy", "fields": [{"path": "a"}]}] * 2},
        "duplicate member name 'field_accuracy'",
        id="unnamed-members-of-one-type",
    ),
    # pydantic's own refusal: its (loc, error type), never its words
    pytest.param({"aggregator": None}, (("aggregator",), "model_type"), id="aggregator-null"),
    pytest.param({"aggregator": {"type": "weighted_avg"}}, "(did you mean 'weighted_average'?)", id="unknown-type"),
    pytest.param({"aggregator": {}}, "aggregator needs a 'type'", id="aggregator-type-missing"),
    pytest.param(
        {"aggregator": {"type": "weighted_average", "weights": {"rigth": 1}}},
        "weights names 'rigth', which is not a member (did you mean 'right'?). Members: right, wrong",
        id="weight-of-no-member",
    ),
    pytest.param(
        {"aggregator": {"type": "weighted_average", "path": "x"}},
        "option 'path' does not apply to aggregator type 'weighted_average' (options for 'weighted_average': weights)",
        id="foreign-option",
    ),
    pytest.param({"aggregator": {"type": "code_judge"}}, "a code_judge aggregator needs 'path'", id="no-path"),
    pytest.param(
        {"aggregator": {"type": "llm_judge", "prompt": "Judge it."}},
        "the aggregator prompt must contain {{EVALUATOR_RESULTS_JSON}}",
        id="prompt-without-results",
    ),
]


@pytest.mark.parametrize(("change", "message"), CONFIG_ERRORS)
def test_config_errors(change, message):
    data = {
        "type": "composite",
        "name": "gate",
        "evaluators": [RIGHT, WRONG],
        "aggregator": {"type": "weighted_average"},
    }
    with pytest.raises(ValueError, match=None) as info:
        CompositeConfig.model_validate({**data, **change})
    if isinstance(message, tuple):
        assert [(error["loc"], error["type"]) for error in info.value.errors()] == [message]
    else:
        assert message in str(info.value)


def test_missing_aggregator_is_required():
    with pytest.raises(ValidationError) as info:
        CompositeConfig.model_validate({"type": "composite", "evaluators": [RIGHT]})
    assert [(error["loc"], error["type"]) for error in info.value.errors()] == [(("aggregator",), "missing")]
