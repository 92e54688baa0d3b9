"""The line-by-line reader of the common block style (`loading.block_yaml`) against the node path
(`yaml_loader.Loader`): over every YAML file of the repository, hand-written YAML 1.1 cases and
hypothesis-generated documents, it gives exactly the node path's data (types included) or leaves
the file to the parser (`Undecided`); it never reads a file the node path refuses."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.loading import block_yaml, source
from agentv_py.loading.block_yaml import Undecided, load_block
from agentv_py.loading.yaml_loader import Loader

ROOT = Path(__file__).resolve().parent.parent


def typed(value: Any) -> Any:
    """`value` with every scalar tagged by its type: `True` and `1`, `1.0` and `1` differ."""
    if isinstance(value, dict):
        return ("dict", [(typed(key), typed(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


def node_path(content: bytes) -> Any:
    """The node path's data, or ("refused", the error's type) when it refuses the file."""
    loader = Loader(content)
    try:
        return typed(loader.get_single_data())
    except yaml.YAMLError as exc:
        return ("refused", type(exc).__name__)
    finally:
        loader.dispose()


def assert_same(content: bytes) -> bool:
    """The block reader's data equals the node path's, or it leaves the file; True when it read it."""
    expected = node_path(content)
    try:
        fast = load_block(content)
    except Undecided:
        return False
    assert expected[0] != "refused", f"read a file the node path refuses ({expected[1]})"
    assert typed(fast) == expected
    return True


CORPUS = sorted(
    path
    for folder in ("tests", "evals")
    for pattern in ("*.yaml", "*.yml")
    for path in (ROOT / folder).rglob(pattern)
    if "__pycache__" not in path.parts
)


def test_the_corpus_is_not_empty():
    assert len(CORPUS) >= 8


@pytest.mark.parametrize("path", CORPUS, ids=[str(path.relative_to(ROOT)) for path in CORPUS])
def test_every_yaml_file_of_the_repository_reads_as_the_node_path_reads_it(path):
    assert_same(path.read_bytes())


SCALARS = [
    "yes", "Yes", "YES", "no", "on", "On", "off", "OFF", "true", "False", "y", "n", "~", "null", "Null", "NULL",
    "017", "0o17", "0x1F", "0x_1f", "0b101", "-0b1_1", "1_000", "+12", "-0", "0", "00", "09", "12:30", "1:30:59",
    "-1:30", "190:20:30", "1e3", "1.5e3", "1.5e+3", "1.0", "1.", ".5", "-.5", "+1.5", "1_000.5", "12:30.5",
    ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "2025-01-15", "2025-01-15 10:00:00", "<<", "=", "-", "- x",
    "123456789012345678901234567890", "-123456789012345678901234567890", "0x" + "f" * 40, "1" + "0" * 5000,
    "a b", "a:b", "a: b", "a #b", "a#b", "http://x.com/a", "[]", "{}", "[1, 2]", "{a: 1}", "&a x", "*a", "!!str 1",
    "|", ">", "'quoted'", '"dq"', '"a\\tb"', '"\\u00e9\\x41\\U0001F600"', '"\\/"', '"\\q"', '"\\ud800"', "'it''s'",
    "é", "ünï", "a,b", "-x", "?x", ":x", "%x", "@x", "`x", "#x", "'", '"',
]  # fmt: skip


@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize(
    "shape",
    ["key: {s}\n", "- {s}\n", "a:\n  - {s}\n  - {s}\n", "{s}: 1\n", "a:\n- x: {s}\n  y: {s} # c\n", "- - {s}\n"],
    ids=["value", "entry", "list", "key", "indentless", "nested"],
)
def test_yaml_1_1_scalars_read_as_the_node_path_reads_them(scalar, shape):
    assert_same(shape.replace("{s}", scalar).encode())


DOCUMENTS = {
    "empty": "",
    "comments-only": "# a\n\n  # b\n",
    "anchor-alias": "a: &x 1\nb: *x\n",
    "merge-key": "base: &b {x: 1}\nc:\n  <<: *b\n",
    "duplicate-key": "a: 1\nb: 2\na: 3\n",
    "duplicate-quoted-key": "a: 1\n'a': 2\n",
    "duplicate-nested": "a:\n  b: 1\n  b: 2\n",
    "equal-keys-of-two-types": "1: a\ntrue: b\n",
    "zero-and-minus-zero": "0.0: a\n-0.0: b\n",
    "nan-keys": ".nan: a\n.NaN: b\n",
    "null-key": "~: a\nnull: b\n",
    "deep": "".join("  " * i + "a:\n" for i in range(120)) + "  " * 120 + "b: 1\n",
    "deep-list": "".join("  " * i + "-\n" for i in range(120)),
    "not-too-deep": "".join("  " * i + "a:\n" for i in range(99)) + "  " * 99 + "b: 1\n",
    "indentless": "a:\n- 1\n- 2\nb:\n- x: 1\n  y: 2\n- z\n",
    "compact": "- - a\n  - b\n- - c\n-\n  d: 1\n-\n",
    "odd-indents": "a:\n     b: 1\n     c:\n        - 1\n        -   x: 2\n            y: 3\nd: 4\n",
    "bad-dedent": "a:\n    b: 1\n  c: 2\n",
    "continuation": "a: one\n  two\n",
    "quoted-continuation": 'a: "one\n  two"\n',
    "value-below-key": "a:\n  1\n",
    "indented-root": "  a: 1\n  b:\n    - x\n",
    "root-dedent": "  a: 1\nb: 2\n",
    "scalar-root": "just text\n",
    "list-then-key": "- a\nb: 1\n",
    "two-documents": "a: 1\n---\nb: 2\n",
    "document-start": "---\na: 1\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "tab-indent": "a:\n\tb: 1\n",
    "tab-in-value": "a: 'x\ty'\n",
    "crlf": "a: 1\r\nb: 2\r\n",
    "bom": "\ufeffa: 1\n",
    "nel": "a: x\x85y\n",
    "control-character": "a: x\x07y\n",
    "no-final-newline": "a:\n  b: 1",
    "block-scalar": "a: |\n  text\n",
    "flow": "a: [1, {b: 2}]\n",
    "empty-flow": "a: []\nb: {}\nc: [] # c\n",
    "quoted-keys": '\'a b\': 1\n"c\\td": 2\n"": 3\n',
    "spaces-before-colon": "a  : 1\n'b' : 2\n",
    "colon-without-space": '"a":b\n',
    "long-key": "k" * 1100 + ": 1\n",
    "comment-after-quote": 'a: "x" # c\nb: "y"# c\n',
    "hash-inside": "a: x#y\nb: 'x #y'\n",
    "trailing-spaces": "a: 1   \nb:    \n",
    "evalcases": "execution:\n  target: t\nevalcases:\n  - id: a\n    n: 1\n  -\n  - id: b\n",
}


@pytest.mark.parametrize("text", list(DOCUMENTS.values()), ids=list(DOCUMENTS))
def test_documents_read_as_the_node_path_reads_them(text):
    assert_same(text.encode())


def test_the_common_dataset_shape_is_read_without_the_parser():
    text = (
        "# a dataset\ndescription: invoices\nexecution:\n  target: t\n  evaluators:\n    - name: f\n"
        '      type: field_accuracy\n      fields:\n        - path: "a"\n          weight: 2.0\n'
        'evalcases:\n  - id: "c1"\n    expected_messages:\n      - role: "assistant"\n        content:\n'
        "          net_total: 16252\n          tax: -2437.8\n          ok: yes\n          none: ~\n"
        "          items: []\n    input_messages:\n      - role: user\n        content:\n"
        '          - type: "file"\n            value: "../fixtures/a.json"\n'
    )
    assert assert_same(text.encode())


def test_cases_are_packed_as_the_parser_path_packs_them():
    text = b"execution:\n  target: t\nevalcases:\n- id: a\n  x:\n  - 1\n- id: b\n  y:\n    - 1\n-\nafter: 1\n"
    block = load_block(text, True)
    plain = source._load_plain(text, True)
    assert isinstance(block["evalcases"], tuple) and len(block["evalcases"]) == 3
    # The packed bytes may differ where marshal marks shared objects; the cases they hold may not.
    unpacked = [{**data, "evalcases": typed(source.unpack_cases(data["evalcases"]))} for data in (block, plain)]
    assert unpacked[0] == unpacked[1]


def test_a_file_is_read_a_block_at_a_time(monkeypatch):
    monkeypatch.setattr(block_yaml, "_BLOCK", 7)
    text = "a:\n  - x: 'é ü'\n    y: 12\n  - z\nb: end"
    assert load_block(io.BytesIO(text.encode())) == yaml.load(text, Loader=Loader)


# -- hypothesis: block-style documents built line by line ------------------------------------------

tokens = st.sampled_from(SCALARS[:60]) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=8
).map(lambda text: text.replace("\n", " "))
quoted = tokens.map(lambda text: "'" + text.replace("'", "''") + "'") | tokens.map(
    lambda text: '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
)
scalars = tokens | quoted
comments = st.sampled_from(["", " # note", "  #", ""])


@st.composite
def blocks(draw: Any, depth: int = 0, indent: int = 0) -> list[str]:
    """The lines of a block mapping or list at `indent` (its children at a drawn deeper indent)."""
    is_map = draw(st.booleans())
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        head = " " * indent + (f"{draw(scalars)}:" if is_map else "-")
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            step = draw(st.sampled_from([0, 1, 2, 4])) if is_map else draw(st.sampled_from([1, 2, 3]))
            lines.append(head + draw(comments))
            lines.extend(draw(blocks(depth + 1, indent + step)))
        else:
            lines.append(f"{head} {draw(scalars)}{draw(comments)}")
    return lines


@settings(max_examples=400, deadline=None)
@given(blocks())
def test_generated_block_documents_read_as_the_node_path_reads_them(lines):
    assert_same(("\n".join(lines) + "\n").encode())


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | st.text(max_size=12),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=6) | st.integers(-5, 5) | st.booleans(), children, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_dumped_values_read_as_the_node_path_reads_them(value):
    assert_same(yaml.safe_dump(value, default_flow_style=False, allow_unicode=True).encode())


@pytest.mark.parametrize("text", list(DOCUMENTS.values()), ids=list(DOCUMENTS))
def test_the_whole_load_gives_the_node_path_data_or_its_refusal(text):
    expected = node_path(text.encode())
    try:
        got = typed(source._load(text.encode()))
    except yaml.YAMLError as exc:
        got = ("refused", type(exc).__name__)
    assert got == expected


def test_text_is_left_to_the_parser_exactly_where_the_character_class_says():
    """`_decoded` works on the bytes (control characters by `translate`, a few UTF-8 sequences by
    a byte pattern); it refuses a block exactly where `_AWKWARD` finds a character in its text."""
    refused = {True: [], False: []}
    for point in [*range(0x3100), *range(0x3100, 0x110000, 61), 0xFEFF, 0xFFFE, 0xFFFF, 0xFFFD, 0x10FFFF]:
        if 0xD800 <= point <= 0xDFFF:
            continue
        text = f"a: x{chr(point)}y\n"
        try:
            block_yaml._decoded(text.encode())
            left = False
        except Undecided:
            left = True
        refused[left].append(point)
        assert left == (re.search(block_yaml._AWKWARD, text) is not None), hex(point)
    assert refused[True] and refused[False]
