"""Multi-turn conversation cases (AgentV v4.42's `mode: conversation`; this tool's `conversation:`):
the target answers each turn with the conversation so far, each turn is scored, the case's score
aggregates them. Run end to end against a chat server on 127.0.0.1 and a real cli target."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.chat_server import Reply, text
from tests.cli.test_eval import invoke, rows

V442 = """\
execution:
  target: model
tests:
  - id: tutor
    mode: conversation
    criteria: keeps context
    aggregation: {aggregation}
    {extra}
    input:
      - role: system
        content: You are a tutor.
    turns:
      - input: What is 15% of 200?
        assertions:
          - type: contains
            value: "30"
      - input: Now double that result.
        assertions:
          - type: contains
            value: "60"
      - input: What did I ask first?
    assertions:
      - type: contains
        value: "user: What is 15% of 200?"
"""

ANSWERS = {"What is 15% of 200?": "It is 30.", "Now double that result.": "That is 50.", "What did I ask first?": "15%"}


def model_target(ws: Any, server: Any) -> None:
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: m
            base_url: {server.base_url}
            api_key: not-secret
            max_retries: 0
    """)


def last_user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def answering(body: dict[str, Any]) -> Reply:
    return text(ANSWERS[last_user(body)])


def sent(server: Any) -> list[list[tuple[str, str]]]:
    """Each request's messages as (role, text)."""
    out = []
    for request in server.requests:
        messages = []
        for m in request.body["messages"]:
            content = m["content"]
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            messages.append((m["role"], content))
        out.append(messages)
    return out


@pytest.mark.parametrize(("aggregation", "score"), [("mean", 0.75), ("min", 0.0), ("max", 1.0)])
def test_each_turn_is_answered_with_the_conversation_so_far_and_scored(ws, chat_server, aggregation, score):
    model_target(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.format(aggregation=aggregation, extra=""))
    chat_server.responder = answering
    result = invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl")
    assert result.exit_code == (0 if score >= 0.8 else 1), result.output
    assert sent(chat_server) == [
        [("system", "You are a tutor."), ("user", "What is 15% of 200?")],
        [
            ("system", "You are a tutor."),
            ("user", "What is 15% of 200?"),
            ("assistant", "It is 30."),
            ("user", "Now double that result."),
        ],
        [
            ("system", "You are a tutor."),
            ("user", "What is 15% of 200?"),
            ("assistant", "It is 30."),
            ("user", "Now double that result."),
            ("assistant", "That is 50."),
            ("user", "What did I ask first?"),
        ],
    ]
    [row] = rows("o.jsonl")
    assert row["score"] == pytest.approx(score)
    assert row["candidate_answer"] == "15%" and row["attempts"] == 3
    assert [m["content"] for m in row["output_messages"]][-2:] == ["What did I ask first?", "15%"]
    results = {r["name"]: r for r in row["evaluator_results"]}
    assert [(name, r["type"], r["score"]) for name, r in results.items()] == [
        ("turn-1", "conversation_turn", 1.0),
        ("turn-2", "conversation_turn", 0.0),
        ("turn-3", "conversation_turn", 1.0),
        ("conversation", "conversation", 1.0),
    ]
    assert results["turn-2"]["misses"] == ['Output does not contain "60"']
    assert results["turn-3"]["reasoning"] == "no evaluators for this turn: it scores 1"
    assert [r["name"] for r in results["turn-1"]["evaluator_results"]] == ["contains-30"]
    assert row["trace"]["token_usage"] == {"input": 126, "output": 21}


def test_window_size_sends_the_system_messages_and_the_last_exchanges(ws, chat_server):
    model_target(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.format(aggregation="mean", extra="window_size: 1"))
    chat_server.responder = answering
    assert invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl").exit_code == 1
    assert sent(chat_server)[2] == [
        ("system", "You are a tutor."),
        ("assistant", "That is 50."),
        ("user", "What did I ask first?"),
    ]


def test_on_turn_failure_stop_skips_the_turns_after_a_failed_one(ws, chat_server):
    model_target(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.format(aggregation="mean", extra="on_turn_failure: stop"))
    chat_server.responder = answering
    assert invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl").exit_code == 1
    assert len(chat_server.requests) == 2  # turn 3 is not asked
    [row] = rows("o.jsonl")
    turn3 = row["evaluator_results"][2]
    assert (turn3["name"], turn3["score"], turn3["verdict"]) == ("turn-3", 0.0, "fail")
    assert turn3["misses"] == ["skipped: an earlier turn failed (on_turn_failure: stop)"]
    assert row["score"] == pytest.approx(0.5)  # (1 + 0 + 0 + 1) / 4


def test_a_turn_with_an_expected_answer_and_no_graders_gets_the_default_judge(ws, chat_server):
    model_target(ws, chat_server)
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: m
            base_url: {chat_server.base_url}
            api_key: not-secret
            max_retries: 0
            judge_target: model
    """)
    ws.file(
        "dataset.eval.yaml",
        "execution: {target: model}\ntests:\n  - id: c\n    mode: conversation\n    input: Hi\n"
        "    turns:\n      - input: What is 15% of 200?\n        expected_output: '30'\n",
    )
    verdict = json.dumps({"score": 1.0, "hits": ["30"], "misses": [], "reasoning": "right"})
    chat_server.reply(text("It is 30."), text(verdict))
    result = invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    judge_prompt = "".join(part for _, part in sent(chat_server)[1])
    assert "It is 30." in judge_prompt and "30" in judge_prompt
    [row] = rows("o.jsonl")
    assert row["evaluator_results"][0]["evaluator_results"][0]["type"] == "llm_judge"


ANSWER = """\
import sys
prompt, out = sys.argv[1], sys.argv[2]
if prompt == "crash":
    sys.exit(3)
open(out, "w").write("echo: " + prompt)
"""


def test_our_format_and_a_target_failing_mid_conversation_is_a_target_error_keeping_the_turns_before(ws):
    ws.file("answer.py", ANSWER)
    ws.targets(f"""
        targets:
          - name: echo
            provider: cli
            command_template: {sys.executable} answer.py {{PROMPT}} {{OUTPUT_FILE}}
    """)
    ws.dataset("""
        execution: {target: echo}
        evalcases:
          - id: c
            input: Hello
            conversation:
              turns:
                - input: one
                  evaluators: [{type: equals, value: "echo: one"}]
                - input: crash
                - input: three
    """)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--max-retries", "0")
    assert result.exit_code == 4, result.output
    [row] = rows("o.jsonl")
    assert row["status"] == "error" and row["error"].startswith("turn-2: target 'echo' failed: exit code 3")
    assert [r["name"] for r in row["evaluator_results"]] == ["turn-1"]
    assert [m["content"] for m in row["output_messages"]] == ["Hello", "one", "echo: one", "crash"]


def test_a_cli_target_gets_the_turns_text_as_prompt_and_the_case_id_with_the_turn(ws):
    ws.file("answer.py", "import sys\nopen(sys.argv[3], 'w').write(sys.argv[1] + '|' + sys.argv[2])\n")
    ws.targets(f"""
        targets:
          - name: echo
            provider: cli
            command_template: {sys.executable} answer.py {{PROMPT}} {{EVAL_ID}} {{OUTPUT_FILE}}
    """)
    ws.dataset("""
        execution: {target: echo}
        evalcases:
          - id: c
            input: Hello
            conversation:
              aggregation: min
              turns:
                - {input: one, evaluators: [{type: equals, value: "one|c/turn-1"}]}
                - {input: two, evaluators: [{type: equals, value: "two|c/turn-2"}]}
    """)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    assert rows("o.jsonl")[0]["score"] == 1.0


def test_rescore_replays_each_turns_stored_answer_and_explain_shows_it(ws, chat_server):
    model_target(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.format(aggregation="min", extra=""))
    chat_server.responder = answering
    assert invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl").exit_code == 1
    asked = len(chat_server.requests)
    ws.file("dataset.eval.yaml", V442.format(aggregation="mean", extra="").replace('value: "60"', 'value: "50"'))
    result = invoke("rescore", "o.jsonl", "--dataset", "dataset.eval.yaml", "--out", "r.jsonl")
    assert result.exit_code == 0, result.output
    assert len(chat_server.requests) == asked  # nothing asked again
    [row] = rows("r.jsonl")
    assert row["score"] == 1.0 and row["attempts"] == 3
    assert [r["score"] for r in row["evaluator_results"]] == [1.0, 1.0, 1.0, 1.0]
    shown = invoke("explain", "r.jsonl", "tutor")
    assert "case score = mean of the turn scores and the conversation's" in shown.output
    assert 'sent: the answer (11 characters; first line "That is 50.")' in shown.output


def test_a_turns_structured_input_is_sent_as_its_json_text(ws, chat_server):
    model_target(ws, chat_server)
    ws.file(
        "dataset.eval.yaml",
        "execution: {target: model}\ntests:\n  - id: c\n    mode: conversation\n    input: Hi\n"
        "    turns:\n      - input: {ask: [1, 2]}\n",
    )
    chat_server.reply(text("ok"))
    assert invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl").exit_code == 0
    assert sent(chat_server)[0][-1] == ("user", '{"ask": [1, 2]}')


def test_a_batching_target_is_refused_for_conversation_cases_before_anything_runs(ws):
    ws.targets(f"""
        targets:
          - name: batch
            provider: cli
            provider_batching: true
            command_template: {sys.executable} -c pass {{OUTPUT_FILE}}
    """)
    ws.dataset("""
        execution: {target: batch}
        evalcases:
          - {id: c, input: Hi, conversation: {turns: [{input: one}]}}
    """)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert (
        "target 'batch' answers every case in one call (provider_batching: true), but case 'c' is a "
        "conversation, which needs a call per turn" in result.output
    )
