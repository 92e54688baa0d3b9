"""`agentv eval` with `skill_trigger` against a real cli target (tests/fixtures/targets/
skill_agent.py) printing AgentV v4.42 envelopes with tool calls: in this tool's format and in
v4.42's (`tests:`, `type: skill-trigger`, AgentV's default name)."""

from __future__ import annotations

from tests.cli.test_eval import invoke, rows
from tests.conftest import script

OWN = """\
execution:
  target: agent
evalcases:
  - {id: skill-tool, input: skill please, execution: {evaluators: [{type: skill_trigger, skill: csv-analyzer}]}}
  - {id: read-tool, input: read please, execution: {evaluators: [{type: skill_trigger, skill: csv-analyzer}]}}
  - {id: tool-output, input: bash please, execution: {evaluators: [{type: skill_trigger, skill: csv-analyzer}]}}
  - id: not-used
    input: other please
    execution:
      evaluators:
        - {name: used, type: skill_trigger, skill: csv-analyzer}
        - {name: unused, type: skill_trigger, skill: csv-analyzer, should_trigger: false}
  - {id: no-calls, input: none please, execution: {evaluators: [{type: skill_trigger, skill: csv-analyzer}]}}
  - {id: hostile, input: hostile please, execution: {evaluators: [{type: skill_trigger, skill: csv-analyzer}]}}
  - id: broken
    input: broken please
    execution: {evaluators: [{type: skill_trigger, skill: csv-analyzer, should_trigger: false}]}
"""

EXPECTED = {
    "skill-tool": [("skill-trigger-csv-analyzer", 1.0, ['Skill tool invoked with skill="csv-analyzer"'], [])],
    "read-tool": [
        (
            "skill-trigger-csv-analyzer",
            1.0,
            ["Read tool loaded skill file: /ws/.claude/skills/csv-analyzer/SKILL.md"],
            [],
        )
    ],
    "tool-output": [
        ("skill-trigger-csv-analyzer", 1.0, ['Tool "Bash" output referenced skill file for "csv-analyzer"'], [])
    ],
    "not-used": [
        ("used", 0.0, [], ['Skill "csv-analyzer" not found in 1 tool call(s)']),
        ("unused", 1.0, ['Skill "csv-analyzer" correctly did not trigger'], []),
    ],
    "no-calls": [("skill-trigger-csv-analyzer", 0.0, [], ["No tool calls recorded"])],
    "hostile": [("skill-trigger-csv-analyzer", 0.0, [], ['Skill "csv-analyzer" not found in 2 tool call(s)'])],
    "broken": [
        (
            "skill-trigger-csv-analyzer",
            0.0,
            [],
            ["Tool calls not readable: output_messages[0].tool_calls[0].tool is not a string (got number 42)"],
        )
    ],
}


def results(path: str) -> dict[str, list[tuple[str, float, list[str], list[str]]]]:
    return {
        row["eval_id"]: [(r["name"], r["score"], r["hits"], r["misses"]) for r in row["evaluator_results"]]
        for row in rows(path)
    }


def test_skill_trigger_scores_the_targets_tool_calls(ws):
    ws.cli_target(f"python3 {script('skill_agent.py')} {{PROMPT}}", name="agent")
    ws.dataset(OWN)
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1")
    assert result.exit_code == 1, result.output
    assert results("out.jsonl") == EXPECTED


V4_42 = """\
name: skills
execution:
  target: agent
tests:
  - id: csv-top-months
    criteria: The agent uses the csv-analyzer skill
    input: skill please
    assertions:
      - type: skill-trigger
        skill: csv-analyzer
        should_trigger: true
  - id: irrelevant-query
    input: other please
    assertions:
      - type: skill-trigger
        skill: csv-analyzer
        should_trigger: false
      - {name: named, type: skill-trigger, skill: pdf, negate: true}
"""


def test_a_v4_42_dataset_runs_with_agentvs_names(ws):
    ws.cli_target(f"python3 {script('skill_agent.py')} {{PROMPT}}", name="agent")
    ws.dataset(V4_42, name="skills.eval.yaml")
    assert invoke("validate", "skills.eval.yaml").exit_code == 0
    result = invoke("eval", "skills.eval.yaml", "--out", "out.jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert results("out.jsonl") == {
        "csv-top-months": [("skill-trigger-csv-analyzer", 1.0, ['Skill tool invoked with skill="csv-analyzer"'], [])],
        "irrelevant-query": [
            ("skill-trigger-csv-analyzer", 1.0, ['Skill "csv-analyzer" correctly did not trigger'], []),
            ("named", 1.0, ['Skill "pdf" not found in 1 tool call(s)'], []),
        ],
    }
