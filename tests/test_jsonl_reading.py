"""The JSONL reader's fast path (each line read by orjson, kept as its text) against the standard
library's reading of every line (`jsonl._read_line`, what every line went through before): over
hand-written lines and hypothesis-generated objects written in several styles, the cases (types
included), their line numbers and every problem's text are the same."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.errors import Problem
from agentv_py.loading import jsonl
from agentv_py.loading.jsonl import JsonlCases
from agentv_py.loading.source import unpack_cases


def typed(value: Any) -> Any:
    """`value` with every scalar tagged by its type: `True` and `1`, `1.0` and `1` differ."""
    if isinstance(value, dict):
        return ("dict", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


def standard(content: bytes) -> tuple[list[Any], list[int], list[str]]:
    """Every line through the standard library's reading, as before the fast path."""
    if content.startswith(b"\xef\xbb\xbf"):
        content = content[3:]
    cases, lines, problems = [], [], []
    found: list[Problem] = []
    for number, raw in enumerate(content.split(b"\n"), 1):
        case = jsonl._read_line(raw, number, "d.jsonl", found)
        if case is not None:
            cases.append(typed(case))
            lines.append(number)
    problems = [str(problem) for problem in found]
    return cases, lines, problems


def fast(content: bytes) -> tuple[list[Any], list[int], list[str]]:
    packed, lines, found = jsonl._parse_lines(content, "d.jsonl")
    assert isinstance(packed, JsonlCases)
    return [typed(case) for case in unpack_cases(packed)], lines, [str(problem) for problem in found]


def assert_same(content: bytes) -> None:
    assert fast(content) == standard(content)


LINES = {
    "compact": b'{"id":"a","n":1,"x":1.5,"t":true,"z":null,"l":[1,{"b":"c"}]}',
    "spaced": b'{"id": "a", "n": 1, "x": [1.5, -0.0, 1e3, 1E-3]}',
    "ascii-escaped": b'{"id": "\\u00e9t\\u00e9", "s": "\\ud83d\\ude00", "q": "a\\"b\\\\c\\/d\\n"}',
    "utf-8": '{"id":"été","s":"😀 日本"}'.encode(),
    "crlf": b'{"id":"a"}\r',
    "surrounding-spaces": b'  {"id":"a"}  \t',
    "empty-object": b"{}",
    "blank": b"",
    "spaces-only": b"   \t ",
    "nbsp-only": "\u00a0\u2028".encode(),
    "duplicate-key": b'{"id":"a","id":"b"}',
    "duplicate-nested": b'{"id":"a","o":{"k":1,"k":2}}',
    "duplicate-in-list": b'{"l":[{"k":1,"k":2}]}',
    "duplicate-escaped": b'{"a":1,"\\u0061":2}',
    "colon-escape-masks-a-duplicate": b'{"a":1,"a":2,"\\u003a":3}',
    "colon-in-strings": b'{"a":"x:y","b:c":"::"}',
    "escaped-backslash-u": b'{"a":"\\\\u003a","b":1}',
    "big-int": b'{"n":123456789012345678901234567890}',
    "u64-max": b'{"n":18446744073709551615}',
    "u64-max-plus-one": b'{"n":18446744073709551616}',
    "i64-min": b'{"n":-9223372036854775808}',
    "i64-min-minus-one": b'{"n":-9223372036854775809}',
    "long-digits-in-a-string": b'{"s":"12345678901234567890"}',
    "long-mantissa": b'{"x":0.1000000000000000055511151231257827021181583404541015625}',
    "subnormal": b'{"x":4.9406564584124654e-324,"y":2.4703282292062328e-324,"z":1e-400}',
    "float-overflow": b'{"x":1e400}',
    "nan": b'{"x":NaN}',
    "infinity": b'{"x":-Infinity}',
    "lone-surrogate": b'{"s":"\\ud800"}',
    "array": b"[1, 2]",
    "string": b'"text"',
    "number": b"12",
    "null": b"null",
    "truncated": b'{"id":"a"',
    "trailing-comma": b'{"id":"a",}',
    "two-values": b'{"a":1} {"b":2}',
    "control-character": b'{"s":"a\tb"}',
    "bad-utf-8": b'{"s":"\xff"}',
    "bom-inside": b'\xef\xbb\xbf{"a":1}',
    "deep": b'{"a":' + b"[" * 120 + b"]" * 120 + b"}",
    "not-too-deep": b'{"a":' + b"[" * 98 + b"]" * 98 + b"}",
    "brackets-in-strings": b'{"s":"' + b"[" * 120 + b'"}',
    "very-deep": b'{"a":' + b"[" * 2000 + b"]" * 2000 + b"}",
}


@pytest.mark.parametrize("line", list(LINES.values()), ids=list(LINES))
def test_each_line_reads_as_the_standard_library_reads_it(line: bytes) -> None:
    assert_same(line + b"\n")
    assert_same(b'{"id":"before"}\n' + line + b'\n{"id":"after"}')


def test_a_whole_file_of_them_reads_alike_with_a_byte_order_mark() -> None:
    assert_same(b"\xef\xbb\xbf" + b"\n".join(LINES.values()) + b"\n")


def test_cases_packed_by_marshal_and_as_text_unpack_alike_in_any_slice() -> None:
    content = b'{"n":1}\n{"n":123456789012345678901234567890}\n\n{"n":3}\n{"a":1,"a":2}\n{"n":5}'
    packed, lines, problems = jsonl._parse_lines(content, "d.jsonl")
    assert lines == [1, 2, 4, 6] and [p.line for p in problems] == [5]
    assert packed.marshalled == frozenset({1})  # the big integer: only the standard library reads it
    values = [{"n": 1}, {"n": 123456789012345678901234567890}, {"n": 3}, {"n": 5}]
    assert unpack_cases(packed) == values
    for start in range(5):
        for stop in range(start, 5):
            assert unpack_cases(packed[start:stop]) == values[start:stop]
    assert [unpack_cases((item,))[0] for item in packed] == values  # an item is a marshalled case
    assert unpack_cases((packed[-1],)) == [{"n": 5}]
    with pytest.raises(IndexError):
        packed[4]


# -- hypothesis: objects written by orjson, by json.dumps in its styles, and edited -----------------

keys = st.text(max_size=6) | st.sampled_from(["id", "a", ":", "a:b", "\\", '"', "é"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)
objects = st.dictionaries(keys, values, max_size=6)


def styles(value: dict[str, Any]) -> list[bytes]:
    written = [
        json.dumps(value).encode(),
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(),
        json.dumps(value, ensure_ascii=False, indent=None, separators=(", ", " : ")).encode(),
    ]
    try:
        written.append(orjson.dumps(value))
    except TypeError:
        pass  # an integer beyond 64 bits
    return written


def with_duplicate(line: bytes, key: str) -> bytes:
    """The object of `line` with `key` written once more, first."""
    return b"{" + json.dumps(key).encode() + b":0," + line[1:] if line != b"{}" else line


@settings(max_examples=300, deadline=None)
@given(objects, keys)
def test_generated_objects_read_as_the_standard_library_reads_them(value: dict[str, Any], key: str) -> None:
    lines = styles(value)
    if value:
        lines += [with_duplicate(line, next(iter(value))) for line in lines]
    lines += [with_duplicate(line, key) for line in lines[:2]]
    assert_same(b"\n".join(lines) + b"\n")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=30).map(str.encode))
def test_any_bytes_read_as_the_standard_library_reads_them(line: bytes) -> None:
    assert_same(line.replace(b"\n", b" ") + b"\n")


digits = st.text("0123456789", min_size=1, max_size=18)
numbers = st.builds(
    lambda sign, whole, fraction, exponent: (
        sign + whole.lstrip("0") + "0" * (whole.lstrip("0") == "") + fraction + exponent
    ),
    st.sampled_from(["", "-"]),
    digits,
    st.sampled_from([""]) | digits.map(lambda text: "." + text),
    st.sampled_from([""]) | st.integers(-330, 330).map(lambda e: f"e{e}") | st.integers(0, 400).map(lambda e: f"E+{e}"),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(numbers, min_size=1, max_size=8))
def test_number_literals_read_as_the_standard_library_reads_them(literals: list[str]) -> None:
    assert_same(("{" + ",".join(f'"{i}":{literal}' for i, literal in enumerate(literals)) + "}\n").encode())


def test_bad_lines_are_reported_in_the_words_they_always_were() -> None:
    content = (
        b'{"id":"a","id":"b"}\n{"x":NaN}\n[1]\n{"a":1\n\xff\n{"a":' + b"[" * 120 + b"]" * 120 + b"}\n"
        b'{"s":"\\ud800"}\n{"x":1e400}\n{"ok":1}'
    )
    packed, lines, found = jsonl._parse_lines(content, "d.jsonl")
    assert [str(problem) for problem in found] == [
        "d.jsonl:1: duplicate key 'id' (keys must be unique)",
        "d.jsonl:2: not JSON: NaN is not valid JSON",
        "d.jsonl:3: expected a JSON object (one case per line), got an array [1]",
        "d.jsonl:4: not JSON: Expecting ',' delimiter at column 7",
        "d.jsonl:5: not valid UTF-8 (byte 0xff at column 1)",
        "d.jsonl:6: JSON nests deeper than 100 levels",
        "d.jsonl:7: not JSON: a string holds a lone surrogate escape (not valid Unicode)",
        "d.jsonl:8: not JSON: 1e400 is not valid JSON (out of range for a float)",
    ]
    assert lines == [9] and unpack_cases(packed) == [{"ok": 1}]
