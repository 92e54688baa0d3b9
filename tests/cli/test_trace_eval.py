"""`agentv eval` with the trace evaluators against a real cli target (tests/fixtures/targets/
trace_agent.py) printing AgentV envelopes: AgentV's example datasets score as its baselines
recorded, and hostile envelopes never raise and never pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_eval import invoke, rows
from tests.conftest import script

# AgentV's examples/features/tool-trajectory-simple/evals/dataset.yaml (cdf415031), comments cut.
TRAJECTORY_SIMPLE = """\
description: Tool trajectory evaluator examples for agent execution validation
execution:
  target: mock_agent
evalcases:
  - id: any-order-pass
    expected_outcome: Agent researches the topic.
    input:
      - role: user
        content: Research the key differences between REST and GraphQL APIs.
    execution:
      evaluators:
        - name: tool-usage-check
          type: tool_trajectory
          mode: any_order
          minimums:
            knowledgeSearch: 2
            documentRetrieve: 1
  - id: in-order-pass
    expected_outcome: Agent follows the correct data processing workflow.
    input:
      - role: user
        content: Process the customer data from the API endpoint.
    execution:
      evaluators:
        - name: workflow-sequence
          type: tool_trajectory
          mode: in_order
          expected:
            - tool: fetchData
            - tool: validateSchema
            - tool: transformData
            - tool: saveResults
  - id: exact-auth-flow
    expected_outcome: Agent performs authentication in the exact required sequence.
    input:
      - role: user
        content: Authenticate the user with provided credentials.
    execution:
      evaluators:
        - name: auth-sequence-exact
          type: tool_trajectory
          mode: exact
          expected:
            - tool: checkCredentials
            - tool: generateToken
            - tool: auditLog
  - id: partial-match
    expected_outcome: Agent should use search, retrieve, and report tools.
    input:
      - role: user
        content: Search for information and generate a report.
    execution:
      evaluators:
        - name: tool-check
          type: tool_trajectory
          mode: any_order
          minimums:
            knowledgeSearch: 1
            documentRetrieve: 1
            generateReport: 1
  - id: exact-args-match
    expected_outcome: Agent searches for weather.
    input:
      - role: user
        content: What's the weather like in Paris?
    execution:
      evaluators:
        - name: arg-validation
          type: tool_trajectory
          mode: in_order
          expected:
            - tool: search
              args:
                query: "weather Paris"
            - tool: get_weather
              args:
                location: "Paris"
  - id: skip-args-validation
    expected_outcome: Agent loads data, transforms it, and saves.
    input:
      - role: user
        content: Load customer data, normalize it, and save
    execution:
      evaluators:
        - name: workflow-sequence-only
          type: tool_trajectory
          mode: in_order
          expected:
            - tool: load_data
              args:
                source: "customers"
            - tool: transform
              args: any
            - tool: save_data
              args: any
"""

# (eval_id, score, verdict, hits, misses) from AgentV's dataset.baseline.jsonl of that example.
TRAJECTORY_BASELINE = {
    "any-order-pass": (
        1.0,
        "pass",
        ["knowledgeSearch: called 2 times (required ≥2)", "documentRetrieve: called 1 times (required ≥1)"],
        [],
    ),
    "in-order-pass": (
        1.0,
        "pass",
        [
            "Found fetchData at position 0",
            "Found validateSchema at position 1",
            "Found transformData at position 2",
            "Found saveResults at position 3",
        ],
        [],
    ),
    "exact-auth-flow": (
        1.0,
        "pass",
        ["Position 0: checkCredentials", "Position 1: generateToken", "Position 2: auditLog"],
        [],
    ),
    "partial-match": (
        2 / 3,
        "partial",  # AgentV's `borderline`
        ["knowledgeSearch: called 2 times (required ≥1)", "documentRetrieve: called 1 times (required ≥1)"],
        ["generateReport: called 0 times (required ≥1)"],
    ),
    "exact-args-match": (1.0, "pass", ["Found search at position 0", "Found get_weather at position 1"], []),
    "skip-args-validation": (
        1.0,
        "pass",
        ["Found load_data at position 0", "Found transform at position 1", "Found save_data at position 2"],
        [],
    ),
}


@pytest.fixture
def agent(ws):
    ws.cli_target(f"python3 {script('trace_agent.py')} {{PROMPT}}", name="mock_agent")
    return ws


def by_id(path: str | Path) -> dict[str, dict]:
    return {row["eval_id"]: row for row in rows(path)}


def test_agentvs_tool_trajectory_example_scores_as_its_baseline(agent):
    agent.dataset(TRAJECTORY_SIMPLE)
    proc = subprocess.run(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "out.jsonl"],
        cwd=agent.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr  # partial-match does not pass
    found = by_id(agent.root / "out.jsonl")
    assert set(found) == set(TRAJECTORY_BASELINE)
    for eval_id, (score, verdict, hits, misses) in TRAJECTORY_BASELINE.items():
        (result,) = found[eval_id]["evaluator_results"]
        assert result["type"] == "tool_trajectory"
        assert (result["status"], result["score"], result["verdict"]) == ("processed", pytest.approx(score), verdict)
        assert (result["hits"], result["misses"]) == (hits, misses), eval_id
        assert found[eval_id]["score"] == pytest.approx(score)


METRICS = """\
execution:
  target: mock_agent
evalcases:
  - id: simple-thresholds-pass
    input: Hello, this is a simple question.
    execution:
      evaluators:
        - {name: efficiency-check, type: execution_metrics, max_tool_calls: 10, max_tokens: 2000,
           max_duration_ms: 10000}
  - id: comprehensive-thresholds
    input: Hello, give me a simple response.
    execution:
      evaluators:
        - name: full-efficiency-check
          type: execution_metrics
          max_tool_calls: 15
          max_llm_calls: 5
          max_tokens: 3000
          max_cost_usd: 0.1
          max_duration_ms: 30000
  - id: exploration
    input: Explore the docs and make small improvements.
    execution:
      evaluators:
        - {name: exploration-balance, type: execution_metrics, target_exploration_ratio: 0.6,
           exploration_tolerance: 0.2}
  - id: inefficient
    input: Be inefficient.
    execution:
      evaluators:
        - {name: latency, type: latency, threshold: 10000}
        - {name: cost, type: cost, budget: 0.01}
        - {name: tokens, type: token_usage, max_input: 4000, maxOutput: 2000, max_total: 6000}
        - {name: metrics, type: execution_metrics, max_tool_calls: 5, max_cost_usd: 0.05}
  - id: latency-assertions
    input: Latency check please.
    execution:
      evaluators:
        - name: fast-read
          type: tool_trajectory
          mode: exact
          expected:
            - {tool: Read, args: {path: config.json}, max_duration_ms: 200}
            - {tool: Write, max_duration_ms: 10}
"""


def test_trace_metrics_from_the_envelope_are_scored(agent):
    agent.dataset(METRICS)
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1")
    assert result.exit_code == 1, result.output
    found = {row["eval_id"]: {r["name"]: r for r in row["evaluator_results"]} for row in rows("out.jsonl")}

    simple = found["simple-thresholds-pass"]["efficiency-check"]
    assert simple["hits"] == ["Tool calls 0 <= 10 max", "Total tokens 27 <= 2000 max", "Duration 245ms <= 10000ms max"]
    assert simple["reasoning"] == "execution_metrics tool_calls=0, tokens=27, duration=245ms"
    full = found["comprehensive-thresholds"]["full-efficiency-check"]
    assert (full["score"], full["misses"]) == (1.0, [])
    assert full["reasoning"] == "execution_metrics tool_calls=0, llm_calls=1, tokens=27, cost=$0.0001, duration=245ms"
    ratio = found["exploration"]["exploration-balance"]
    assert ratio["hits"] == ["Exploration ratio 0.60 within tolerance of target 0.6"]

    slow = found["inefficient"]
    assert slow["latency"]["misses"] == ["Duration 25000ms > 10000ms threshold"]
    assert slow["latency"]["reasoning"] == "Execution took 25000ms (threshold: 10000ms)"
    assert slow["cost"]["misses"] == ["Cost $0.0450 > $0.0100 budget"]
    assert (slow["tokens"]["hits"], slow["tokens"]["misses"]) == (
        ["Input tokens 3500 <= 4000"],
        ["Output tokens 2800 > 2000", "Total tokens 6300 > 6000"],
    )
    assert slow["tokens"]["reasoning"] == "token_usage input=3500, output=2800, cached=0, total=6300"
    assert (slow["metrics"]["score"], slow["metrics"]["verdict"]) == (0.5, "fail")
    assert slow["metrics"]["misses"] == ["Tool calls 10 > 5 max"]

    latency = found["latency-assertions"]["fast-read"]
    assert latency["hits"] == ["Position 0: Read", "Read completed in 45ms (max: 200ms)", "Position 1: Write"]
    assert latency["misses"] == []
    assert latency["score"] == 1.0  # Write reported no duration: its assertion is skipped, as in AgentV
    assert latency["reasoning"] == "No duration data for Write; latency assertion skipped"


HOSTILE = {
    "calls-not-a-list": (
        "{type: tool_trajectory, mode: any_order, minimums: {search: 0}}",
        "Tool calls not readable: output_messages[0].tool_calls is not a list (got string)",
    ),
    "name-not-a-string": (
        "{type: tool_trajectory, mode: in_order, expected: [{tool: search}]}",
        "Tool calls not readable: output_messages[0].tool_calls[1].tool is not a string (got number 42)",
    ),
    "call-not-an-object": (
        "{type: execution_metrics, max_tool_calls: 10}",
        "Tool calls not readable: output_messages[0].tool_calls[1] is not an object (got string)",
    ),
    "duration-a-string": (
        "{type: tool_trajectory, mode: exact, expected: [{tool: Read, max_duration_ms: 100}]}",
        "Tool calls not readable: output_messages[0].tool_calls[0].duration_ms is not a number (got string '45')",
    ),
    "negative-tokens": (
        "{type: token_usage, max_total: 1000}",
        "Token usage input in trace is negative (got -5)",
    ),
    "string-tokens": (
        "{type: execution_metrics, max_tokens: 1000}",
        "Token usage input in trace is not a number (got string '100')",
    ),
    "huge-tokens": ("{type: token_usage, max_input: 1000}", f"Input tokens {10**30} > 1000"),
    "usage-a-list": ("{type: token_usage, max_input: 1000}", "No token usage data available in trace"),
    "cost-a-string": ("{type: cost, budget: 1}", "No cost data available in trace"),
    # a negative cost is dropped from the trace (as AgentV dropped it): the evaluator sees none
    "negative-cost": ("{type: cost, budget: 1}", "No cost data available in trace"),
}


def test_hostile_envelopes_never_raise_and_never_pass(agent):
    cases = "\n".join(
        f"  - id: {name}\n    input: 'hostile: {name}'\n    execution:\n      evaluators:\n        - {evaluator}"
        for name, (evaluator, _) in HOSTILE.items()
    )
    agent.dataset(f"execution:\n  target: mock_agent\nevalcases:\n{cases}\n")
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 1, result.output
    found = by_id("out.jsonl")
    assert set(found) == set(HOSTILE)
    for name, (_, miss) in HOSTILE.items():
        row = found[name]
        (evaluated,) = row["evaluator_results"]
        assert (row["status"], row["score"], row["verdict"]) == ("ok", 0.0, "fail"), name
        assert (evaluated["status"], evaluated["hits"], evaluated["misses"]) == ("processed", [], [miss]), name
    assert json.loads(json.dumps(found))  # every row is plain JSON
