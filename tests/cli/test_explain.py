"""`agentv explain`: a case and a field of real runs, option sources by dataset line, line items,
judges, bad input with exact messages, hostile values."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import processed_result
from tests.conftest import REPO_ROOT, make_row


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def table_rows(shown: list[str]) -> list[list[str]]:
    """The body rows of the Rich tables in the output, as lists of cells."""
    return [[cell.strip() for cell in line.strip("│").split("│")] for line in shown if line.startswith("│")]


def test_a_field_of_the_example_run_with_its_option_sources(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "run.jsonl"
    invoke("eval", "evals/invoice-extraction/dataset.yaml", "--out", str(out))
    result = invoke("explain", str(out), "invoice-004", "invoice_number")
    assert result.exit_code == 0, result.output
    shown = lines(result.stdout)
    assert shown[:3] == [
        "case invoice-004, field invoice_number (invoice_fields, field_accuracy)",
        "dataset: evals/invoice-extraction/dataset.yaml",
        "match: exact",
    ]
    assert "│ weight   │ 3.0     │ evals/invoice-extraction/dataset.yaml:15 │" in shown
    assert "│ required │ true    │ evals/invoice-extraction/dataset.yaml:15 │" in shown
    assert (
        shown[-6:]
        == [
            'expected: "INV-2025-001004"',
            "got:      null",
            'expected, normalised: "INV-2025-001004"',
            "got, normalised:      null",
            "status: miss, score 0.000",
            "reason: required, missing",
        ][:4]
        + shown[-2:]
        or shown
    )
    assert "status: miss, score 0.000" in shown and "reason: required, missing" in shown
    assert shown[-1] == (
        "weight 3.0: 25% of the score of evaluator invoice_fields, which is 100% of the case score; "
        "this field is 25.0% of the case score and cost it 0.250"
    )
    fuzzy = lines(invoke("explain", str(out), "invoice-002", "supplier.name").stdout)
    options = {cells[0]: cells[1:] for cells in table_rows(fuzzy)}
    assert options["threshold"] == ["0.85", "evals/invoice-extraction/dataset.yaml:18"]
    assert options["case_sensitive"] == ["false", "default"]
    assert 'got, normalised:      "acme - shipping" (NFKC, whitespace collapsed, casefolded)' in fuzzy
    date = lines(invoke("explain", str(out), "invoice-006", "invoice_date").stdout)
    assert "expected, normalised: 2025-01-15 (ISO 8601)" in date
    assert "got, normalised:      2025-01-15 (format DD-MMM-YYYY)" in date


def test_a_case_overview_with_a_code_judge(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "run.jsonl"
    invoke("eval", "evals/invoice-extraction/dataset.yaml", "--out", str(out))
    result = invoke("explain", str(out), "invoice-002")
    assert result.exit_code == 0, result.output
    shown = lines(result.stdout)
    assert shown[0] == "case invoice-002: ok, pass, score 0.994"
    assert any(line.startswith("│ invoice_fields │ field_accuracy │ processed │ 0.989 │") for line in shown)
    assert any(line.startswith("│ names_fuzzy    │ code_judge     │ processed │ 1.000 │") for line in shown)
    judge = shown.index(next(line for line in shown if line.startswith("names_fuzzy (code_judge)")))
    assert shown[judge + 1].startswith("  config: evals/invoice-extraction/dataset.yaml:")
    assert shown[judge + 2].startswith("  sent to: ")
    assert shown[judge + 3].startswith("  sent: the answer (")
    assert any(line.startswith("  replied: ") for line in shown[judge:])


def test_line_items_show_the_matrix_and_the_assignment(ws):
    expected = {"items": [{"description": "Widget", "qty": 2}, {"description": "Gadget", "qty": 1}]}
    answer = {"items": [{"description": "Gadget", "qty": 3}, {"description": "Bolt", "qty": 1}, None]}
    ws.cli_target("cat {FILES}")
    ws.file("fx/c1.json", json.dumps(answer))
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - path: items\n          match: items\n          key: [description]\n"
        "          fields: [{path: qty, match: numeric_tolerance, tolerance: 0}]\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]\n"
        f"    expected_messages: [{{role: assistant, content: {json.dumps(expected)}}}]\n"
    )
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl").exit_code == 1
    result = invoke("explain", "run.jsonl", "c1", "items")
    assert result.exit_code == 0, result.output
    shown = lines(result.stdout)
    assert '│ key       │ ["description"] │ dataset.yaml:8 │' in shown
    assert "items: paired by description (threshold 0.8, optimal)" in shown
    matrix = shown.index("similarity of the keys (rows: expected items, columns: answer items):")
    assert shown[matrix + 2 : matrix + 7] == [
        "┃     ┃  [0] ┃  [1] ┃",
        "┡━━━━━╇━━━━━━╇━━━━━━┩",
        "│ [0] │ 0.67 │ 0.17 │",
        "│ [1] │ 1.00 │ 0.17 │",
        "└─────┴──────┴──────┘",
    ]
    assert "  expected[1] ~ answer[0]: similarity 1.0, miss, score 0.0" in shown
    assert any(line.startswith("    qty: miss, expected 1, got 3") for line in shown)
    assert '  missing [0]: {"description": "Widget", "qty": 2}' in shown
    assert '  extra [1]: {"description": "Bolt", "qty": 1}' in shown and "  extra [2]: null" in shown


def write(path: Path, rows: list) -> Path:
    path.write_bytes(b"".join(orjson.dumps(row.to_json_dict()) + b"\n" for row in rows))
    return path


def fa_row(eval_id: str, expected: object, actual: object):
    entry = {"path": "total", "match": "exact", "expected": expected, "actual": actual, "status": "miss", "score": 0.0}
    results = [processed_result(name="fa", type="field_accuracy", score=0.0, details={"fields": [entry]})]
    return make_row(eval_id=eval_id, score=0.0, verdict="fail", evaluator_results=results)


def test_bad_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "run.jsonl", [fa_row("invoice-001", 1, 2), fa_row("invoice-002", 1, 2)])
    (tmp_path / "cut.jsonl").write_bytes((tmp_path / "run.jsonl").read_bytes()[:-10])
    cases = [
        (["nope.jsonl", "c"], "error: results file not found: nope.jsonl"),
        (
            ["run.jsonl", "invoice-01"],
            "error: no case 'invoice-01' in run.jsonl (did you mean 'invoice-001'?)\n"
            "hint: its cases: invoice-001, invoice-002",
        ),
        (
            ["run.jsonl", "invoice-001", "totl"],
            "error: case 'invoice-001' has no field 'totl'\nhint: its fields: total",
        ),
        (["cut.jsonl", "invoice-001"], "error: cut.jsonl:2: not JSON: "),
    ]
    for args, message in cases:
        result = invoke("explain", *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(message), (args, result.stderr)
    alone = invoke("explain", "run.jsonl", "invoice-001", "total")
    assert alone.exit_code == 0, alone.output
    assert lines(alone.stdout)[1] == (
        "option sources: dataset not available (no manifest names the dataset (pass --dataset))"
    )
    assert lines(alone.stdout)[3].startswith('options as the row recorded them: {"match": "exact"')


def test_hostile_values_are_text_and_long_ones_are_cut(tmp_path):
    hostile = "[bold red]x[/] \x1b[31mred\x1b[0m \x00 \u202e"
    huge = "z" * 1_000_000
    write(tmp_path / "run.jsonl", [fa_row(hostile, huge, hostile)])
    result = invoke("explain", str(tmp_path / "run.jsonl"), hostile, "total")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b" not in out and "\x00" not in out and "\u202e" not in out
    assert "[bold red]x[/] \\x1b[31mred\\x1b[0m \\x00 \\u202e" in out
    assert f'expected: "{"z" * 119}… (1000002 characters; --full shows all)' in out
    assert len(out) < 5_000
    full = invoke("explain", str(tmp_path / "run.jsonl"), hostile, "total", "--full")
    assert huge in full.stdout
    overview = invoke("explain", str(tmp_path / "run.jsonl"), hostile)
    assert overview.exit_code == 0 and "\x1b" not in overview.stdout
