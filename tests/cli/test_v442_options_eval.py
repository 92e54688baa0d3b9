"""`agentv eval` on an `evalcases` dataset using AgentV v4.42's evaluator options in this tool's
own format: `negate` and `id` on any evaluator, `tool_trajectory`'s `args_match` and modes
`superset` / `subset`, and a `composite` with the `threshold` aggregator; a real cli target
prints an AgentV envelope with tool calls."""

from __future__ import annotations

import json

from tests.cli.test_eval import invoke, rows
from tests.conftest import script

ENVELOPE = {
    "output_messages": [
        {
            "role": "assistant",
            "content": "Paris is sunny.",
            "tool_calls": [
                {"tool": "search", "input": {"query": "weather Paris", "limit": 5}},
                {"tool": "get_weather", "input": {"location": "Paris"}},
            ],
        }
    ]
}

DATASET = """\
execution:
  target: t
evalcases:
  - id: weather
    input_messages: [{role: user, content: [{type: file, value: envelope.json}]}]
    execution:
      evaluators:
        - {name: no-error, id: NO_ERROR, type: contains, value: error, negate: true}
        - {name: not-slow, type: tool_trajectory, mode: any_order, minimums: {search: 3}, negate: true}
        - name: needs-both
          type: tool_trajectory
          mode: superset
          args_match: exact
          expected:
            - {tool: get_weather, args: {location: Paris}}
            - {tool: search, args: {query: weather Paris}, args_match: [query]}
        - {name: read-only, type: tool_trajectory, mode: subset, expected: [{tool: search}]}
        - name: gate
          type: composite
          evaluators:
            - {name: sunny, type: contains, value: sunny}
            - {name: rainy, type: contains, value: rain}
          aggregator: {type: threshold, threshold: 0.5}
"""


def test_v442_options_score_an_evalcases_dataset(ws):
    ws.cli_target(f"sh {script('echo_file.sh')} {{FILES}}")
    ws.file("envelope.json", json.dumps(ENVELOPE))
    ws.dataset(DATASET)
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    [row] = rows("out.jsonl")
    found = {r["name"]: (r["score"], r["hits"], r["misses"]) for r in row["evaluator_results"]}
    assert found == {
        "no-error": (1.0, ['Output does not contain "error"'], []),
        "not-slow": (1.0, ["search: called 1 times (required ≥3)"], []),
        "needs-both": (1.0, ["Found get_weather at position 1", "Found search at position 0"], []),
        "read-only": (0.5, ["Position 0: search is in allowed set"], ["Position 1: get_weather is not in allowed set"]),
        "gate": (
            0.5,
            ["1/2 evaluators passed (threshold: 0.5)", '[sunny] Output contains "sunny"'],
            ['[rainy] Output does not contain "rain"'],
        ),
    }
    negated = next(r for r in row["evaluator_results"] if r["name"] == "no-error")
    assert negated["details"] == {"negated": True}
    assert "NO_ERROR" not in json.dumps(row)  # `id` is a label of the file only
    assert row["score"] == 0.8
