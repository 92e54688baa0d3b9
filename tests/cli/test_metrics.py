"""`agentv metrics`: sums details.metrics over a results file; undefined shown as '-' / null."""

from __future__ import annotations

import csv
import io
import json

import orjson
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import processed_result
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.metrics import field_counts
from tests.conftest import REPO_ROOT, make_row
from tests.scoring.test_metrics import FIELDS, five_documents


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "120", "NO_COLOR": "1"}).invoke(app, list(args))


def row(eval_id: str, results: list[EvaluatorResult]) -> bytes:
    data = make_row(eval_id=eval_id, target="x", evaluator_results=results).to_json_dict()
    return orjson.dumps(data) + b"\n"


def judge(name: str, metrics: dict) -> EvaluatorResult:
    return processed_result(name=name, type="code_judge", score=1.0, details={"metrics": metrics})


def worked_example_file(path):
    with open(path, "wb") as handle:
        for i, (e, p) in enumerate(zip(*five_documents(), strict=False)):
            metrics = {name: c.to_dict() for name, c in field_counts(e, p, FIELDS).items()}
            handle.write(row(f"doc-{i}", [judge("header_metrics", metrics)]))
    return path


def test_worked_example_table(tmp_path):
    result = invoke("metrics", str(worked_example_file(tmp_path / "run.jsonl")), "--no-intervals")
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    body = [" ".join(line.replace("│", " ").split()) for line in lines if line.startswith("│")]
    assert body == [
        "currency 4 0 1 1 0.800 0.800 0.800 5",
        "gross_total 3 0 1 2 0.750 0.600 0.667 5",
        "supplier.name 1 0 4 4 0.200 0.200 0.200 5",
        "invoice_number 4 0 0 1 1.000 0.800 0.889 5",
        "invoice_date 5 0 0 0 1.000 1.000 1.000 5",
        "importer.name 5 0 0 0 1.000 1.000 1.000 5",
        "total 22 0 6 8 0.786 0.733 0.759 30",
    ]
    assert "micro P/R/F1: 0.786 / 0.733 / 0.759   macro-F1: 0.759" in lines
    assert "5 of 5 rows had metrics" in lines


def test_csv_and_json_carry_the_same_numbers(tmp_path):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    table = list(csv.DictReader(io.StringIO(invoke("metrics", path, "--format", "csv", "--no-intervals").stdout)))
    data = json.loads(invoke("metrics", path, "--format", "json").stdout)
    by_field = {r["field"]: r for r in table}
    assert by_field["gross_total"] == {
        "field": "gross_total",
        "tp": "3",
        "tn": "0",
        "fp": "1",
        "fn": "2",
        "precision": "0.750000",
        "recall": "0.600000",
        "f1": "0.666667",
        "support": "5",
    }
    assert by_field["__total__"]["tp"] == "22" and by_field["__macro__"]["f1"] == "0.759259"
    assert round(data["fields"]["gross_total"]["f1"], 6) == float(by_field["gross_total"]["f1"])
    assert (
        data["total"]["tp"] == 22 and round(data["micro"]["f1"], 3) == 0.759 and round(data["macro_f1"], 6) == 0.759259
    )


def test_undefined_is_dash_in_table_empty_in_csv_null_in_json(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(row("c1", [judge("h", {"po_number": {"tp": 0, "tn": 4, "fp": 0, "fn": 0}})]))
    body = [line for line in invoke("metrics", str(path)).stdout.splitlines() if "po_number" in line][0]
    assert " ".join(body.replace("│", " ").split()) == "po_number 0 4 0 0 - - - 0"
    assert next(r for r in csv.DictReader(io.StringIO(invoke("metrics", str(path), "-f", "csv").stdout)))["f1"] == ""
    assert json.loads(invoke("metrics", str(path), "-f", "json").stdout)["fields"]["po_number"]["f1"] is None


def test_bad_lines_are_reported_and_skipped(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(
        row("c1", [judge("h", {"a": {"tp": 1, "tn": 0, "fp": 0, "fn": 0}})])
        + b"{truncated\n"
        + row("c2", [judge("h", {"a": {"tp": "one"}, "b": [1]})])
        + row("c3", [judge("h", {"a": {"tp": 1}})])
    )
    result = invoke("metrics", str(path), "-f", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["fields"] == {
        "a": {"tp": 2, "tn": 0, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2}
    }
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"{path}:2: skipped: not JSON")
    assert errors[1:] == [
        f"{path}:3: skipped: c2: h: details.metrics.a: 'tp' must be a whole number >= 0, got 'one'",
        f"{path}:3: skipped: c2: h: details.metrics.b: expected an object of counts, got [1]",
    ]


def test_nested_results_and_evaluator_filter(tmp_path):
    nested = processed_result(
        name="composite",
        type="code_judge",
        score=1.0,
        details={"evaluator_results": [{"name": "inner", "details": {"metrics": {"x": {"tp": 2}}}}]},
    )
    path = tmp_path / "run.jsonl"
    path.write_bytes(row("c1", [nested, judge("outer", {"y": {"fn": 1}})]))
    data = json.loads(invoke("metrics", str(path), "-f", "json").stdout)
    assert set(data["fields"]) == {"x", "y"}
    only = json.loads(invoke("metrics", str(path), "-f", "json", "--evaluator", "inner").stdout)
    assert set(only["fields"]) == {"x"} and only["evaluator"] == "inner"
    missing = invoke("metrics", str(path), "--evaluator", "nope")
    assert missing.exit_code == 1
    assert "no metrics from an evaluator named 'nope'; evaluators with metrics: inner, outer" in missing.stderr


def test_no_metrics_says_how_to_emit_them(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(row("c1", [processed_result(name="f", type="field_accuracy", score=1.0)]))
    result = invoke("metrics", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        f"no per-field counts in 1 rows of {path}: per-field counts come from field_accuracy and iou_score "
        "results, and from judges that put them in details.metrics, e.g. "
        '{"metrics": {"supplier.name": {"tp": 1, "tn": 0, "fp": 0, "fn": 0}}}; the example judges '
        "evals/invoice-extraction/judges/header_confusion_metrics.py and line_item_matching.py do "
        "(see docs/metrics.md)\n"
    )


def field_accuracy_row(eval_id: str, name: str, answer: dict, expected: dict) -> bytes:
    from pathlib import Path

    from agentv_py.evaluators import EvalContext, run_evaluator
    from agentv_py.models.fields import FieldAccuracyConfig

    config = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "name": name, "fields": [{"path": k} for k in expected]}
    )
    result = run_evaluator(config, EvalContext(eval_id, "d", Path("."), json.dumps(answer), expected))
    return row(eval_id, [result])


def test_field_accuracy_alone_gives_per_field_metrics(tmp_path):
    path = tmp_path / "run.jsonl"
    truth = {"invoice_number": "INV-1", "po_number": None}
    path.write_bytes(
        field_accuracy_row("c1", "fields", {"invoice_number": "INV-1", "po_number": None}, truth)
        + field_accuracy_row("c2", "fields", {"invoice_number": "INV-9", "po_number": "PO-7"}, truth)
        + field_accuracy_row("c3", "fields", {}, truth)
    )
    data = json.loads(invoke("metrics", str(path), "-f", "json").stdout)
    counts = {name: (f["tp"], f["tn"], f["fp"], f["fn"]) for name, f in data["fields"].items()}
    assert counts == {"invoice_number": (1, 0, 1, 2), "po_number": (0, 2, 1, 0)}
    assert data["rows_with_metrics"] == 3


def test_a_field_named_by_a_judge_and_field_accuracy_is_kept_apart(tmp_path):
    path = tmp_path / "run.jsonl"
    judged = judge("header", {"total": {"tp": 1}})
    fields = field_accuracy_row("c1", "fields", {"total": 5, "date": "x"}, {"total": 6, "date": "x"})
    path.write_bytes(row("c0", [judged]) + fields)
    data = json.loads(invoke("metrics", str(path), "-f", "json").stdout)
    assert list(data["fields"]) == ["header/total", "fields/total", "date"]
    assert (data["fields"]["header/total"]["tp"], data["fields"]["fields/total"]["fn"]) == (1, 1)
    only = json.loads(invoke("metrics", str(path), "-f", "json", "--evaluator", "fields").stdout)
    assert list(only["fields"]) == ["total", "date"]


def test_the_readme_example_needs_no_judge(monkeypatch, tmp_path):
    """A newcomer's first run (field_accuracy only) yields per-field precision, recall and F1."""
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "run.jsonl"
    invoke("eval", "evals/invoice-extraction/dataset.yaml", "--out", str(out))
    result = invoke("metrics", str(out), "-f", "json")
    assert result.exit_code == 0, result.output
    fields = json.loads(result.stdout)["fields"]
    assert (fields["invoice_number"]["tp"], fields["invoice_number"]["fn"], fields["invoice_number"]["recall"]) == (
        4,
        1,
        0.8,
    )
    assert fields["gross_total"]["f1"] == 1.0


def test_missing_file_exits_2(tmp_path):
    result = invoke("metrics", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2 and "error: results file not found" in result.stderr


def test_end_to_end_with_the_example_judges(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "run.jsonl"
    run = invoke("eval", "evals/invoice-extraction/confusion-metrics.yaml", "--out", str(out))
    assert run.exit_code == 0, run.output
    data = json.loads(invoke("metrics", str(out), "-f", "json").stdout)
    fields = data["fields"]
    assert (fields["po_number"]["fp"], fields["po_number"]["tn"], fields["po_number"]["f1"]) == (
        1,
        6,
        0.0,
    )  # answered once, never right: F1 0, not undefined
    assert (fields["invoice_number"]["tp"], fields["invoice_number"]["fn"]) == (6, 1)
    assert (fields["currency"]["fp"], fields["currency"]["fn"]) == (1, 1)
    assert (fields["line_items[].description"]["tp"], fields["line_items[].description"]["fp"]) == (20, 1)
    assert data["rows_with_metrics"] == 7


def test_csv_shows_hostile_field_names_as_text(tmp_path):
    """Field names are data: control characters are written as escapes, and a name a spreadsheet
    would read as a formula (starting with =, +, -, @, tab or CR) is prefixed with '."""
    path = tmp_path / "run.jsonl"
    counts = {"tp": 1, "tn": 0, "fp": 0, "fn": 0}
    names = ['=HYPERLINK("http://evil")\x1b]0;PWN\x07', "+1", "-2", "@SUM(A1)", "\tx", "\rx", "plain"]
    path.write_bytes(row("c1", [judge("j", dict.fromkeys(names, counts))]))
    result = invoke("metrics", str(path), "-f", "csv", "--no-intervals")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "field,tp,tn,fp,fn,precision,recall,f1,support\n"
        '"\'=HYPERLINK(""http://evil"")\\x1b]0;PWN\\x07",1,0,0,0,1.000000,1.000000,1.000000,1\n'
        "'+1,1,0,0,0,1.000000,1.000000,1.000000,1\n"
        "'-2,1,0,0,0,1.000000,1.000000,1.000000,1\n"
        "'@SUM(A1),1,0,0,0,1.000000,1.000000,1.000000,1\n"
        "\\tx,1,0,0,0,1.000000,1.000000,1.000000,1\n"
        "\\rx,1,0,0,0,1.000000,1.000000,1.000000,1\n"
        "plain,1,0,0,0,1.000000,1.000000,1.000000,1\n"
        "__total__,7,0,0,0,1.000000,1.000000,1.000000,7\n"
        "__macro__,,,,,,,1.000000,\n"
    )


def test_csv_cells_that_start_like_a_formula_are_prefixed():
    from agentv_py.report.metrics import csv_cell

    assert [csv_cell(v) for v in ["=1+1", "+1", "-1", "@x", "\tx", "\rx", "a=b", "", 0, 3]] == [
        "'=1+1",
        "'+1",
        "'-1",
        "'@x",
        "\\tx",  # a tab or CR is shown as its escape, which no spreadsheet reads as a formula
        "\\rx",
        "a=b",
        "",
        "0",
        "3",
    ]
