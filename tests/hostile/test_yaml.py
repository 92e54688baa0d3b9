"""YAML that attacks the loader is refused fast, with a located message (issue 11, point 2).

A "billion laughs" file (nested aliases) used to hang `agentv validate` and `agentv eval
--dry-run` (the expanded structure walked or written out value by value) and deep nesting
crashed the C composer with a segfault. Now the loader composes the file itself, without
recursion, and refuses it at the first alias past the bound or the first level too deep.
Duplicate keys, integers Python cannot read, NaN and infinities in ground truth, bytes that are
not UTF-8 and deeply nested JSON text are located load errors too.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset, load_targets, yaml_loader
from agentv_py.loading import source as yaml_source

SUITE = "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\nevalcases:\n  - id: c1\n"

LAUGHS_MESSAGE = (
    'YAML aliases expand to more than 1,000,000 values (a "billion laughs" file?); '
    "write the data out, or use fewer nested aliases"
)


def laughs(levels: int = 9, indent: str = "      ") -> str:
    """Nine aliases of nine aliases of ...: 9**levels values from a few hundred bytes."""
    text = f"{indent}l0: &a0 [x, x, x, x, x, x, x, x, x]\n"
    for level in range(1, levels):
        text += f"{indent}l{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]\n"
    return text


BILLION_LAUGHS = SUITE + "    expected_output:\n      a: 1\n" + laughs()


def problems_of(path: str = "dataset.yaml") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_dataset(path)
    return [str(p) for p in caught.value.problems]


def agentv(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child process: a hang is a timeout, a crash a signal, not a lost test run."""
    return subprocess.run(
        [sys.executable, "-m", "agentv_py", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


# ----------------------------------------------------------------------------- aliases


@pytest.mark.parametrize(
    "args",
    [["validate", "dataset.yaml"], ["eval", "dataset.yaml", "--dry-run"], ["eval", "dataset.yaml"]],
    ids=["validate", "eval-dry-run", "eval"],
)
def test_billion_laughs_is_refused_by_every_command(ws, args):
    ws.dataset(BILLION_LAUGHS)
    ws.targets("targets:\n  - {name: default, provider: mock, response: '{\"a\": 1}'}\n")
    result = agentv(*args, cwd=ws.root)
    assert result.returncode == 2, result.stderr
    problem = f"dataset.yaml:14: evalcases[0].expected_output.l6[0]: {LAUGHS_MESSAGE}"
    if args[0] == "validate":
        assert result.stderr.splitlines() == [problem, "1 problem found"]
    else:
        assert result.stderr.splitlines() == ["error: 1 problem found:", f"  {problem}"]
    assert not (ws.root / ".agentv" / "results").exists()


def test_billion_laughs_is_refused_well_within_a_second_of_work(ws):
    ws.dataset(BILLION_LAUGHS)
    started = time.perf_counter()
    assert problems_of() == [f"dataset.yaml:14: evalcases[0].expected_output.l6[0]: {LAUGHS_MESSAGE}"]
    assert time.perf_counter() - started < 5  # generous on a busy machine; about 1 ms alone


@pytest.mark.parametrize(
    "where, text, location",
    [
        ("top-level-key", "anchors:\n" + laughs(indent="  ") + SUITE, "dataset.yaml:8: anchors.l6[0]"),
        (
            "message-content",
            SUITE.replace("evalcases:", "anchors:\n" + laughs(indent="  ") + "evalcases:")
            + "    input_messages: [{role: user, content: *a8}]\n",
            "dataset.yaml:11: anchors.l6[0]",
        ),
        (
            "the-cases-list",
            "anchors:\n"
            + laughs(indent="  ").replace("[x, x, x, x, x, x, x, x, x]", "[{id: c, evaluators: [{type: code_judge}]}]")
            + "evalcases: *a8\n",
            "dataset.yaml:8: anchors.l6[0]",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and "\n" not in value and ":" not in value else "",
)
def test_billion_laughs_anywhere_in_the_file(ws, where, text, location):
    ws.dataset(text)
    assert problems_of() == [f"{location}: {LAUGHS_MESSAGE}"]


def test_billion_laughs_in_a_targets_file(ws):
    ws.file("targets.yaml", "anchors:\n" + laughs(indent="  ") + "targets: []\n")
    with pytest.raises(ConfigError) as caught:
        load_targets("targets.yaml")
    assert [str(p) for p in caught.value.problems] == [f"targets.yaml:8: anchors.l6[0]: {LAUGHS_MESSAGE}"]


def test_alias_values_are_counted_by_what_they_expand_to(ws, monkeypatch):
    monkeypatch.setattr(yaml_loader, "MAX_ALIAS_VALUES", 100)
    ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8]"  # a list of 9: 10 values, the list itself included
    ws.dataset(
        SUITE + f"    expected_output:\n      a: 1\n      l: &l {ten}\n      m: [" + ", ".join(["*l"] * 11) + "]\n"
    )
    assert problems_of() == [
        'dataset.yaml:9: evalcases[0].expected_output.m[10]: YAML aliases expand to more than 100 values (a "billion '
        'laughs" file?); write the data out, or use fewer nested aliases'
    ]
    ws.dataset(
        SUITE + f"    expected_output:\n      a: 1\n      l: &l {ten}\n      m: [" + ", ".join(["*l"] * 10) + "]\n"
    )
    assert load_dataset("dataset.yaml").cases[0].expected["m"][9] == list(range(9))  # exactly 100 values


def test_ordinary_anchors_and_merge_keys_still_load(ws):
    ws.dataset(
        """
        execution:
          evaluators:
            - &fields {type: field_accuracy, fields: [{path: a}, {path: b}]}
        evalcases:
          - id: c1
            expected_output: &truth {a: 1, b: 2}
          - id: c2
            evaluators: [*fields]
            expected_output:
              <<: *truth
              b: 3
        """
    )
    loaded = load_dataset("dataset.yaml")
    assert [c.expected for c in loaded.cases] == [{"a": 1, "b": 2}, {"a": 1, "b": 3}]
    assert loaded.warnings == []


def test_recursive_alias_is_refused(ws):
    ws.dataset(SUITE + "    expected_output: &r {a: 1, self: *r}\n")
    assert problems_of() == [
        "dataset.yaml:6: evalcases[0].expected_output.self: alias *r refers to a node that contains it "
        "(a recursive structure); datasets cannot hold recursive data"
    ]


def test_an_anchor_defined_twice_is_named(ws):
    ws.dataset("x: &x 1\ny: &x 2\n" + SUITE)
    assert problems_of() == [
        "dataset.yaml:2: y: anchor &x is defined twice (first at line 1); give each anchor its own name"
    ]


def test_a_billion_laughs_over_the_cache_size_is_never_cached(ws, tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.mktemp("laughs-cache")
    monkeypatch.setenv("AGENTV_CACHE_DIR", str(cache))
    ws.dataset(BILLION_LAUGHS + ("# " + "padding " * 12 + "\n") * 1000)  # > 64 KiB: the cache is used
    expected = [f"dataset.yaml:14: evalcases[0].expected_output.l6[0]: {LAUGHS_MESSAGE}"]
    assert problems_of() == expected
    assert problems_of() == expected
    assert not list(cache.rglob("*.marshal"))


# ----------------------------------------------------------------------------- nesting


@pytest.mark.parametrize(
    "nesting",
    ["[" * 100_000 + "]" * 100_000, "\n" + "".join("      " + "  " * i + "- \n" for i in range(3000))],
    ids=["flow", "block"],
)
def test_deep_nesting_is_refused_without_a_crash(ws, nesting):
    ws.dataset(SUITE + "    expected_output: " + nesting + "\n")
    result = agentv("validate", "dataset.yaml", cwd=ws.root)
    assert result.returncode == 2, result.stderr  # was: killed by SIGSEGV (the C composer's recursion)
    line = 6 if nesting.startswith("[") else 104  # where the 98th level of the case's ground truth starts
    problem, count = result.stderr.splitlines()
    assert count == "1 problem found"
    where = "evalcases[0].expected_output" + "[0]" * 9 + "..."
    ours = f"dataset.yaml:{line}: {where}: YAML nests deeper than 100 levels"
    if nesting.startswith("[") and problem != ours:
        # libyaml 0.2.6 (PyYAML 6.0.4) stops a flow of over 1000 levels itself, while scanning ahead,
        # before agentv sees the 100th: then it is located as invalid YAML, in libyaml's words.
        assert re.fullmatch(rf"dataset\.yaml:{line}: invalid YAML at column \d+: .+", problem), problem
    else:
        assert problem == ours


def test_nesting_up_to_the_bound_loads(ws):
    ws.dataset(SUITE + "    expected_output: " + "[" * 97 + "]" * 97 + "\n")  # 100 levels with the file's own 3
    assert load_dataset("dataset.yaml").cases[0].expected is not None
    ws.dataset(SUITE + "    expected_output: " + "[" * 98 + "]" * 98 + "\n")
    assert problems_of() == [
        "dataset.yaml:6: evalcases[0].expected_output[0][0][0][0][0][0][0][0][0]...: YAML nests deeper than 100 levels"
    ]


@pytest.mark.parametrize("depth", [500, 200_000], ids=["deeper-than-the-bound", "deeper-than-python-recursion"])
def test_deeply_nested_json_ground_truth_is_a_clear_error(ws, depth):
    ws.dataset(SUITE + "    expected_output: '" + "[" * depth + "]" * depth + "'\n")
    assert problems_of() == [
        "dataset.yaml:6: evalcases[0].expected_output: ground truth JSON nests deeper than 100 levels"
    ]


# ----------------------------------------------------------------------------- duplicate keys


@pytest.mark.parametrize(
    "text, problem",
    [
        ("a: 1\n" + SUITE + "a: 2\n", "dataset.yaml:7: a: duplicate key 'a' (first at line 1)"),
        (
            SUITE + "    expected_output:\n      a: 1\n      b:\n        c: 1\n        c: 2\n",
            "dataset.yaml:10: evalcases[0].expected_output.b.c: duplicate key 'c' (first at line 9)",
        ),
        (
            SUITE + "    expected_output: {a: 1, b: 2, a: 3}\n",
            "dataset.yaml:6: evalcases[0].expected_output.a: duplicate key 'a' (first at line 6)",
        ),
        (
            SUITE + "    id: c2\n",
            "dataset.yaml:6: evalcases[0].id: duplicate key 'id' (first at line 5)",
        ),
    ],
    ids=["top-level", "nested", "flow-mapping", "case-id"],
)
def test_duplicate_keys_name_both_lines(ws, text, problem):
    ws.dataset(text)
    assert problems_of() == [problem]


def test_duplicate_key_in_a_targets_file(ws):
    ws.file("targets.yaml", "targets:\n  - name: t\n    provider: mock\n    response: x\n    name: u\n")
    with pytest.raises(ConfigError) as caught:
        load_targets("targets.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "targets.yaml:5: targets[0].name: duplicate key 'name' (first at line 2)"
    ]


def test_same_text_of_another_type_is_not_a_duplicate():
    assert yaml_source._load(b"a: 1\n1: one\n'1': text one\n") == {"a": 1, 1: "one", "1": "text one"}


# ----------------------------------------------------------------------------- numbers

DIGITS = (
    "integer with more than 4300 digits: Python reads at most 4300 (quote it to keep it as text)"
    if sys.get_int_max_str_digits() == 4300
    else None
)


@pytest.mark.skipif(DIGITS is None, reason="the interpreter's int digit limit is not the default")
@pytest.mark.parametrize(
    "value", ["1" * 5000, "-" + "9" * 4301, "0x" + "f" * 4000], ids=["decimal", "negative", "hexadecimal"]
)
def test_integers_over_the_digit_limit_are_located_errors(ws, value):
    ws.dataset(SUITE + f"    expected_output: {{a: {value}}}\n")
    assert problems_of() == [f"dataset.yaml:6: evalcases[0].expected_output.a: {DIGITS}"]


@pytest.mark.skipif(DIGITS is None, reason="the interpreter's int digit limit is not the default")
def test_integers_over_the_digit_limit_in_json_text_and_anywhere_else(ws):
    ws.dataset(SUITE + '    expected_output: \'{"a": ' + "1" * 5000 + "}'\n")
    assert problems_of() == [
        "dataset.yaml:6: evalcases[0].expected_output: integer with more than 4300 digits in ground truth "
        "(in the JSON text): Python reads at most 4300 (quote it to keep it as text)"
    ]
    ws.dataset(f"description: {'7' * 4400}\n" + SUITE)
    assert problems_of() == [f"dataset.yaml:1: description: {DIGITS}"]


def test_quoted_long_numbers_are_text(ws):
    ws.dataset(SUITE + f"    expected_output: {{a: '{'1' * 5000}'}}\n")
    assert load_dataset("dataset.yaml").cases[0].expected == {"a": "1" * 5000}


@pytest.mark.parametrize(
    "truth, problem",
    [
        ("{a: .nan}", "dataset.yaml:6: evalcases[0].expected_output.a: NaN in ground truth"),
        ("{a: 1, b: [1, .inf]}", "dataset.yaml:6: evalcases[0].expected_output.b[1]: Infinity in ground truth"),
        ("{a: -.Inf}", "dataset.yaml:6: evalcases[0].expected_output.a: -Infinity in ground truth"),
        ("{a: 1.0e+999}", "dataset.yaml:6: evalcases[0].expected_output.a: Infinity in ground truth"),
        ("[1, .NaN]", "dataset.yaml:6: evalcases[0].expected_output[1]: NaN in ground truth"),
        ("'{\"a\": NaN}'", "dataset.yaml:6: evalcases[0].expected_output: NaN in ground truth (in the JSON text)"),
        (
            "'{\"a\": [-Infinity]}'",
            "dataset.yaml:6: evalcases[0].expected_output: -Infinity in ground truth (in the JSON text)",
        ),
        (
            "'{\"a\": 1e999}'",
            "dataset.yaml:6: evalcases[0].expected_output: 1e999 in ground truth (in the JSON text) is beyond the "
            "double range",
        ),
    ],
    ids=[
        "nan",
        "inf-in-list",
        "minus-inf",
        "overflowing-float",
        "nan-in-a-list",
        "json-nan",
        "json-minus-inf",
        "json-1e999",
    ],
)
def test_nan_and_infinity_in_ground_truth_are_located_errors(ws, truth, problem):
    ws.dataset(SUITE + f"    expected_output: {truth}\n")
    assert problems_of() == [f"{problem}: expected numbers must be finite"]


def test_nan_in_the_last_assistant_message_is_located_there(ws):
    ws.dataset(
        SUITE
        + "    expected_messages:\n      - {role: assistant, content: {a: 1}}\n      - {role: user, content: hi}\n"
        "      - role: assistant\n        content:\n          a: 1\n          total: .inf\n"
    )
    assert problems_of() == [
        "dataset.yaml:12: evalcases[0].expected_messages[2].content.total: Infinity in ground truth: "
        "expected numbers must be finite"
    ]


def test_nan_outside_ground_truth_is_left_to_the_models(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: field_accuracy, weight: .nan, fields: [{path: a}]}\n"
        "evalcases:\n  - id: c1\n    expected_output: {a: 1}\n"
    )
    assert problems_of() == ["dataset.yaml:3: execution.evaluators[0].weight: weight must be a number >= 0, got nan"]


def test_every_case_with_bad_numbers_is_reported_together(ws):
    ws.dataset(
        SUITE.replace("  - id: c1\n", "")
        + "  - {id: c1, expected_output: {a: .nan}}\n  - {id: c2, expected_output: {a: 1}}\n"
        "  - {id: c3, expected_output: '[Infinity]'}\n"
    )
    assert problems_of() == [
        "dataset.yaml:5: evalcases[0].expected_output.a: NaN in ground truth: expected numbers must be finite",
        "dataset.yaml:7: evalcases[2].expected_output: Infinity in ground truth (in the JSON text): "
        "expected numbers must be finite",
    ]


# ----------------------------------------------------------------------------- encoding

CODEC_REASON = "<the decoder's reason>"
"""Stands for Python's reason in an expected message ("invalid start byte"): not agentv's words."""


@pytest.mark.parametrize(
    "content, problem",
    [
        (
            b'evalcases:\n  - id: "\xff"\n',
            "dataset.yaml:2: not valid UTF-8 (byte 0xff at offset 20: " + CODEC_REASON + ")",
        ),
        (
            'a: "ééé"\n'.encode() + b"b: \xff\n",  # 3 two-byte characters before: the offset counts bytes
            "dataset.yaml:2: not valid UTF-8 (byte 0xff at offset 15: " + CODEC_REASON + ")",
        ),
        (
            'a: "日本"\n'.encode() + b"b: \xc3\x28\n",
            "dataset.yaml:2: not valid UTF-8 (byte 0xc3 at offset 15: " + CODEC_REASON + ")",
        ),
        (
            "a: ééé\n".encode() + b"\xe2\x82",
            "dataset.yaml:2: not valid UTF-8 (byte 0xe2 at offset 10: " + CODEC_REASON + ")",
        ),
        (
            'a: "é"\nb: \x07\n'.encode(),
            "dataset.yaml:2: character U+0007 at offset 11 is not allowed in YAML "
            '(write it as an escape in a double-quoted string: "\\u0007")',
        ),
        (
            b"\xef\xbb\xbfa: 1\nb: \x00\n",
            "dataset.yaml:2: character U+0000 at offset 11 is not allowed in YAML "
            '(write it as an escape in a double-quoted string: "\\u0000")',
        ),
    ],
    ids=["ascii-before", "multibyte-before", "bad-continuation", "truncated", "control-character", "nul-after-bom"],
)
def test_unreadable_bytes_are_named_with_their_byte_offset(ws, content, problem):
    ws.file("dataset.yaml", content)
    [got] = problems_of()
    # agentv's words exactly; the decoder's reason (Python's words, CODEC_REASON) only non-empty
    assert re.fullmatch(".+".join(map(re.escape, problem.split(CODEC_REASON))), got), got
    # The offset counts bytes of the file and points at the byte (or character) named.
    named = re.search(r"(?:byte 0x|character U\+)([0-9a-fA-F]+) at offset (\d+)", problem)
    assert named is not None
    assert content[int(named.group(2))] == int(named.group(1), 16)


def test_a_utf8_bom_is_fine(ws):
    ws.file("dataset.yaml", b"\xef\xbb\xbf" + (SUITE + "    expected_output: {a: 1}\n").encode())
    assert load_dataset("dataset.yaml").cases[0].expected == {"a": 1}


# ----------------------------------------------------------------------------- depth through aliases


def depth_bomb(anchors: int = 40, levels: int = 90, indent: str = "      ") -> str:
    """Anchors each `levels` deep, each wrapping the one before: every node as written is within
    the depth bound, the value built is anchors * levels deep (was: RecursionError, exit 3)."""
    text = f"{indent}l0: &a0 " + "[" * levels + "x" + "]" * levels + "\n"
    for i in range(1, anchors):
        text += f"{indent}l{i}: &a{i} " + "[" * (levels - 1) + f"*a{i - 1}" + "]" * (levels - 1) + "\n"
    return text


DEPTH_BOMB = SUITE + "    expected_output:\n" + depth_bomb()
DEPTH_BOMB_PROBLEM = (
    "dataset.yaml:8: evalcases[0].expected_output.l1[0][0][0][0][0][0][0][0]...: "
    "YAML nests deeper than 100 levels: alias *a0 (90 levels deep) used at level 93"
)


@pytest.mark.parametrize(
    "args", [["validate", "dataset.yaml"], ["eval", "dataset.yaml", "--dry-run"]], ids=["validate", "eval-dry-run"]
)
def test_depth_bomb_through_aliases_is_refused(ws, args):
    assert len(DEPTH_BOMB) < 10_000  # ~3,600 levels from a few kilobytes
    ws.dataset(DEPTH_BOMB)
    ws.targets("targets:\n  - {name: default, provider: mock, response: '{\"a\": 1}'}\n")
    result = agentv(*args, cwd=ws.root)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    if args[0] == "validate":
        assert result.stderr.splitlines() == [DEPTH_BOMB_PROBLEM, "1 problem found"]
    else:
        assert result.stderr.splitlines() == ["error: 1 problem found:", f"  {DEPTH_BOMB_PROBLEM}"]


def test_an_alias_reaching_exactly_the_bound_loads_and_one_level_more_is_refused(ws):
    deep = "[" * 96 + "x" + "]" * 96  # 96 levels under the 4 of the file: the bound
    ws.dataset(SUITE + f"    expected_output:\n      a: &x {deep}\n      b: *x\n")  # 4 + 96 levels
    assert load_dataset("dataset.yaml").cases[0].expected["b"] == load_dataset("dataset.yaml").cases[0].expected["a"]
    ws.dataset(SUITE + f"    expected_output:\n      a: &x {deep}\n      b: [*x]\n")
    assert problems_of() == [
        "dataset.yaml:8: evalcases[0].expected_output.b[0]: "
        "YAML nests deeper than 100 levels: alias *x (96 levels deep) used at level 5"
    ]


def test_ground_truth_too_deep_for_the_json_encoder_is_a_located_problem(ws):
    """The second line of defence: a value the loader would refuse, handed to the checks."""
    from agentv_py.loading.ground_truth import finite_problems
    from agentv_py.loading.source import read_yaml

    ws.dataset(SUITE + "    expected_output: {a: 1}\n")
    source, raw = read_yaml(ws.root / "dataset.yaml")
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    problems = finite_problems(source, raw["evalcases"], [deep])
    assert [str(p) for p in problems] == [
        "dataset.yaml:6: evalcases[0].expected_output: ground truth nests deeper than 100 levels"
    ]


# ----------------------------------------------------------------------------- tags that are not JSON


@pytest.mark.parametrize(
    "value",
    ["!!set {a, b}", "!!binary aGVsbG8=", "!!omap [{a: 1}, {b: 2}]", "!!pairs [{a: 1}, {a: 2}]"],
    ids=["set", "binary", "omap", "pairs"],
)
def test_non_json_tags_are_refused_where_they_are_written(ws, value):
    ws.dataset(SUITE + f"    input: hi\n    expected_output: {value}\n")
    tag = value.split()[0]
    assert problems_of() == [
        f"dataset.yaml:7: evalcases[0].expected_output: YAML tag {tag} is not allowed: datasets hold only JSON values"
    ]


def test_a_non_json_tag_deep_inside_is_located(ws):
    ws.dataset(SUITE + "    input: hi\n    expected_output:\n      a:\n        - 1\n        - !!set {x}\n")
    assert problems_of() == [
        "dataset.yaml:10: evalcases[0].expected_output.a[1]: "
        "YAML tag !!set is not allowed: datasets hold only JSON values"
    ]


def test_json_tags_and_dates_still_load(ws):
    ws.dataset(
        SUITE
        + "    input: hi\n    expected_output: {a: !!str 12, b: !!int '7', c: !!float 1, d: 2025-01-15, e: !!null ''}\n"
    )
    assert load_dataset("dataset.yaml").cases[0].expected == {"a": "12", "b": 7, "c": 1.0, "d": "2025-01-15", "e": None}


# -- the fast path: data straight from the parser's events -----------------------------------------

yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(
        ["yes", "No", "on", "~", "null", "1e3", "0x1F", "0o17", ".inf", "-.Inf", "2025-01-15", "<<", "="]
    ),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers(-5, 5) | st.booleans(), children, max_size=4)
    ),
    max_leaves=20,
)


def node_path(content: bytes):
    loader = yaml_loader.Loader(content)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@settings(max_examples=300, deadline=None)
@given(yaml_values, st.sampled_from([None, True, False]))
def test_the_fast_path_builds_what_the_node_path_builds(value, flow):
    """Whatever YAML text a value dumps to, block or flow style, the fast path gives exactly the
    node path's data, or leaves the file to it (never a different value)."""
    import yaml

    content = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True).encode()
    expected = node_path(content)
    try:
        fast = yaml_source._load_plain(content)
    except yaml_source._Unusual:
        return
    assert repr(fast) == repr(expected)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # an anchor and an alias
        "a: !!str 12\n",  # an explicit tag
        "base: &b {x: 1}\nc:\n  <<: *b\n",  # a merge key
        "a: 1\na: 2\n",  # a duplicate key
        "? [1, 2]\n: x\n",  # a list as a key
        "a: 1\n---\nb: 2\n",  # two documents
        "n: 1" + "0" * 5000 + "\n",  # more digits than Python reads
    ],
    ids=["alias", "tag", "merge", "duplicate", "list-key", "two-documents", "long-int"],
)
def test_what_the_fast_path_leaves_to_the_node_path(text):
    with pytest.raises(yaml_source._Unusual):
        yaml_source._load_plain(text.encode())


def test_a_plain_dataset_is_read_by_the_fast_path(ws, monkeypatch):
    def no_nodes(self):
        raise AssertionError("the node path ran")

    monkeypatch.setattr(yaml_loader.Loader, "get_single_data", no_nodes)
    monkeypatch.setenv("AGENTV_NO_CACHE", "1")
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
        "evalcases:\n  - {id: c1, input_messages: [{role: user, content: hi}], "
        "expected_messages: [{role: assistant, content: {a: 1}}]}\n"
    )
    assert [case.case.id for case in load_dataset("dataset.yaml").cases] == ["c1"]
