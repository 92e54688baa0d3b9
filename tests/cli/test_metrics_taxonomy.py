"""`agentv metrics --taxonomy` and the JSON's `taxonomy`: misses by kind per field, on real runs."""

from __future__ import annotations

import json

from agentv_py.evaluators.base import processed_result
from tests.cli.test_metrics import REPO_ROOT, invoke, row


def fa(*entries: dict) -> list:
    return [processed_result(name="fa", type="field_accuracy", score=0.0, details={"fields": list(entries)})]


def miss(path: str, expected: object, actual: object) -> dict:
    return {"path": path, "match": "exact", "expected": expected, "actual": actual, "status": "miss"}


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
    body = [line for line in lines[start:] if line.startswith("│")]
    assert body == [
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
    refused = invoke("metrics", str(results), "-f", "csv", "--taxonomy")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "error: --taxonomy goes with --format table (--format json always has the taxonomy)"
    )


def test_the_example_runs_taxonomy(monkeypatch, tmp_path):
    """What the taxonomy says of the README's example run: the missed invoice number is missing,
    the second line item's description and amount are wrong values."""
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "run.jsonl"
    invoke("eval", "evals/invoice-extraction/dataset.yaml", "--out", str(out))
    data = json.loads(invoke("metrics", str(out), "-f", "json").stdout)
    found = {name: {kind: n for kind, n in kinds.items() if n} for name, kinds in data["taxonomy"].items()}
    assert found == {
        "invoice_number": {"missing": 1},
        "line_items[1].amount": {"wrong_value": 1},
        "line_items[1].description": {"wrong_value": 1},
    }


def test_a_file_without_misses(tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_bytes(row("c1", fa({"path": "a", "status": "hit", "expected": 1, "actual": 1})))
    result = invoke("metrics", str(results), "--taxonomy")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "Misses by kind: no field_accuracy miss in this file"
