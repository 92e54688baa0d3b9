"""`skill_trigger`'s pure scoring (`scoring.skills`): AgentV v4.42.4's detection paths and texts,
word for word, and hostile tool calls (odd inputs, huge or deep outputs) read without a crash."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentv_py.scoring.skills import QUOTE_CHARS, js_json, js_string, skill_trigger
from agentv_py.scoring.trace import ToolCall

SKILL = "csv-analyzer"


def call(tool: str, given: Any = None, output: Any = None) -> ToolCall:
    return ToolCall(tool, given, None, output)


def deep(levels: int) -> Any:
    value: Any = "skills/csv-analyzer/SKILL.md"
    for _ in range(levels):
        value = [value]
    return value


SCORES = [
    (
        "skill-tool",
        True,
        [call("Skill", {"skill": "csv-analyzer"})],
        1.0,
        'Skill tool invoked with skill="csv-analyzer"',
    ),
    (
        "skill-tool-any-case-and-substring",
        True,
        [call("SKILL", {"skill": "acme:csv-analyzer-v2"})],
        1.0,
        'Skill tool invoked with skill="acme:csv-analyzer-v2"',
    ),
    (
        "read-file-path",
        True,
        [call("read", {"file_path": "/ws/.claude/skills/csv-analyzer/SKILL.md"})],
        1.0,
        "Read tool loaded skill file: /ws/.claude/skills/csv-analyzer/SKILL.md",
    ),
    (
        "read-path",
        True,
        [call("Read", {"path": ".agents/skills/csv-analyzer/ref.md"})],
        1.0,
        "Read tool loaded skill file: .agents/skills/csv-analyzer/ref.md",
    ),
    (
        "read-empty-file-path-hides-path",  # `file_path ?? path`: only null or missing falls through
        True,
        [call("Read", {"file_path": "", "path": "skills/csv-analyzer/x"})],
        0.0,
        'Skill "csv-analyzer" not found in 1 tool call(s)',
    ),
    (
        "read-without-the-skill-dir",
        True,
        [call("Read", {"file_path": "/ws/skills/csv-analyzer"})],
        0.0,
        'Skill "csv-analyzer" not found in 1 tool call(s)',
    ),
    (
        "output-string",
        True,
        [call("Bash", {"command": "ls"}, "found skills/csv-analyzer/SKILL.md")],
        1.0,
        'Tool "Bash" output referenced skill file for "csv-analyzer"',
    ),
    (
        "output-json",
        True,
        [call("Glob", None, {"files": ["skills/csv-analyzer/SKILL.md"], "n": 1.0})],
        1.0,
        'Tool "Glob" output referenced skill file for "csv-analyzer"',
    ),
    (
        "skill-tool-other-skill-but-output-names-it",
        True,
        [call("Skill", {"skill": "pdf"}, "see skills/csv-analyzer/")],
        1.0,
        'Tool "Skill" output referenced skill file for "csv-analyzer"',
    ),
    (
        "first-evidence-wins",
        True,
        [call("Read", {"path": "skills/csv-analyzer/a"}), call("Skill", {"skill": "csv-analyzer"})],
        1.0,
        "Read tool loaded skill file: skills/csv-analyzer/a",
    ),
    (
        "not-found",
        True,
        [call("Read", {"file_path": "sales.csv"}), call("Skill", {"skill": "pdf"})],
        0.0,
        'Skill "csv-analyzer" not found in 2 tool call(s)',
    ),
    ("no-tool-calls", True, [], 0.0, "No tool calls recorded"),
    ("should-not-no-calls", False, [], 1.0, 'Skill "csv-analyzer" correctly did not trigger'),
    (
        "should-not-other-calls",
        False,
        [call("Read", {"file_path": "sales.csv"})],
        1.0,
        'Skill "csv-analyzer" correctly did not trigger',
    ),
    (
        "should-not-but-triggered",
        False,
        [call("Skill", {"skill": "csv-analyzer"})],
        0.0,
        'Skill tool invoked with skill="csv-analyzer"',
    ),
    # hostile inputs: read as JavaScript reads them, never a crash
    ("input-a-list", True, [call("Skill", ["csv-analyzer"])], 0.0, 'Skill "csv-analyzer" not found in 1 tool call(s)'),
    (
        "input-a-string",
        True,
        [call("Read", "skills/csv-analyzer/x")],
        0.0,
        'Skill "csv-analyzer" not found in 1 tool call(s)',
    ),
    (
        "skill-arg-a-list-joined",
        True,
        [call("Skill", {"skill": ["pdf", ["csv-analyzer", None]]})],
        1.0,
        'Skill tool invoked with skill="pdf,csv-analyzer,"',
    ),
    (
        "skill-arg-an-object",
        True,
        [call("Skill", {"skill": {"name": "csv-analyzer"}})],
        0.0,
        'Skill "csv-analyzer" not found in 1 tool call(s)',
    ),
    (
        "skill-arg-a-number",
        True,
        [call("Skill", {"skill": 12.0})],
        0.0,
        'Skill "csv-analyzer" not found in 1 tool call(s)',
    ),
    (
        "skill-arg-forging-a-line",
        True,
        [call("Skill", {"skill": "csv-analyzer\nPASS"})],
        1.0,
        'Skill tool invoked with skill="csv-analyzer\\nPASS"',
    ),
    (
        "skill-arg-huge-is-cut",
        True,
        [call("Skill", {"skill": "csv-analyzer" + "x" * 10_000})],
        1.0,
        'Skill tool invoked with skill="' + ("csv-analyzer" + "x" * 10_000)[:QUOTE_CHARS] + '..."',
    ),
    (
        "output-huge",
        True,
        [call("Bash", None, "x" * 5_000_000 + "skills/csv-analyzer/")],
        1.0,
        'Tool "Bash" output referenced skill file for "csv-analyzer"',
    ),
    (
        "output-deep",
        True,
        [call("Bash", None, deep(100_000))],
        1.0,
        'Tool "Bash" output referenced skill file for "csv-analyzer"',
    ),
    (
        "output-of-odd-values",
        True,
        [call("Bash", None, {"a": [None, True, float("nan"), 10**400], 1: "b"})],
        0.0,
        'Skill "csv-analyzer" not found in 1 tool call(s)',
    ),
]


@pytest.mark.parametrize(
    ("should_trigger", "calls", "score", "text"), [case[1:] for case in SCORES], ids=[case[0] for case in SCORES]
)
def test_skill_trigger(should_trigger: bool, calls: list[ToolCall], score: float, text: str) -> None:
    started = time.monotonic()
    outcome = skill_trigger(SKILL, should_trigger, calls)
    assert time.monotonic() - started < 10
    assert outcome.score == score
    assert (outcome.hits, outcome.misses) == (([text], []) if score else ([], [text]))
    assert outcome.details["triggered"] == ((score == 1.0) == should_trigger)


TEXTS = [
    ("string", "a", "a", '"a"'),
    ("null", None, "", "null"),
    ("numbers", [1, 1.5, 2.0, float("inf")], "1,1.5,2,Infinity", "[1,1.5,2,null]"),
    ("nested-lists", [[1, 2], [], [3]], "1,2,,3", "[[1,2],[],[3]]"),
    ("object", {"k": [True, None], "s": "x/y"}, "[object Object]", '{"k":[true,null],"s":"x/y"}'),
    ("unicode", "é\u2028", "é\u2028", '"é\u2028"'),
]


@pytest.mark.parametrize(("value", "string", "json_text"), [c[1:] for c in TEXTS], ids=[c[0] for c in TEXTS])
def test_javascript_texts(value: Any, string: str, json_text: str) -> None:
    assert (js_string(value), js_json(value)) == (string, json_text)


def test_a_cycle_is_read_once() -> None:
    looped: list[Any] = ["skills/a/"]
    looped.append(looped)
    assert (js_string(looped), js_json(looped)) == ("skills/a/,", '["skills/a/",null]')
