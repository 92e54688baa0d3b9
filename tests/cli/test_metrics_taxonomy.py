"""`agentv metrics --taxonomy` and the JSON's `taxonomy`: misses by kind per field, on real runs."""

from __future__ import annotations

import json

from agentv_py.evaluators.base import processed_result
from tests.cli.test_metrics import REPO_ROOT, invoke, row


def fa(*entries: dict, name: str = "fa") -> list:
    return [processed_result(name=name, type="field_accuracy", score=0.0, details={"fields": list(entries)})]


def miss(path: str, expected: object, actual: object) -> dict:
    return {"path": path, "match": "exact", "expected": expected, "actual": actual, "status": "miss"}


def taxonomy_lines(stdout: str) -> list[str]:
    """The table's data rows after the "Misses by kind" title, spaces collapsed."""
    lines = stdout.splitlines()
    start = [line.strip() for line in lines].index("Misses by kind")
    return [" ".join(line.replace("│", " ").split()) for line in lines[start:] if line.startswith("│")]


def test_every_kind_counted_per_field(tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_bytes(
        row("c1", fa(miss("number", "INV-1", "inv-1"), miss("name", "Acme Shipping", "Acme Shiping")))
        + row("c2", fa(miss("number", "INV-2", None), miss("total", 10, "$10.00"), miss("name", None, "X")))
        + row(
            "c3", fa(miss("number", "INV-3", "ORD-9"), {"path": "total", "status": "hit", "expected": 1, "actual": 1})
        )
    )
    table = invoke("metrics", str(results), "--taxonomy")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    start = [line.strip() for line in lines].index("Misses by kind")
    header = "┃ field ┃ missing ┃ hallucinated ┃ wrong value ┃ format only ┃ near miss ┃ misses ┃"
    assert " ".join(lines[start + 2].split()) == header
    assert [line for line in lines[start:] if line.startswith("│")] == [
        "│ number │       1 │            0 │           1 │           1 │         0 │      3 │",
        "│ name   │       0 │            1 │           0 │           0 │         1 │      2 │",
        "│ total  │       0 │            0 │           0 │           1 │         0 │      1 │",
        "│ total  │       1 │            1 │           1 │           2 │         1 │      6 │",
    ]
    data = json.loads(invoke("metrics", str(results), "-f", "json").stdout)
    assert data["taxonomy"] == {
        "number": {"missing": 1, "hallucinated": 0, "wrong_value": 1, "format_only": 1, "near_miss": 0},
        "name": {"missing": 0, "hallucinated": 1, "wrong_value": 0, "format_only": 0, "near_miss": 1},
        "total": {"missing": 0, "hallucinated": 0, "wrong_value": 0, "format_only": 1, "near_miss": 0},
    }
    plain = invoke("metrics", str(results))
    assert "Misses by kind" not in plain.stdout  # only asked for with --taxonomy
    refused = invoke("metrics", str(results), "-f", "csv", "--taxonomy")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "error: --taxonomy goes with --format table (--format json always has the taxonomy)"
    )


def test_evaluator_option_and_labels(tmp_path):
    """--evaluator keeps one evaluator's misses; a field two evaluators score is `evaluator/field`
    in both tables; names are data (markup and escapes shown as text)."""
    results = tmp_path / "run.jsonl"
    hostile = "[bold red]x[/]\x1b[2J"
    results.write_bytes(
        row("c1", fa(miss("total", 1, 2)) + fa(miss("total", 1, None), miss(hostile, "a", "A"), name="other"))
    )
    both = invoke("metrics", str(results), "--taxonomy")
    assert both.exit_code == 0, both.output
    assert taxonomy_lines(both.stdout) == [  # one miss each: by name
        "[bold red]x[/]\\x1b[2J 0 0 0 1 0 1",
        "fa/total 0 0 1 0 0 1",
        "other/total 1 0 0 0 0 1",
        "total 1 0 1 1 0 3",
    ]
    only = invoke("metrics", str(results), "--taxonomy", "-e", "other")
    assert taxonomy_lines(only.stdout) == [
        "[bold red]x[/]\\x1b[2J 0 0 0 1 0 1",
        "total 1 0 0 0 0 1",
        "total 1 0 0 1 0 2",
    ]
    data = json.loads(invoke("metrics", str(results), "-f", "json", "-e", "fa").stdout)
    assert data["taxonomy"] == {
        "total": {"missing": 0, "hallucinated": 0, "wrong_value": 1, "format_only": 0, "near_miss": 0}
    }


DATASET = """
execution:
  target: t
  evaluators:
    - name: fields
      type: field_accuracy
      fields:
        - {path: invoice_number}
        - {path: supplier}
        - {path: gross, match: numeric_tolerance, tolerance: 0}
        - {path: date, match: date, formats: [YYYY-MM-DD]}
        - {path: po, required: false}
        - {path: note}
        - path: lines
          match: items
          key: [description]
          fields: [{path: description}, {path: quantity}]
evalcases:
  - id: c1
    input: hi
    expected_output:
      invoice_number: INV-1
      supplier: Acme Shipping
      gross: 1234.5
      date: "2025-01-15"
      note: paid
      lines: [{description: Freight, quantity: 2}, {description: Insurance, quantity: 1}]
  - id: c2
    input: hi
    expected_output:
      invoice_number: INV-2
      supplier: Acme Shiping
      gross: 1234.5
      date: "2025-01-16"
      po: null
      note: due
      lines: [{description: Freight, quantity: "2"}, {description: Customs, quantity: 1}]
"""
ANSWER = (
    '{"invoice_number": "inv-1", "supplier": "Acme Shiping", "gross": "$1,234.50", "date": "15-Jan-2025", '
    '"po": "PO-9", "lines": [{"description": "Freight", "quantity": "2"}, {"description": "Customs", "quantity": 1}]}'
)


def test_a_real_run(ws):
    """One answer for two cases: each field's misses by kind, line items per item, and a field
    absent from the ground truth but answered (po in c1: not scored, counted FP) as hallucinated."""
    ws.targets(f"targets:\n  - {{name: t, provider: mock, response: {json.dumps(ANSWER)}}}\n")
    ws.dataset(DATASET)
    run = invoke("eval", "dataset.yaml", "--out", "run.jsonl")
    assert run.exit_code == 1, run.output  # both cases fail
    table = invoke("metrics", "run.jsonl", "--taxonomy")
    assert table.exit_code == 0, table.output
    assert taxonomy_lines(table.stdout) == [
        "lines 1 1 0 1 0 3",
        "date 0 0 1 1 0 2",
        "gross 0 0 0 2 0 2",
        "invoice_number 0 0 1 1 0 2",
        "note 2 0 0 0 0 2",
        "po 0 2 0 0 0 2",
        "supplier 0 0 0 0 1 1",
        "total 3 3 2 5 1 14",
    ]
    data = json.loads(invoke("metrics", "run.jsonl", "-f", "json").stdout)
    assert data["taxonomy"]["lines"] == {
        "missing": 1,
        "hallucinated": 1,
        "wrong_value": 0,
        "format_only": 1,
        "near_miss": 0,
    }
    # every FP and FN of the per-field table has a kind: po's 2 FP are its 2 hallucinated
    assert (data["fields"]["po"]["fp"], data["fields"]["po"]["fn"]) == (2, 0)


def test_the_example_runs_taxonomy(monkeypatch, tmp_path):
    """What the taxonomy says of the README's example run: the missed invoice number is missing,
    the second line item's description and amount are wrong values, and the optional first
    line-item description the header cases' ground truth leaves out but the extractor answers is
    hallucinated (the per-field table's 4 FP)."""
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "run.jsonl"
    invoke("eval", "evals/invoice-extraction/dataset.yaml", "--out", str(out))
    data = json.loads(invoke("metrics", str(out), "-f", "json").stdout)
    found = {name: {kind: n for kind, n in kinds.items() if n} for name, kinds in data["taxonomy"].items()}
    assert found == {
        "invoice_fields/line_items[0].description": {"hallucinated": 4},
        "invoice_number": {"missing": 1},
        "line_items[1].amount": {"wrong_value": 1},
        "line_items[1].description": {"wrong_value": 1},
    }
    assert data["fields"]["invoice_fields/line_items[0].description"]["fp"] == 4


def test_a_file_without_misses(tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_bytes(row("c1", fa({"path": "a", "status": "hit", "expected": 1, "actual": 1})))
    result = invoke("metrics", str(results), "--taxonomy")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "Misses by kind: no field_accuracy miss in this file"
    filtered = invoke("metrics", str(results), "--taxonomy", "-e", "fa")
    assert filtered.stdout.splitlines()[-1] == "Misses by kind: no field_accuracy miss in this file (evaluator fa)"
    data = json.loads(invoke("metrics", str(results), "-f", "json").stdout)
    assert data["taxonomy"] == {}


def test_the_counts_are_the_same_whether_the_taxonomy_is_summed_or_not(tmp_path):
    from agentv_py.report.metrics import aggregate

    results = tmp_path / "run.jsonl"
    judge = processed_result(name="h", type="code_judge", score=1.0, details={"metrics": {"a": {"tp": 1, "fn": 1}}})
    lines = [
        row(f"c{i}", [*fa(miss("number", f"INV-{i}", None if i % 3 else "inv"), name=f"fa{i % 2}"), judge])
        for i in range(12)
    ]
    results.write_bytes(b"".join(lines) + b"{not json\n")
    summed, plain = aggregate(results, taxonomy=True), aggregate(results, taxonomy=False)
    assert plain.to_json() == {**summed.to_json(), "taxonomy": {}}
    assert summed.to_json()["taxonomy"] and plain.kinds == {}
    table, with_kinds = invoke("metrics", str(results)), invoke("metrics", str(results), "--taxonomy")
    assert with_kinds.stdout.startswith(table.stdout) and "Misses by kind" in with_kinds.stdout
