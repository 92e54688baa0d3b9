"""`agentv eval` with composite evaluators: AgentV's own composite example (its prompts, its node
aggregator) run unchanged against a local judge, member errors in the summary, nested rows in
`agentv metrics`."""

from __future__ import annotations

import json
import sys

from tests.cli.test_eval import invoke, rows

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
