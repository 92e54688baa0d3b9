"""Case `metadata:` and `agentv metrics --by KEY` (docs/metrics.md#slices): every number broken
down by a metadata value; a metadata value that is not one value is a located load error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_eval import invoke, rows

DATASET = """
execution:
  target: t
  evaluators: [{type: field_accuracy, fields: [{path: a}, {path: b}]}]
evalcases:
"""


def _case(case_id: str, answer: dict, truth: dict, metadata: str | None) -> str:
    meta = f"    metadata: {metadata}\n" if metadata is not None else ""
    return (
        f"  - id: {case_id}\n{meta}"
        f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}]}}]\n"
        f"    expected_messages: [{{role: assistant, content: {json.dumps(truth)}}}]\n"
    )


@pytest.fixture
def sliced(ws):
    ws.cli_target("cat {FILES}")
    cases = [
        ("r1", {"a": 1, "b": 2}, {"a": 1, "b": 2}, "{doc_type: receipt, vendor: acme}"),
        ("r2", {"a": 1, "b": 0}, {"a": 1, "b": 2}, "{doc_type: receipt}"),
        ("i1", {"a": 9, "b": 2}, {"a": 1, "b": 2}, "{doc_type: invoice, pages: 2}"),
        ("x1", {"a": 1, "b": 2}, {"a": 1, "b": 2}, None),
    ]
    text = DATASET
    for case_id, answer, truth, metadata in cases:
        ws.file(f"fx/{case_id}.json", json.dumps(answer))
        text += _case(case_id, answer, truth, metadata)
    ws.file("dataset.yaml", text)
    return ws


def test_rows_carry_their_cases_metadata_and_metrics_break_down_by_a_key(sliced):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    written = {row["eval_id"]: row.get("metadata") for row in rows("out.jsonl")}
    assert written == {
        "r1": {"doc_type": "receipt", "vendor": "acme"},
        "r2": {"doc_type": "receipt"},
        "i1": {"doc_type": "invoice", "pages": 2},
        "x1": None,
    }
    result = invoke("metrics", "out.jsonl", "--by", "doc_type", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["by"] == "doc_type" and list(data["slices"]) == ["invoice", "receipt", "(none)"]
    receipt = data["slices"]["receipt"]
    assert receipt["rows"] == 2 and receipt["fields"]["b"]["tp"] == 1 and receipt["fields"]["b"]["fp"] == 1
    assert data["slices"]["invoice"]["fields"]["a"]["f1"] == 0.0
    assert "intervals" in receipt
    by_pages = json.loads(invoke("metrics", "out.jsonl", "--by", "pages", "-f", "json").stdout)
    assert list(by_pages["slices"]) == ["2", "(none)"]  # a number's slice named as JSON writes it
    table = invoke("metrics", "out.jsonl", "--by", "doc_type")
    assert "Extraction metrics: out.jsonl [doc_type = receipt]" in table.stdout


def test_a_key_no_case_has_is_said_and_csv_is_refused(sliced):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    result = invoke("metrics", "out.jsonl", "--by", "color", "-f", "json")
    assert result.exit_code == 0
    assert "warning: no case of out.jsonl has the metadata key 'color'" in result.stderr
    assert list(json.loads(result.stdout)["slices"]) == ["(none)"]
    csv = invoke("metrics", "out.jsonl", "--by", "doc_type", "-f", "csv")
    assert csv.exit_code == 2 and csv.stderr.splitlines()[0] == "error: --by goes with --format table or json"


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ("{tags: [a, b]}", "metadata value of 'tags' is a list: each is one text, number, true/false or null"),
        ("{x: {y: 1}}", "metadata value of 'x' is a mapping: each is one text, number, true/false or null"),
        ("[a, b]", "metadata is a mapping of keys to values, e.g. {doc_type: receipt}, not list"),
    ],
    ids=["list-value", "mapping-value", "not-a-mapping"],
)
def test_metadata_that_is_not_one_value_a_key_is_a_located_load_error(ws, metadata, message):
    ws.file("fx/c1.json", "{}")
    ws.file("dataset.yaml", DATASET + _case("c1", {"a": 1}, {"a": 1}, metadata))
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"dataset.yaml:7: evalcases[0].metadata: {message}" + (
        "" if "not list" in message else " (a slice of the dataset is one value)"
    )


def test_a_row_whose_metadata_is_not_scalars_is_a_skipped_line(sliced):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    lines = Path("out.jsonl").read_text().splitlines()
    hostile = json.loads(lines[0])
    hostile["metadata"] = {"doc_type": ["a", "b"]}
    Path("out.jsonl").write_text("\n".join([json.dumps(hostile), *lines[1:]]) + "\n")
    result = invoke("metrics", "out.jsonl", "--by", "doc_type", "-f", "json")
    assert result.exit_code == 0 and "out.jsonl:1: skipped:" in result.stderr
    assert json.loads(result.stdout)["rows"] == 3


def _second_run(ws, answers: dict[str, dict]) -> None:
    """The same dataset answered differently (a NEW run): rewrite the target's files."""
    for case_id, answer in answers.items():
        ws.file(f"fx/{case_id}.json", json.dumps(answer))


def test_compare_by_a_key_compares_and_gates_each_slice(sliced):
    invoke("eval", "dataset.yaml", "--out", "base.jsonl")
    # NEW: the receipt r1 loses b (a receipt regression), the invoice i1 gets a right
    _second_run(sliced, {"r1": {"a": 1, "b": 0}, "i1": {"a": 1, "b": 2}})
    invoke("eval", "dataset.yaml", "--out", "new.jsonl")
    result = invoke("compare", "base.jsonl", "new.jsonl", "--by", "doc_type", "-f", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["by"] == "doc_type" and list(data["slices"]) == ["invoice", "receipt", "(none)"]
    assert data["whole"]["paired_cases"] == 4
    receipt, invoice = data["slices"]["receipt"], data["slices"]["invoice"]
    assert receipt["paired_cases"] == 2 and receipt["fields"]["b"]["f1_delta"] < 0
    assert invoice["fields"]["a"]["f1_delta"] > 0
    assert "regression: [doc_type = receipt] " in result.stderr
    assert "[doc_type = invoice]" not in result.stderr
    table = invoke("compare", "base.jsonl", "new.jsonl", "--by", "doc_type")
    assert "── doc_type = receipt ──" in table.stdout and "── (none)" not in table.stdout
    assert "── doc_type = (none) ──" in table.stdout
    markdown = invoke("compare", "base.jsonl", "new.jsonl", "--by", "doc_type", "-f", "md")
    assert "### doc_type = invoice" in markdown.stdout


def test_compare_by_a_slice_in_one_run_only_says_so(sliced):
    invoke("eval", "dataset.yaml", "--out", "base.jsonl")
    lines = Path("base.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["eval_id"] != "i1"]  # NEW has no invoice
    Path("new.jsonl").write_text("\n".join(kept) + "\n")
    result = invoke("compare", "base.jsonl", "new.jsonl", "--by", "doc_type", "-f", "json")
    assert json.loads(result.stdout)["slices"]["invoice"] == {"only_in": "base"}
    table = invoke("compare", "base.jsonl", "new.jsonl", "--by", "doc_type")
    assert "── doc_type = invoice ──\nonly in BASE: nothing to compare" in table.stdout


def test_the_report_has_every_number_by_a_key(sliced):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    result = invoke("report", "out.jsonl", "--out", "report.html", "--by", "doc_type")
    assert result.exit_code == 0, result.output
    page = Path("report.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="slices">') : page.index("</section>", page.index('<section id="slices">'))]
    assert "<h2>By doc_type</h2>" in section
    # receipt: r1 passes (a and b right), r2 has b wrong; the (none) case x1 is right
    assert '<tr><td>receipt</td><td class="num">2</td>' in section
    assert section.index("<td>invoice</td>") < section.index("<td>receipt</td>") < section.index("<td>(none)</td>")
    assert "F1 of each field by doc_type" in section
    plain = invoke("report", "out.jsonl", "--out", "plain.html")
    assert plain.exit_code == 0 and 'id="slices"' not in Path("plain.html").read_text(encoding="utf-8")
