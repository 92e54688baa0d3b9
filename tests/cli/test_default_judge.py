"""`agentv eval` / `validate` with AgentV's defaults: a case without evaluators is scored by the default
llm_judge, and an openai eval target with no judge_target judges its own answers."""

from __future__ import annotations

import json

import pytest

from tests.chat_server import text
from tests.cli.test_eval import invoke, rows

KEY = "sk-default-judge-SECRET-123456"
VALID = json.dumps({"score": 0.9, "hits": ["greets"], "reasoning": "ok"})


@pytest.fixture
def model_target(ws, chat_server, monkeypatch):
    monkeypatch.setenv("DJ_KEY", KEY)
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: answer-model
            base_url: {chat_server.base_url}
            api_key: ${{{{ DJ_KEY }}}}
            max_retries: 0
    """)
    return chat_server


def dataset(ws, extra: str = "") -> None:
    ws.dataset(f"""
        execution:
          target: model
        evalcases:
          - id: greet
            expected_outcome: Greets the user.
            input: Say hello.
            expected_output: Hello!{extra}
    """)


def test_a_case_without_evaluators_is_judged_by_its_model_target(ws, model_target):
    dataset(ws)
    model_target.reply(text("Hello there!"), text(VALID))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    [row] = rows("o.jsonl")
    [judged] = row["evaluator_results"]
    assert (judged["name"], judged["type"], judged["score"]) == ("llm_judge", "llm_judge", 0.9)
    assert judged["details"]["judge"]["target"] == "model"
    answer, judge = (request.body for request in model_target.requests)
    assert answer["model"] == judge["model"] == "answer-model"
    assert judge["messages"][1]["content"] == (
        "Evaluate the candidate output for the task below.\n\n"
        "[Task input]\nSay hello.\n\n"
        "[Expected outcome]\nGreets the user.\n\n"
        "[Reference answer]\nHello!\n\n"
        "[Candidate output]\nHello there!\n"
    )
    assert KEY not in (ws.root / "o.jsonl").read_text() + result.output


def test_case_rubrics_are_judged_by_the_model_target_too(ws, model_target):
    dataset(ws, "\n            rubrics: [Says hello]")
    checks = {"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "it does"}], "overall_reasoning": "fine"}
    model_target.reply(text("Hello there!"), text(json.dumps(checks)))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    [row] = rows("o.jsonl")
    assert [(r["name"], r["type"], r["score"]) for r in row["evaluator_results"]] == [("rubric", "rubric", 1.0)]
    assert model_target.requests[1].body["model"] == "answer-model"


def test_validate_names_the_case_that_has_no_judge(ws):
    ws.cli_target("echo hi", name="model")
    dataset(ws)
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "dataset.yaml:4: evalcases[0]: case 'greet' has no evaluators, so AgentV's default llm_judge scores it, "
        "and it needs a judge target: set execution.judge_target in the dataset or judge_target on the eval "
        "target, pass --judge-target NAME, or give the case evaluators (target 'model' is a cli target; only a "
        "model target judges itself)",
        "1 problem found",
    ]
