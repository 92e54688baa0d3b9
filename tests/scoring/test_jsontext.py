"""JSON inside text (agentv_py.scoring.jsontext): the one fence finder and the one JSON loader."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentv_py.scoring.jsontext import fenced_blocks, loads

FENCES = [
    ("json-tag", '```json\n{"a": 1}\n```', ['{"a": 1}']),
    ("no-tag", '```\n{"a": 1}\n```', ['{"a": 1}']),
    ("upper-case-tag", '```JSON\n{"a": 1}\n```', ['{"a": 1}']),
    ("spaces-around-tag", '```  json \t\n{"a": 1}\n```', ['{"a": 1}']),
    ("crlf", '```json\r\n{"a": 1}\r\n```', ['{"a": 1}']),
    ("multi-line-content", '```json\n{\n  "a": 1\n}\n```', ['{\n  "a": 1\n}']),
    ("two-fences", '```json\n{"a": 1}\n```\ntext\n```json\n{"b": 2}\n```', ['{"a": 1}', '{"b": 2}']),
    ("unterminated", '```json\n{"a": 1}\n', []),
    ("inside-prose", 'Here it is:\n```json\n{"a": 1}\n```\nHope that helps.', ['{"a": 1}']),
    ("closing-fence-mid-line", 'Result: ```json\n{"a": 1}```.', ['{"a": 1}']),
    ("empty-block", "```json\n```", [""]),
    ("tag-and-content-on-one-line", '```json {"a": 1}```', []),
    ("other-language", "```python\nprint(1)\n```", []),
    ("mixed-case-tag", '```Json\n{"a": 1}\n```', []),
    ("no-fence", '{"a": 1}', []),
]


@pytest.mark.parametrize("text, blocks", [c[1:] for c in FENCES], ids=[c[0] for c in FENCES])
def test_fenced_blocks(text, blocks):
    assert fenced_blocks(text) == blocks


VALID = [
    ("object", '{"a": [1, 2.5, "x", null, true]}', {"a": [1, 2.5, "x", None, True]}),
    ("surrounding-whitespace", " \n[1]\r\n", [1]),
    ("scalar", "42", 42),
    ("big-int-exact", "123456789012345678901234567890", 123456789012345678901234567890),
    ("surrogate-pair", '"\\ud83d\\ude00"', "\U0001f600"),
    ("escaped-backslash-then-ud800", '"\\\\ud800"', "\\ud800"),
    ("tiny-float", "[1e-400]", [0.0]),
]


@pytest.mark.parametrize("text, value", [c[1:] for c in VALID], ids=[c[0] for c in VALID])
def test_loads_valid(text, value):
    assert loads(text) == value
    assert loads(text, allow_nan=True) == value


# (text, the offset of the problem): the message is the standard library's own, whatever its
# wording in the running Python, so it is compared with what json.loads says, never written here.
INVALID = [
    ("empty", "", 0),
    ("trailing-comma", '{"a": 1,}', 8),
    ("extra-data", "[1] [2]", 4),
    ("prose", "The answer is 42", 0),
    ("fenced", '```json\n{"a": 1}\n```', 0),
    ("bom", '\ufeff{"a": 1}', 0),
]


@pytest.mark.parametrize("text, offset", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_loads_invalid_in_both_modes(text, offset):
    with pytest.raises(json.JSONDecodeError) as stdlib:
        json.loads(text)
    for allow_nan in (False, True):
        with pytest.raises(json.JSONDecodeError) as caught:
            loads(text, allow_nan=allow_nan)
        assert caught.value.pos == offset
        assert str(caught.value) == str(stdlib.value)


def test_loads_refuses_a_bom_in_our_words():
    """agentv raises this one itself (as json.loads does), so its words are pinned."""
    for allow_nan in (False, True):
        with pytest.raises(json.JSONDecodeError) as caught:
            loads('\ufeff{"a": 1}', allow_nan=allow_nan)
        assert (caught.value.msg, caught.value.pos) == ("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)


def test_loads_too_deep_in_both_modes():
    for allow_nan in (False, True):
        with pytest.raises(ValueError) as caught:
            loads("[" * 100_000 + "]" * 100_000, allow_nan=allow_nan)
        assert str(caught.value) == "JSON nested too deeply"


NOT_STRICT = [
    ("nan", '{"score": NaN}', "NaN is not valid JSON"),
    ("infinity", "[Infinity]", "Infinity is not valid JSON"),
    ("minus-infinity", "[-Infinity]", "-Infinity is not valid JSON"),
    ("overflow", "[1e400]", "1e400 is not valid JSON (out of range for a float)"),
    ("negative-overflow", "[-1.5e999]", "-1.5e999 is not valid JSON (out of range for a float)"),
    ("lone-surrogate", '{"a": ["\\ud800"]}', "a string holds a lone surrogate escape (not valid Unicode)"),
    ("lone-surrogate-in-key", '{"\\udc00": 1}', "a string holds a lone surrogate escape (not valid Unicode)"),
]


@pytest.mark.parametrize("text, message", [c[1:] for c in NOT_STRICT], ids=[c[0] for c in NOT_STRICT])
def test_strict_refuses_what_python_json_accepts(text, message):
    with pytest.raises(ValueError) as caught:
        loads(text)
    assert str(caught.value) == message
    assert repr(loads(text, allow_nan=True)) == repr(json.loads(text))  # allow_nan reads like json.loads


def test_imports_only_cheap_standard_modules():
    """The judge SDK imports this module in judges' own interpreters: no orjson, pydantic,
    dataclasses or the rest of agentv."""
    code = (
        "import sys; before = set(sys.modules); import agentv_py.scoring.jsontext; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert not loaded & {"orjson", "pydantic", "dataclasses", "agentv_py.models"}
    assert {m for m in loaded if m.startswith("agentv_py")} == {
        "agentv_py",
        "agentv_py.scoring",
        "agentv_py.scoring.jsontext",
    }
