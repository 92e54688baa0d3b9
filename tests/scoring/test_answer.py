from __future__ import annotations

import pytest

from agentv_py.scoring.answer import NOT_JSON, parse_answer_json

CASES = [
    ("plain-object", '{"a": 1}', {"a": 1}),
    ("plain-list", "[1, 2]", [1, 2]),
    ("fenced", 'Here you go:\n```json\n{"a": 1}\n```\nThanks', {"a": 1}),
    ("fenced-no-language", '```\n{"a": 2}\n```', {"a": 2}),
    ("prose-around-braces", 'The answer is {"a": {"b": 3}} as requested.', {"a": {"b": 3}}),
    ("prose-around-brackets", "Boxes: [[1, 2, 3, 4]] done", [[1, 2, 3, 4]]),
    ("scalar-json", "42", 42),
    ("not-json", "no structured data here", NOT_JSON),
    ("broken-json", '{"a": 1', NOT_JSON),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parse_answer_json(text, expected):
    assert parse_answer_json(text) == expected if expected is not NOT_JSON else parse_answer_json(text) is NOT_JSON
