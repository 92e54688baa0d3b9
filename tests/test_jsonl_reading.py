"""The JSONL reader (`read_jsonl`: a line that opens an object kept as its text, read by orjson
when its case is unpacked, a chunk of lines at once or line by line, where orjson's reading is
provably the standard library's) against the standard library's reading of every line
(`jsonl_lines.read_line`, what every line went through before): over hand-written lines and
hypothesis-generated objects written in several styles, unpacked in chunks of several sizes, the
cases (types included), their line numbers and every problem's text are the same."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading import jsonl, jsonl_lines
from agentv_py.loading.jsonl import JsonlCases, read_jsonl
from agentv_py.loading.source import unpack_cases

SIZES = (1, 2, 1000)  # cases unpacked at a time: line by line, small chunks, the loader's chunk


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("jsonl")


def typed(value: Any) -> Any:
    """`value` with every scalar tagged by its type: `True` and `1`, `1.0` and `1` differ."""
    if isinstance(value, dict):
        return ("dict", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


Read = tuple[list[Any], list[int], list[str]]


def said(problems: list[Problem]) -> list[str]:
    return [f"{problem.line}: {problem.message}" for problem in problems]


def standard(content: bytes) -> Read:
    """Every line through the standard library's reading, as before the fast paths: the cases and
    their lines, or, when a line is bad, no case and every bad line's problem."""
    if content.startswith(b"\xef\xbb\xbf"):
        content = content[3:]
    cases, lines = [], []
    found: list[Problem] = []
    for number, raw in enumerate(content.split(b"\n"), 1):
        case = jsonl_lines.read_line(raw, number, "d.jsonl", found)
        if case is not None:
            cases.append(typed(case))
            lines.append(number)
    return ([], [], said(found)) if found else (cases, lines, [])


def read(folder: Path, content: bytes, size: int, block: int = jsonl._BLOCK) -> Read:
    """The file read by `read_jsonl` (`block` bytes at a time) and its cases unpacked `size` at a
    time, as the loader does."""
    path = folder / "d.jsonl"
    path.write_bytes(content)
    blocks, jsonl._BLOCK = jsonl._BLOCK, block
    try:
        source, raw = read_jsonl(path)
        packed = raw["evalcases"]
        assert isinstance(packed, JsonlCases)
        cases = [case for start in range(0, len(packed), size) for case in unpack_cases(packed[start : start + size])]
    except ConfigError as exc:
        return [], [], said(exc.problems)
    finally:
        jsonl._BLOCK = blocks
    return [typed(case) for case in cases], source.lines.case_lines, []  # type: ignore[attr-defined]


def assert_same(folder: Path, content: bytes) -> None:
    expected = standard(content)
    for size in SIZES:
        assert read(folder, content, size) == expected, f"unpacked {size} at a time"
    for block in (1, 2, 3, 7) if len(content) < 10_000 else (4096,):  # lines across blocks
        assert read(folder, content, 1000, block) == expected, f"read {block} bytes at a time"


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
    "depth-100": b'{"a":' + b"[" * 99 + b"]" * 99 + b"}",
    "depth-101": b'{"a":' + b"[" * 100 + b"]" * 100 + b"}",
    "depth-100-objects": b'{"a":' * 99 + b"{}" + b"}" * 99,
    "depth-101-objects": b'{"a":' * 100 + b"{}" + b"}" * 100,
    "depth-101-in-a-list": b'{"l":[1,' + b"[" * 99 + b"2" + b"]" * 99 + b"]}",
    "depth-101-mixed": b'{"a":' + b'[{"b":' * 50 + b"1" + b"}]" * 50 + b"}",
    "crlf-canonical": b'{"id":"a","n":[1,2]}\r',
    "cr-between-tokens": b'{"id":"a"\r,"n":1}\r',
    "cr-in-a-string": b'{"id":"a\rb"}',
    "leading-space": b' {"id":"a"}',
    "leading-tab-crlf": b'\t{"id":"a"}\r',
    "open-brace-only": b"{",
    "brace-then-garbage": b'{"a":1}x',
    "spaced-duplicate": b'{"a": 1, "a": 2}',
    "python-floats": b'{"x":1e-05,"y":1e+16,"z":0.10,"w":1E3,"v":-0}',
    "negative-zero": b'{"x":-0.0}',
    "escaped-slash": b'{"u":"a\\/b"}',
    "non-ascii-escape": b'{"e":"\\u00e9"}',
    "huge": b'{"s":"' + b"x" * 1_000_000 + b'","n":1}',
}


@pytest.mark.parametrize("line", list(LINES.values()), ids=list(LINES))
def test_each_line_reads_as_the_standard_library_reads_it(folder: Path, line: bytes) -> None:
    assert_same(folder, line + b"\n")
    assert_same(folder, b'{"id":"before"}\n' + line + b'\n{"id":"after"}')
    assert_same(folder, b'{"id":"before"}\r\n' + line + b'\r\n{"id":"after"}\r\n')


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n",
        b"\xef\xbb\xbf",
        b"\xef\xbb\xbf\n",
        b'\xef\xbb\xbf{"a":1}',
        b'\xef\xbb\xbf\xef\xbb\xbf{"a":1}\n',
        b'{"a":1}',
    ],
    ids=["empty", "newline", "mark", "mark-newline", "mark-object", "two-marks", "no-newline"],
)
def test_a_file_of_one_line_or_none_reads_alike(folder: Path, content: bytes) -> None:
    assert_same(folder, content)


def test_a_whole_file_of_them_reads_alike_with_a_byte_order_mark(folder: Path) -> None:
    assert_same(folder, b"\xef\xbb\xbf" + b"\n".join(LINES.values()) + b"\n")


def test_cases_packed_by_marshal_and_as_text_unpack_alike_in_any_slice(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":123456789012345678901234567890}\n\n {"n":3}\n{"n":4}\n')
    source, raw = read_jsonl(path)
    packed = raw["evalcases"]
    assert source.lines.case_lines == [1, 2, 4, 5]  # type: ignore[attr-defined]
    assert packed.marshalled == frozenset({2})  # the line that does not open an object: read at once
    values = [{"n": 1}, {"n": 123456789012345678901234567890}, {"n": 3}, {"n": 4}]
    assert unpack_cases(packed) == values
    for start in range(5):
        for stop in range(start, 5):
            assert unpack_cases(packed[start:stop]) == values[start:stop]
            assert packed[start:stop].marshalled == ({2 - start} if start <= 2 < stop else set())
    assert unpack_cases(packed[::2]) == values[::2] and unpack_cases(packed[::-1]) == values[::-1]
    assert [unpack_cases((item,))[0] for item in packed] == values  # an item is a marshalled case
    assert unpack_cases((packed[-1],)) == [{"n": 4}]
    with pytest.raises(IndexError):
        packed[4]


def test_a_bad_line_is_found_when_its_case_is_unpacked_and_every_bad_line_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("d.jsonl").write_bytes(b'{"n":1}\n{"n":2}\n{"a":1,"a":2}\n{"n":4}\n{"n":5}\n{"n":6}\n{"x":NaN}\n{"n":8}\n')
    _, raw = read_jsonl(Path("d.jsonl"))  # every line opens an object: each is read when unpacked
    packed = raw["evalcases"]
    assert len(packed) == 8
    assert unpack_cases(packed[:2]) == [{"n": 1}, {"n": 2}]
    expected = ["d.jsonl:3: duplicate key 'a' (keys must be unique)", "d.jsonl:7: not JSON: NaN is not valid JSON"]
    with pytest.raises(ConfigError) as caught:
        unpack_cases(packed[2:4])  # line 7, not read yet, is read then
    assert [str(problem) for problem in caught.value.problems] == expected
    for part in (packed[:2], packed[7:], packed):  # once a bad line is known, every unpacking says so
        with pytest.raises(ConfigError) as caught:
            unpack_cases(part)
        assert [str(problem) for problem in caught.value.problems] == expected
    with pytest.raises(ConfigError):
        packed[0]
    assert [str(problem) for problem in packed.problems()] == expected


def test_a_line_that_does_not_open_an_object_has_every_line_read_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("d.jsonl").write_bytes(b'{"n":1}\n[1]\n{"n":3}\n{"a":1,"a":2}\n  \n{"n":\n')
    Path("d.yaml").write_text("- a list\n")
    with pytest.raises(ConfigError) as caught:
        read_jsonl(Path("d.jsonl"))
    assert [str(problem) for problem in caught.value.problems] == [
        "d.jsonl:2: expected a JSON object (one case per line), got an array [1]",
        "d.jsonl:4: duplicate key 'a' (keys must be unique)",
        "d.jsonl:6: not JSON: Expecting value at column 6",
        "d.yaml:1: a JSONL dataset's sidecar holds suite keys (description, dataset, execution), got an array",
    ]
    Path("d.jsonl").write_bytes(b'{"n":1}\n{"a":1,"a":2}\n')  # only the sidecar is bad: the lines are read too
    with pytest.raises(ConfigError) as caught:
        read_jsonl(Path("d.jsonl"))
    assert [str(problem) for problem in caught.value.problems][:1] == [
        "d.jsonl:2: duplicate key 'a' (keys must be unique)"
    ]


def test_the_lines_not_read_yet_are_read_a_few_at_a_time_to_find_their_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(jsonl, "_CHECKED_AT_ONCE", 3)
    read = jsonl._Reading.read
    ranges: list[range] = []

    def spied(self: jsonl._Reading, at: range) -> list[Any]:
        ranges.append(at)
        return read(self, at)

    monkeypatch.setattr(jsonl._Reading, "read", spied)
    lines = [b'{"n":%d}' % n for n in range(20)]
    lines[0], lines[12] = b"[0]", b'{"n":1,"n":2}'
    Path("d.jsonl").write_bytes(b"\n".join(lines))
    with pytest.raises(ConfigError) as caught:
        read_jsonl(Path("d.jsonl"))  # line 1 does not open an object: every line is read now
    assert [str(problem) for problem in caught.value.problems] == [
        "d.jsonl:1: expected a JSON object (one case per line), got an array [0]",
        "d.jsonl:13: duplicate key 'n' (keys must be unique)",
    ]
    assert ranges == [range(start, min(start + 3, 19)) for start in range(0, 19, 3)]


def test_a_chunk_is_read_at_once_only_when_orjson_writes_every_line_back() -> None:
    canonical = [
        b'{"id":"a","n":[1,2.5,{"b":null}],"s":"x:y \\"q\\" \\n \xc3\xa9"}\n',
        b"{}\n",
        b'{"u":18446744073709551615}\n',
    ]
    values = [orjson.loads(line) for line in canonical]
    assert jsonl_lines.chunk_values(canonical) == values
    assert jsonl_lines.chunk_values([*canonical[:-1], canonical[-1][:-1]]) == values  # the file's last line
    assert jsonl_lines.chunk_values(canonical * 100) == values * 100  # written back a batch at a time
    assert jsonl_lines.chunk_values([line[:-1] + b"\r\n" for line in canonical]) == values  # CRLF line ends
    assert jsonl_lines.chunk_values([b'{"id":"a"\r,"n":1}\n']) == [{"id": "a", "n": 1}]  # \r: whitespace
    assert jsonl_lines.chunk_values([]) is None
    assert jsonl_lines.chunk_values([b'{"a":1}', b'{"b":2}\n']) is None  # not lines: no "\n" between them
    for odd in [
        b'{"a":1,"a":2}',  # a key written twice: orjson keeps the last
        b'{"a": 1}',  # spaces: read line by line (still orjson's, when its own checks vouch for it)
        b'{"n":18446744073709551616}',  # beyond 64 bits: orjson reads a float
        b'{"x":1E3}',
        b'{"s":"\\u00e9"}',
        b'{"a":' + b"[" * 100 + b"]" * 100 + b"}",  # 101 levels
        b'{"a":1}x',
        b"[1]",
        b'{"x":NaN}',
    ]:
        for at in (0, 2, 3, 64, 150):
            lines = canonical * 60
            assert jsonl_lines.chunk_values([*lines[:at], odd + b"\n", *lines[at:]]) is None, (odd, at)


def test_lines_that_make_json_only_together_are_each_bad(folder: Path) -> None:
    assert_same(folder, b'{"a":[{}\n{}]}\n{"x":1},{"y":2}\n')
    assert_same(folder, b'{"a":[[\n]]}\n{"x":1}],[{"y":2}\n')


@pytest.mark.parametrize("shape", ["lists", "objects", "mixed", "in-a-list"])
def test_orjson_refuses_to_write_a_chunk_exactly_when_a_case_nests_deeper_than_100(shape: str) -> None:
    def nested(depth: int) -> bytes:
        if shape == "lists":
            return b'{"a":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"
        if shape == "objects":
            return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
        if shape == "mixed":
            return (
                b'{"a":'
                + b'[{"b":' * ((depth - 1) // 2)
                + b"[]" * (depth % 2 == 0)
                + b"1" * (depth % 2)
                + b"}]" * ((depth - 1) // 2)
                + b"}"
            )
        return b'{"l":[1,' + b"[" * (depth - 3) + b'{"z":2}' + b"]" * (depth - 3) + b"]}"

    assert jsonl_lines._wrapping() == 153  # orjson 3.x: it writes values 254 levels deep
    for depth in (99, 100):
        assert jsonl_lines.nesting_depth(orjson.loads(nested(depth))) == depth
        assert jsonl_lines.chunk_values([b"{}\n", nested(depth) + b"\n"]) is not None
    for depth in (101, 102, 300):
        assert jsonl_lines.nesting_depth(orjson.loads(nested(depth))) == depth
        assert jsonl_lines.chunk_values([b"{}\n", nested(depth) + b"\n"]) is None


def test_without_orjson_refusing_deep_values_every_line_is_read_alone(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl_lines, "_wrapping", lambda: None)
    assert jsonl_lines.chunk_values([b"{}\n"]) is None
    assert_same(folder, b"\n".join(LINES.values()) + b"\n")
    assert_same(folder, b'{"a":1}\n{"b":[2]}\n')


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
def test_generated_objects_read_as_the_standard_library_reads_them(
    folder: Path, value: dict[str, Any], key: str
) -> None:
    lines = styles(value)
    if value:
        lines += [with_duplicate(line, next(iter(value))) for line in lines]
    lines += [with_duplicate(line, key) for line in lines[:2]]
    assert_same(folder, b"\n".join(lines) + b"\n")
    assert_same(folder, b"\r\n".join(lines) + b"\r\n")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=30).map(str.encode))
def test_any_bytes_read_as_the_standard_library_reads_them(folder: Path, line: bytes) -> None:
    assert_same(folder, line.replace(b"\n", b" ") + b"\n")


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
def test_number_literals_read_as_the_standard_library_reads_them(folder: Path, literals: list[str]) -> None:
    assert_same(folder, ("{" + ",".join(f'"{i}":{literal}' for i, literal in enumerate(literals)) + "}\n").encode())


def test_bad_lines_are_reported_in_the_words_they_always_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    content = (
        b'{"id":"a","id":"b"}\n{"x":NaN}\n[1]\n{"a":1\n\xff\n{"a":' + b"[" * 120 + b"]" * 120 + b"}\n"
        b'{"s":"\\ud800"}\n{"x":1e400}\n{"ok":1}'
    )
    expected = [
        "d.jsonl:1: duplicate key 'id' (keys must be unique)",
        "d.jsonl:2: not JSON: NaN is not valid JSON",
        "d.jsonl:3: expected a JSON object (one case per line), got an array [1]",
        "d.jsonl:4: not JSON: Expecting ',' delimiter at column 7",
        "d.jsonl:5: not valid UTF-8 (byte 0xff at column 1)",
        "d.jsonl:6: JSON nests deeper than 100 levels",
        "d.jsonl:7: not JSON: a string holds a lone surrogate escape (not valid Unicode)",
        "d.jsonl:8: not JSON: 1e400 is not valid JSON (out of range for a float)",
    ]
    for lines in (content, content.replace(b"[1]\n", b'{"ok":0}\n').replace(b"\xff\n", b'{"ok":0}\n')):
        Path("d.jsonl").write_bytes(lines)  # with lines that do not open an object, and without
        with pytest.raises(ConfigError) as caught:
            source, raw = read_jsonl(Path("d.jsonl"))
            unpack_cases(raw["evalcases"])
        assert [str(problem) for problem in caught.value.problems] == [
            problem for problem in expected if lines == content or not problem.startswith(("d.jsonl:3", "d.jsonl:5"))
        ]
