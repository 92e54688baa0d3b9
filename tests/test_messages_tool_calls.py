"""`tool_calls` and `name` in messages (agentv-reference §1.3): validated, kept through to what
judges see (the code-judge payload, the reference answer, the ground truth) and sent to model
targets as text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentv_py.errors import ConfigError
from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.judge_payload import build_payload
from agentv_py.loading.dataset import load_dataset
from agentv_py.runner.chat_messages import case_messages

HEAD = """\
execution:
  evaluators:
    - {type: field_accuracy, fields: [{path: "[0].tool"}]}
evalcases:
  - id: c
    expected_outcome: the agent searches
"""

SEARCH = "{tool: search, input: {query: capital of France}, output: {hits: 3}, id: call-1}"


def dataset(ws, messages: str) -> Path:
    return ws.dataset(HEAD + messages)


THEIRS = "<library's words>"
"""In an expected message, stands for words a library writes (pydantic), which any release of it
may change: the test pins agentv's part around them, never theirs."""


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected` exactly, each THEIRS in it standing for some (non-empty) text."""
    return re.fullmatch(".+".join(map(re.escape, expected.split(THEIRS))), actual, re.DOTALL) is not None


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_dataset(path)
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param(
            "    input_messages: [{role: user, content: hi}]\n    expected_messages: [{role: assistant}]\n",
            "dataset.yaml:8: evalcases[0].expected_messages[0]: "
            "a message needs 'content' (or, for tool use, a non-empty 'tool_calls')",
            id="no-content-no-calls",
        ),
        pytest.param(
            "    input_messages: [{role: user, content: hi}]\n"
            "    expected_messages: [{role: assistant, tool_calls: []}]\n",
            "dataset.yaml:8: evalcases[0].expected_messages[0]: "
            "a message needs 'content' (or, for tool use, a non-empty 'tool_calls')",
            id="empty-calls",
        ),
        pytest.param(
            "    input_messages: [{role: user, content: hi}]\n"
            "    expected_messages: [{role: assistant, tool_calls: [{type: function, function: {name: s}}]}]\n",
            "dataset.yaml:8: evalcases[0].expected_messages[0].tool_calls[0]: write a tool call as "
            "{tool: <name>, input: <arguments>} (AgentV's shape), not in the chat API's "
            "{type: function, function: {name, arguments}}",
            id="openai-shape",
        ),
        pytest.param(
            "    input_messages: [{role: user, content: hi}]\n"
            "    expected_messages: [{role: assistant, tool_calls: [{tool: ' '}]}]\n",
            "dataset.yaml:8: evalcases[0].expected_messages[0].tool_calls[0].tool: tool must not be empty",
            id="blank-tool",
        ),
        pytest.param(
            "    input_messages: [{role: user, content: hi, name: 7}]\n",
            "dataset.yaml:7: evalcases[0].input_messages[0].name: " + THEIRS + ", got number 7",
            id="name-not-text",
        ),
    ],
)
def test_invalid_messages(ws, messages: str, expected: str) -> None:
    found = problems(dataset(ws, messages))
    assert any(matches(expected, problem) for problem in found), found


def test_tool_calls_and_name_reach_ground_truth_and_the_judge_payload(ws) -> None:
    path = dataset(
        ws,
        "    input_messages: [{role: user, name: alice, content: Where is Paris?}]\n"
        "    expected_messages:\n"
        "      - {role: assistant, name: planner, content: Let me search.}\n"
        f"      - {{role: assistant, tool_calls: [{SEARCH}]}}\n",
    )
    prepared = load_dataset(path).cases[0]
    calls = [{"tool": "search", "input": {"query": "capital of France"}, "output": {"hits": 3}, "id": "call-1"}]
    assert prepared.expected == calls  # a tool-use-only last message: its calls are the ground truth
    context = EvalContext(
        eval_id="c", dataset="d", dataset_dir=path.parent, answer="x", expected=prepared.expected, case=prepared.case
    )
    payload = build_payload(context, None)
    assert payload["expected_messages"] == [
        {"role": "assistant", "name": "planner", "content": "Let me search."},
        {"role": "assistant", "tool_calls": calls},
    ]
    assert payload["input_messages"] == [{"role": "user", "name": "alice", "content": "Where is Paris?"}]
    assert payload["reference_answer"] == json.dumps(calls, indent=2)


def test_model_targets_get_tool_calls_as_text(ws) -> None:
    path = dataset(
        ws,
        "    input_messages:\n"
        "      - {role: user, content: Where is Paris?}\n"
        f"      - {{role: assistant, tool_calls: [{SEARCH}]}}\n"
        "      - {role: tool, content: '3 hits'}\n"
        "      - {role: assistant, content: Searching more., tool_calls: [{tool: open}]}\n"
        "    expected_output: [{tool: search}]\n",  # something to compare (a case without is refused)
    )
    sent = [(m.role, m.text) for m in case_messages(load_dataset(path).cases[0])]
    calls = [{"tool": "search", "input": {"query": "capital of France"}, "output": {"hits": 3}, "id": "call-1"}]
    assert sent == [
        ("user", "Where is Paris?"),
        ("assistant", "[tool calls]\n" + json.dumps(calls, indent=2)),
        ("user", "[tool output]\n\n3 hits"),
        ("assistant", "Searching more.\n\n[tool calls]\n" + json.dumps([{"tool": "open"}], indent=2)),
    ]
