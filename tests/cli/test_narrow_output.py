"""Narrow terminals and pipes: at 60 and 80 columns, with stdout a pipe (CliRunner's capture, and
one real pipe), no table agentv prints splits a word or cuts a value's start, and a table that
does not fit is a list (`report.layout`)."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import processed_result
from tests.conftest import REPO_ROOT, make_row

LONG_ID = "invoice-2025-01-with-a-rather-long-identifier"
EXPECTED = {
    "merchant": {"name": "Acme Shipping Ltd"},
    "invoice_date": "2025-01-15",
    "line_items": [
        {"description": "Ocean freight", "service_date": "2025-01-10"},
        {"description": "Terminal handling", "service_date": "2025-01-11"},
    ],
    "supplier": {"tax_registration": {"vat_number": "NL123456789B01"}},
}
WRONG = {
    "merchant": {"name": "Acme Shiping Ltd"},
    "invoice_date": "16-Jan-2025",
    "line_items": [
        {"description": "Ocean-freight", "service_date": "2025-01-10"},
        {"description": "Terminal handling", "service_date": "2025-01-12"},
    ],
    "supplier": {"tax_registration": {"vat_number": "NL123456789B02"}},
}
FIELDS = (
    "[{path: merchant.name, match: fuzzy, threshold: 0.95}, {path: invoice_date, match: date},"
    " {path: 'line_items[0].description'}, {path: 'line_items[1].service_date', match: date},"
    " {path: supplier.tax_registration.vat_number}]"
)
BOX = ("┏", "┃", "┡", "│", "├", "└")


def invoke(columns: int, *args: str):
    return CliRunner(env={"COLUMNS": str(columns), "NO_COLOR": "1"}).invoke(app, list(args))


def entry(path: str, match: str, expected: object, actual: object, reason: str | None = None) -> dict:
    status = "miss" if reason else "hit"
    found = {"path": path, "match": match, "expected": expected, "actual": actual, "status": status}
    return {**found, "score": 0.0 if reason else 1.0, **({"reason": reason} if reason else {})}


def field_rows() -> bytes:
    """A results row whose fields have the long paths of the report (`line_items[*].description`)."""
    fields = [
        entry("merchant.name", "fuzzy", "Acme Shipping Ltd", "Acme Shiping Ltd", "similarity 0.94 < 0.95"),
        entry(
            "invoice_date", "date", "2025-01-15", "16-Jan-2025", "date mismatch: got 2025-01-16, expected 2025-01-15"
        ),
        entry("line_items[*].description", "exact", "Ocean freight", "Ocean-freight", "value mismatch"),
        entry("line_items[*].service_date", "date", "2025-01-11", "2025-01-12", "date mismatch"),
        entry("supplier.tax_registration.vat_number", "exact", "NL123456789B01", "NL123456789B01"),
    ]
    results = [
        processed_result(name="invoice_header_fields", type="field_accuracy", score=0.2, details={"fields": fields})
    ]
    row = make_row(eval_id=LONG_ID, score=0.2, verdict="fail", evaluator_results=results)
    return orjson.dumps(row.to_json_dict()) + b"\n"


@pytest.fixture
def runs(ws):
    """Two real runs of one dataset (base: every field right; new: the long-id case's fields
    wrong, dates included), a results file with `[*]` paths, and the new answers left in place."""
    ws.cli_target("cat {FILES}")
    for out, answer in (("base.jsonl", EXPECTED), ("new.jsonl", WRONG)):
        ws.cases_dataset([(LONG_ID, answer, EXPECTED), ("inv-2", EXPECTED, EXPECTED)], fields=FIELDS)
        result = invoke(200, "eval", "dataset.yaml", "--out", out)
        assert result.exit_code in (0, 1), result.output
    ws.file("fields.jsonl", field_rows())
    return ws


STAR_PATHS = ["merchant.name", "invoice_date", "line_items[*].description", "line_items[*].service_date"]
RUN_PATHS = ["merchant.name", "invoice_date", "line_items[0].description", "line_items[1].service_date"]
LONG_PATH = "supplier.tax_registration.vat_number"
# (arguments, {table title: the layout at 60 and at 80 columns}, what must be whole on one line)
COMMANDS = {
    "eval-summary": (
        ["eval", "dataset.yaml", "--out", "again.jsonl"],
        {"Cases": "list"},
        [LONG_ID, *RUN_PATHS[:3], "'2025-01-15'", "'16-Jan-2025'", "'Ocean-freight')"],
    ),
    "explain-case": (
        ["explain", "fields.jsonl", LONG_ID],
        {"Fields": "list"},
        [LONG_ID, *STAR_PATHS, LONG_PATH, '"2025-01-15"', '"16-Jan-2025"', '"2025-01-12"', "invoice_header_fields"],
    ),
    "explain-field": (
        ["explain", "new.jsonl", LONG_ID, "invoice_date"],
        {"Options": "table"},  # it fits: it stays a table
        ['"2025-01-15"', '"16-Jan-2025"', "dataset.yaml:"],
    ),
    "metrics": (
        ["metrics", "fields.jsonl"],
        {"Extraction metrics: fields.jsonl": "list"},
        [*STAR_PATHS, LONG_PATH, "precision", "support"],
    ),
    "metrics-taxonomy": (
        ["metrics", "fields.jsonl", "--taxonomy"],
        {"Misses by kind": "list"},
        [*STAR_PATHS, "hallucinated", "wrong value", "format only", "near miss"],
    ),
    "compare": (
        ["compare", "base.jsonl", "new.jsonl"],
        {"Changed cases (1, worst first)": "list", "Fields": "list"},
        [LONG_ID, *RUN_PATHS, LONG_PATH, "hit->miss", "F1 delta", "pass -> fail"],
    ),
}


def layout(lines: list[str], title: str) -> str:
    """How the table titled `title` was printed: `table` (boxed) or `list`."""
    index = [line.rstrip() for line in lines].index(title)
    return "table" if lines[index + 1].startswith("┏") else "list"


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_table_keeps_words_and_values_whole(runs, command, columns):
    args, layouts, whole = COMMANDS[command]
    result = invoke(columns, *args)
    assert result.exit_code in (0, 1), result.output
    lines = result.stdout.splitlines()
    for text in whole:  # a field path, a value, a case id, a column's name: whole, on one line
        assert any(text in line for line in lines), (text, result.stdout)
    for title, expected in layouts.items():
        assert layout(lines, title) == expected, result.stdout
    boxed = [line for line in lines if line.startswith(BOX)]
    assert all(len(line) <= columns for line in boxed), result.stdout
    assert "…" not in "".join(boxed)  # nothing in a table cut short


def test_a_date_miss_keeps_both_values_when_shortened(ws):
    """Without --verbose a miss is shortened at the end of its reason: never its path or values."""
    path = "line_items[0].invoice_issue_date_as_printed_on_the_document"
    ws.cli_target("cat {FILES}")
    answer, expected = ({"line_items": [{path.split(".")[1]: date}]} for date in ("16-Jan-2025", "2025-01-15"))
    ws.cases_dataset([(LONG_ID, answer, expected)], fields=f"[{{path: '{path}', match: date}}]")
    for columns in (60, 80):
        shown = invoke(columns, "eval", "dataset.yaml", "--out", f"w{columns}.jsonl").stdout
        assert layout(shown.splitlines(), "Cases") == "list"
        words = " ".join(shown.split())
        assert f"{path} (date mismatch: got…; expected '2025-01-15', got '16-Jan-2025')" in words, shown


def test_a_real_pipe_gets_the_same_list(runs):
    """`agentv metrics --taxonomy | cat` at 60 columns: what CliRunner's capture shows."""
    piped = subprocess.run(
        [sys.executable, "-m", "agentv_py", "metrics", "fields.jsonl", "--taxonomy"],
        capture_output=True,  # stdout is a pipe
        text=True,
        cwd=runs.root,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "60", "NO_COLOR": "1"},
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == invoke(60, "metrics", "fields.jsonl", "--taxonomy").stdout
    assert "  line_items[*].description\n    missing 0  hallucinated 0  wrong value 0  format only 0\n" in piped.stdout
