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


# The fence finder and the loader are jsontext's (shared with extract_json and code judges).
MORE_CASES = [
    ("fenced-crlf", 'Result:\r\n```json\r\n{"a": 1}\r\n```\r\n', {"a": 1}),
    ("fenced-upper-case-tag", "```JSON\n[1]\n```", [1]),
    ("fenced-space-before-tag", 'See ``` json\n{"a": 5}\n```', {"a": 5}),
    ("first-of-two-fences", '```json\n{"a": 1}\n```\nor\n```json\n{"b": 2}\n```', {"a": 1}),
    ("unterminated-fence-braces", '```json\n{"a": 3}', {"a": 3}),
    ("nan-is-not-json", '{"a": NaN}', NOT_JSON),
    ("overflow-is-kept-as-its-literal", '{"a": 1e400}', {"a": "1e400"}),
    ("lone-surrogate-is-not-json", '{"a": "\\ud800"}', NOT_JSON),
    ("big-int-exact", '{"n": 123456789012345678901234567890}', {"n": 123456789012345678901234567890}),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in MORE_CASES], ids=[c[0] for c in MORE_CASES])
def test_parse_answer_json_shared_fences_and_strict_json(text, expected):
    if expected is NOT_JSON:
        assert parse_answer_json(text) is NOT_JSON
    else:
        assert parse_answer_json(text) == expected


def test_same_reading_without_orjson():
    """Judges import this module from bare Pythons: the reading must not depend on orjson."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['orjson'] = None\n"
        "from agentv_py.scoring.answer import parse_answer_json, NOT_JSON\n"
        "print(parse_answer_json('{\"a\": NaN}') is NOT_JSON, parse_answer_json('```json\\n[1]\\n```'), "
        "'orjson' in sys.modules and sys.modules['orjson'] is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "[1]", "False"]
