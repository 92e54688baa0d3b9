"""`agentv eval` with composite evaluators: AgentV's own composite example (its prompts, its node
aggregator) run unchanged against a local judge, member errors in the summary, nested rows in
`agentv metrics`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.chat_server import text
from tests.cli.test_eval import invoke, rows

EXAMPLE = Path("/work/proof/agentv-cdf/examples/features/composite")
KEY = "sk-composite-SECRET-24680"


def targets(ws, server) -> None:
    ws.targets(f"""
        targets:
          - name: default
            provider: cli
            command_template: "echo A short, complete answer."
            judge_target: judge
          - name: judge
            provider: openai
            model: judge-model
            base_url: {server.base_url}
            api_key: {KEY}
            max_retries: 0
    """)


def _user_text(body: dict) -> str:
    content = body["messages"][1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


@pytest.mark.skipif(not EXAMPLE.is_dir() or shutil.which("node") is None, reason="needs AgentV's example and node")
def test_agentv_composite_example_runs_unchanged(ws, chat_server):
    shutil.copytree(EXAMPLE, ws.root / "composite")
    targets(ws, chat_server)

    def reply(body: dict) -> object:
        user = _user_text(body)
        if "Review the child evaluator results below" in user:  # the aggregator's prompt FILE, read
            return text(json.dumps({"score": 0.95, "hits": ["balanced"], "reasoning": "both high"}))
        if "Check if the response is safe, contains no PII" in user:  # the strict safety member
            return text(json.dumps({"score": 1.0, "reasoning": "safe"}))
        return text(json.dumps({"score": 0.9, "hits": ["clear"], "reasoning": "good"}))

    chat_server.responder = reply
    result = invoke("eval", "composite/evals/dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    by_id = {row["eval_id"]: row for row in rows("o.jsonl")}

    weighted = by_id["weighted-average-example"]["evaluator_results"][0]
    assert (weighted["name"], weighted["type"], weighted["score"]) == ("release_gate", "composite", 0.9)
    assert [(c["name"], c["weight"]) for c in weighted["evaluator_results"]] == [("safety", 0.3), ("quality", 0.7)]
    assert weighted["hits"] == ["[safety] clear", "[quality] clear"]
    assert weighted["reasoning"] == "safety: good; quality: good"

    gate = by_id["code-judge-safety-gate"]["evaluator_results"][0]  # AgentV's node script decided
    assert (gate["score"], gate["verdict"]) == (0.9, "pass")
    assert gate["reasoning"] == "Safety passed (1.00), score based on quality (0.90)"
    assert gate["hits"] == ["Safety check passed", "clear"]

    final = by_id["llm-judge-conflict-resolution"]["evaluator_results"][0]
    assert (final["score"], final["hits"], final["reasoning"]) == (0.95, ["balanced"], "both high")
    assert final["details"]["aggregator"]["type"] == "llm_judge"

    nested = by_id["nested-composite"]["evaluator_results"][0]
    content = nested["evaluator_results"][0]
    assert [c["name"] for c in content["evaluator_results"]] == ["accuracy", "clarity"]
    assert nested["score"] == pytest.approx(0.9)

    # Members use their own prompt files (AgentV's composite ignored them and used its default).
    member_prompts = [_user_text(r.body) for r in chat_server.requests]
    assert any(p.startswith("Check factual accuracy of the ML concepts.") for p in member_prompts)
    assert by_id["nested-composite"]["trace"]["judge_token_usage"] == {"input": 3 * 42, "output": 3 * 7}


def test_member_error_is_an_evaluator_error_of_the_run(ws):
    ws.cli_target("echo '{\"a\": 1}'")
    ws.file("crash.py", "import sys\nsys.stderr.write('kaput')\nsys.exit(2)\n")
    ws.dataset(f"""
        execution:
          target: t
          evaluators:
            - name: gate
              type: composite
              evaluators:
                - {{name: fields, type: field_accuracy, fields: [{{path: a}}]}}
                - {{name: crashy, type: code_judge, script: [{sys.executable}, crash.py]}}
              aggregator: {{type: weighted_average}}
        evalcases:
          - id: c1
            input: give a
            expected_output: {{a: 1}}
    """)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 4, result.output
    [row] = rows("o.jsonl")
    [gate] = row["evaluator_results"]
    message = (
        "composite 'gate': member 'crashy' failed: code_judge 'crashy': exited with code 2 "
        "(0 or 1 with a JSON result expected) (stderr: kaput)"
    )
    assert (gate["status"], gate["score"], gate["reasoning"]) == ("error", 0.0, message)
    assert [(c["name"], c["status"]) for c in gate["evaluator_results"]] == [
        ("fields", "processed"),
        ("crashy", "error"),
    ]
    assert f"evaluator error: gate: {message}" in result.output


def test_metrics_reads_composite_members(ws):
    ws.cli_target("echo ok")
    judge = ws.file(
        "metrics.py",
        "import json\nprint(json.dumps({'score': 1, 'details': {'metrics': {'f': {'tp': 1, 'fn': 1}}}}))\n",
    )
    ws.dataset(f"""
        execution:
          target: t
          evaluators:
            - name: gate
              type: composite
              evaluators:
                - {{name: counted, type: code_judge, script: [{sys.executable}, {judge.name}]}}
              aggregator: {{type: weighted_average}}
        evalcases:
          - {{id: c1, input: hi, expected_output: ok}}
    """)
    assert invoke("eval", "dataset.yaml", "--out", "o.jsonl").exit_code == 0
    data = json.loads(invoke("metrics", "o.jsonl", "-f", "json", "--evaluator", "counted").stdout)
    assert data["fields"]["f"]["tp"] == 1 and data["fields"]["f"]["fn"] == 1
