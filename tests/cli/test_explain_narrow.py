"""`agentv explain` on a narrow terminal and in a pipe: every line is wrapped between words with a
hanging indent (a word longer than the line stays whole), values keep their control characters
escaped; a line-items pair's sub-fields with no value on either side are folded into one line
(`--all` lists them); a skipped case and an xfail case say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import REPO_ROOT

TEMPLATES = "/opt/extractor/" + "a-rather-long-directory-name/" * 3 + "templates"  # one word of 101 characters
LINK = "https://example.com/" + "x" * 70  # a value that is one word of 90 characters
TOOL = f"""
import sys
print("INFO: loaded 215 templates from {TEMPLATES} for the document " + sys.argv[1], file=sys.stderr)
print("WARNING: the \\x1b[31mtotal\\x1b[0m was read from a table cell " + "that spans two pages " * 12, file=sys.stderr)
print(open(sys.argv[1]).read())
"""
NOTE = "Ocean freight from Rotterdam to Felixstowe, terminal handling and customs clearance included"
SUBS = ["qty", "sku", "unit", "note", "discount", "tax_rate", "barcode"]
ITEMS = {"path": "items", "match": "items", "key": ["description"], "fields": [{"path": name} for name in SUBS]}
FIELDS = json.dumps([{"path": "note"}, {"path": "link"}, ITEMS])
ANSWER = {
    "note": NOTE.replace("terminal", "\x1b[31mterminal"),
    "link": LINK,
    "items": [{"description": "Ocean freight", "qty": 2}, {"description": "Terminal handling", "qty": 1}],
}
EXPECTED = {
    "note": NOTE,
    "link": LINK,
    "items": [{"description": "Ocean freight", "qty": 2}, {"description": "Terminal handling", "qty": 3}],
}
CASES = {  # id: (answer, the case's mark)
    "c1": (ANSWER, ""),
    "ocr": (EXPECTED, "skip: needs OCR"),
    "known": (ANSWER, "xfail: parser drops the sign"),
    "stale": (EXPECTED, "xfail: true"),
}
BOX = ("┏", "┃", "┡", "│", "├", "└")


def invoke(columns: int, *args: str):
    return CliRunner(env={"COLUMNS": str(columns), "NO_COLOR": "1"}).invoke(app, list(args))


@pytest.fixture
def run(ws):
    """A real run: a cli target with long stderr lines, four cases (one skipped, two xfail)."""
    ws.file("tool.py", TOOL)
    ws.cli_target(f"{sys.executable} tool.py {{FILES}}")
    lines = [f"execution:\n  target: t\n  evaluators:\n    - {{type: field_accuracy, fields: {FIELDS}}}", "evalcases:"]
    for case_id, (answer, mark) in CASES.items():
        ws.file(f"fx/{case_id}.json", json.dumps(answer))
        lines.append(
            f"  - id: {case_id}\n"
            f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}]}}]\n"
            f"    expected_output: {json.dumps(EXPECTED)}" + (f"\n    {mark}" if mark else "")
        )
    ws.file("dataset.yaml", "\n".join(lines) + "\n")
    result = invoke(200, "eval", "dataset.yaml", "--out", "run.jsonl")
    assert result.exit_code == 1, result.output  # c1 does not pass
    return ws


def fits(line: str, width: int) -> bool:
    """The line is at most `width` cells, or it is one word too long for any line after its indent
    and a short label (`  | `, `expected: `, `got, normalised: `)."""
    if cell_len(line) <= width:
        return True
    word = line.split()[-1]
    head = line[: -len(word)]
    return len(head.split()) <= 2 and cell_len(head) <= width // 2 and cell_len(word) > width - cell_len(head) - 2


def flat(text: str) -> str:
    return " ".join(text.split())


VIEWS = {
    "case": ["c1"],
    "case-full": ["c1", "--full"],
    "field": ["c1", "note"],
    "long-word": ["c1", "link"],
    "items": ["c1", "items"],
    "items-all": ["c1", "items", "--all"],
}


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("view", list(VIEWS))
def test_every_line_fits_and_keeps_its_words_and_values_whole(run, view, columns):
    result = invoke(columns, "explain", "run.jsonl", *VIEWS[view])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert [line for line in out.splitlines() if not fits(line, columns)] == []
    assert "\x1b" not in out  # control characters are data: escaped (in a value, as JSON escapes it)
    if view.startswith("case"):
        assert "\\x1b[31mtotal\\x1b[0m" in out and "\\u001b[31mterminal" in out
    if view == "field":
        assert "\\u001b[31mterminal" in out
    wide = invoke(1000, "explain", "run.jsonl", *VIEWS[view]).stdout
    for line in wide.splitlines():  # every line of the wide view, word for word: no word split, none lost
        if not line.startswith(BOX) and "not scored (no value" not in line:
            assert flat(line) in flat(out), (line, out)
    if view.startswith("case"):
        assert any(line.endswith(TEMPLATES) for line in out.splitlines())  # a path: whole, on one line
        stderr = out.splitlines().index("the target's stderr (its last 2 lines):")
        assert out.splitlines()[stderr + 1] == "  | INFO: loaded 215 templates from"
        assert out.splitlines()[stderr + 2] == f"    {TEMPLATES}"  # the hanging indent, under the text
    if view == "long-word":
        assert f'expected: "{LINK}"' in out.splitlines() and f'got:      "{LINK}"' in out.splitlines()


def test_a_real_pipe_wraps_at_80_columns(run):
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    piped = subprocess.run(
        [sys.executable, "-m", "agentv_py", "explain", "run.jsonl", "c1"],
        capture_output=True,  # stdout is a pipe
        text=True,
        cwd=run.root,
        env={**env, "PYTHONPATH": str(REPO_ROOT), "NO_COLOR": "1"},
    )
    assert piped.returncode == 0, piped.stderr
    assert all(fits(line, 80) for line in piped.stdout.splitlines()), piped.stdout
    assert piped.stdout == invoke(80, "explain", "run.jsonl", "c1").stdout


HINT = {
    200: "  (--all lists the sub-fields with no value on either side one by one)\n",
    80: "  (--all lists the sub-fields with no value on either side one by one)\n",
    60: "  (--all lists the sub-fields with no value on either side\n    one by one)\n",
}
FOLDED = "    6 sub-fields not scored (no value on either side): sku, unit, note, discount, tax_rate, barcode"


@pytest.mark.parametrize(
    ("columns", "fold"),
    [
        (200, FOLDED),
        (80, "    6 sub-fields not scored (no value on either side): sku, unit ... and 4 more"),
        (
            60,
            "    6 sub-fields not scored (no value on either side): sku,\n"
            "      unit, note, discount, tax_rate, barcode",
        ),
    ],
    ids=["wide-all-named", "80-cut-to-the-line", "60-on-the-lines-the-count-takes"],
)
def test_sub_fields_with_no_value_fold_into_one_line_a_pair(run, columns, fold):
    out = invoke(columns, "explain", "run.jsonl", "c1", "items").stdout
    assignment = out[out.index("assignment:\n") :]
    assert assignment == (
        "assignment:\n"
        "  expected[0] ~ answer[0]: similarity 1.0, hit, score 1.0\n"
        "    qty: hit, expected 2\n"
        f"{fold}\n"
        "  expected[1] ~ answer[1]: similarity 1.0, miss, score 0.0\n"
        "    qty: miss, expected 3, got 1 (value mismatch)\n"
        f"{fold}\n" + HINT[columns]
    )


def test_all_lists_every_sub_field(run):
    out = invoke(200, "explain", "run.jsonl", "c1", "items", "--all").stdout.splitlines()
    start = out.index("  expected[0] ~ answer[0]: similarity 1.0, hit, score 1.0")
    assert out[start + 1 : start + 4] == [
        "    qty: hit, expected 2",
        "    sku: not scored, expected null, got (nothing) (no expected value)",
        "    unit: not scored, expected null, got (nothing) (no expected value)",
    ]
    assert not any("sub-fields not scored" in line or "--all" in line for line in out)


def test_a_skipped_case_says_why_it_has_no_row(run):
    result = invoke(80, "explain", "run.jsonl", "ocr")
    assert result.exit_code == 2
    assert result.stderr == "error: case 'ocr' was skipped: needs OCR (skip: in the dataset); it has no row\n"


@pytest.mark.parametrize(
    ("case", "header"),
    [
        ("known", ["case known: ok, fail, score 0.500", "XFAIL: parser drops the sign"]),
        (
            "stale",
            ["case stale: ok, pass, score 1.000", "XPASS: xfail: true (it passed: the xfail: mark may be stale)"],
        ),
    ],
    ids=["xfail", "xpass"],
)
def test_an_xfail_case_shows_its_mark_and_reason(run, case, header):
    for args in ([case], [case, "note"]):
        result = invoke(80, "explain", "run.jsonl", *args)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[1] == header[1]
    assert invoke(80, "explain", "run.jsonl", case).stdout.splitlines()[:2] == header
