"""`agentv metrics` intervals: every rate with its 95% interval in the table, CSV and JSON (the
same numbers), the method, seed and resamples recorded, `--confidence` and `--seed`, bad levels."""

from __future__ import annotations

import csv
import io
import json

import pytest

from agentv_py.report.metric_intervals import metric_intervals
from agentv_py.report.metrics import aggregate
from tests.cli.test_eval import invoke
from tests.cli.test_metrics import worked_example_file


def test_every_rate_has_its_interval_in_table_csv_and_json(tmp_path):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    expected = metric_intervals(aggregate(path, documents=True))
    gross = expected.fields["gross_total"]
    table = invoke("metrics", path)
    assert table.exit_code == 0, table.output
    body = [" ".join(line.replace("│", " ").split()) for line in table.stdout.splitlines() if "gross_total" in line]
    f1 = gross["f1"]
    assert f1 is not None and f"0.67 [{f1.low:.2f}, {f1.high:.2f}]" in body[0]
    assert "95% intervals [low, high] over 5 documents" in table.stdout and "seed 20260227" in table.stdout
    rows = {r["field"]: r for r in csv.DictReader(io.StringIO(invoke("metrics", path, "-f", "csv").stdout))}
    data = json.loads(invoke("metrics", path, "-f", "json").stdout)["intervals"]
    assert float(rows["gross_total"]["f1_low"]) == pytest.approx(f1.low, abs=1e-6)
    assert data["fields"]["gross_total"]["f1"] == {"low": f1.low, "high": f1.high, "method": "bootstrap"}
    assert data["fields"]["gross_total"]["precision"]["method"] == "wilson"  # one value per document
    assert data["seed"] == 20260227 and data["documents"] == 5 and data["level"] == 0.95
    assert data["method"] == "document bootstrap (BCa)"
    macro = expected.macro_f1
    assert macro is not None and rows["__macro__"]["f1_low"] == f"{macro.low:.6f}"


def test_confidence_and_seed_change_the_intervals(tmp_path):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    wide = json.loads(invoke("metrics", path, "-f", "json", "--confidence", "0.99").stdout)["intervals"]
    narrow = json.loads(invoke("metrics", path, "-f", "json", "--confidence", "0.5").stdout)["intervals"]
    assert wide["micro"]["f1"]["low"] < narrow["micro"]["f1"]["low"] and wide["level"] == 0.99
    other = json.loads(invoke("metrics", path, "-f", "json", "--seed", "7").stdout)["intervals"]
    assert other["seed"] == 7


@pytest.mark.parametrize("level", ["0", "1", "1.5", "-0.2", "nan"])
def test_a_confidence_outside_0_1_is_a_usage_error(tmp_path, level):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    result = invoke("metrics", path, "--confidence", level)
    assert result.exit_code == 2
    assert "is not between 0 and 1" in result.stderr


def test_the_rows_order_does_not_change_the_intervals(tmp_path):
    path = worked_example_file(tmp_path / "run.jsonl")
    reversed_path = tmp_path / "reversed.jsonl"
    reversed_path.write_text("".join(reversed(path.read_text().splitlines(keepends=True))))
    forward = json.loads(invoke("metrics", str(path), "-f", "json").stdout)["intervals"]
    backward = json.loads(invoke("metrics", str(reversed_path), "-f", "json").stdout)["intervals"]
    assert forward == backward


def test_eval_summary_markdown_and_junit_carry_the_pass_rate_and_mean_intervals(ws):
    import xml.etree.ElementTree as ET

    ws.cli_target("cat {FILES}")
    ws.cases_dataset([(f"c{i}", '{"a": 1}', {"a": 1 if i % 3 else 2}) for i in range(1, 7)])
    result = invoke(
        "eval", "dataset.yaml", "--out", "o.jsonl", "--junit", "j.xml", "--summary-md", "s.md", "--confidence", "0.9"
    )
    assert result.exit_code == 1, result.output
    from agentv_py.scoring.intervals import headline

    expected = headline(4, [1.0, 1.0, 0.0, 1.0, 1.0, 0.0], 0.9)
    assert expected is not None and expected.pass_rate_interval is not None and expected.mean_interval is not None
    assert f"pass rate {expected.pass_rate_interval.shown(4 / 6)}" in " ".join(result.stdout.split())
    assert "(90% intervals, 6 cases)" in (ws.root / "s.md").read_text()
    properties = {p.get("name"): p.get("value") for p in ET.parse(ws.root / "j.xml").getroot().iter("property")}
    assert properties["confidence_level"] == "0.9" and properties["pass_rate"] == f"{4 / 6:.6f}"
    assert float(properties["pass_rate_low"]) == pytest.approx(expected.pass_rate_interval.low, abs=1e-6)
    assert float(properties["mean_score_high"]) == pytest.approx(expected.mean_interval.high, abs=1e-6)


def test_eval_refuses_a_confidence_outside_0_1(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset([("c1", '{"a": 1}', {"a": 1})])
    result = invoke("eval", "dataset.yaml", "--confidence", "1")
    assert result.exit_code == 2 and "error: --confidence 1 is not between 0 and 1" in result.stderr


def test_the_html_report_shows_the_same_intervals_as_metrics(tmp_path):
    import re

    path = worked_example_file(tmp_path / "run.jsonl")
    result = invoke("report", str(path), "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text()
    fields = json.loads(invoke("metrics", str(path), "-f", "json").stdout)["intervals"]["fields"]
    f1 = fields["gross_total"]["f1"]
    row = re.search(r"<tr><td>gross_total</td>.*?</tr>", page)
    assert row is not None and f"0.67 [{f1['low']:.2f}, {f1['high']:.2f}]" in row.group(0)
    assert 'id="intervals">pass rate' in page and "(95% intervals, 5 cases)" in page


def test_junit_per_field_suites_carry_the_fields_match_rate_and_its_interval(ws):
    import xml.etree.ElementTree as ET

    from agentv_py.scoring.intervals import wilson

    ws.cli_target("cat {FILES}")
    ws.cases_dataset([(f"c{i}", {"a": 1 if i % 3 else 2}, {"a": 1}) for i in range(1, 7)], fields="[{path: a}]")
    invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--junit", "j.xml", "--junit-per-field")
    suites = {s.get("name"): s for s in ET.parse(ws.root / "j.xml").getroot().iter("testsuite")}
    field = next(s for name, s in suites.items() if name and name.endswith(".a"))
    properties = {p.get("name"): p.get("value") for p in field.iter("property")}
    expected = wilson(4, 6)
    assert expected is not None and properties["match_rate"] == f"{4 / 6:.6f}"
    assert float(properties["match_rate_low"]) == pytest.approx(expected.low, abs=1e-6)
