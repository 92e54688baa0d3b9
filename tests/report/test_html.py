"""The HTML report without a browser: what is embedded, how values are kept short and inert, and
`agentv report`'s exit codes and messages (the browser test is test_html_browser.py)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import processed_result
from agentv_py.report.html import fields_svg, histogram_svg
from agentv_py.report.page_cases import VALUE_CHARS, cut
from agentv_py.scoring.metrics import Counts
from tests.conftest import make_row


def invoke(*args: str) -> Any:
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def write(path: Path, rows: list[Any], extra: bytes = b"") -> Path:
    path.write_bytes(b"".join(json.dumps(row.to_json_dict()).encode() + b"\n" for row in rows) + extra)
    return path


def embedded(page: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The case index and the unpacked case details of a report, as the page reads them."""
    index = re.search(r'<script type="application/json" id="agentv-index">(.*?)</script>', page, re.S)
    details = re.search(r'<script type="application/octet-stream" id="agentv-details">(.*?)</script>', page, re.S)
    assert index is not None and details is not None
    return json.loads(index.group(1)), json.loads(gzip.decompress(base64.b64decode(details.group(1))))


def fa_row(eval_id: str, actual: Any, dataset: str = "d", **fields: Any) -> Any:
    entry = {"path": "total", "match": "exact", "expected": 1, "actual": actual}
    entry["status"] = "hit" if actual == 1 else "miss"
    results = [
        processed_result(name="fa", type="field_accuracy", score=float(actual == 1), details={"fields": [entry]})
    ]
    verdict = "pass" if actual == 1 else "fail"
    return make_row(
        eval_id=eval_id, dataset=dataset, score=float(actual == 1), verdict=verdict, evaluator_results=results, **fields
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("short", "short"),
        ("x" * (VALUE_CHARS + 5), {"$cut": "x" * VALUE_CHARS, "$length": VALUE_CHARS + 5}),
        (2**60, str(2**60)),  # beyond what a browser's number holds exactly
        (float("nan"), "nan"),
        ([1] * 205, [1] * 200 + [{"$more": 5}]),
        ({"a": None, "b": True}, {"a": None, "b": True}),
    ],
    ids=["short-string", "long-string", "big-int", "nan", "long-list", "object"],
)
def test_cut(value, expected):
    assert cut(value) == expected


def test_charts_are_svg_with_escaped_labels():
    histogram = histogram_svg([0.0, 0.55, 1.0, 1.0])
    assert histogram.startswith("<svg") and histogram.count("<rect") == 10
    assert "<title>0.9-1.0: 2</title>" in histogram
    chart = fields_svg({"<b>total</b>": Counts(tp=3, fp=1, fn=1), "empty": Counts(tn=2)})
    assert "&lt;b&gt;total&lt;/b&gt;" in chart and "<b>" not in chart
    assert "F1 0.75" in chart and "F1 -" in chart


def test_report_of_a_resumed_run_with_bad_lines_and_several_datasets(tmp_path):
    rows = [fa_row("c1", 2), fa_row("c2", 1, dataset="other"), fa_row("c1", 1)]  # c1 resumed: its last row wins
    rows.append(make_row(eval_id="c3", status="error", score=0.0, verdict="fail", error="target exited with code 2"))
    results = write(tmp_path / "run.jsonl", rows, extra=b"not json\n")
    result = invoke("report", str(results))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{tmp_path / 'run.html'}\n"
    assert result.stderr.startswith("agentv: report of 3 cases, ")
    page = (tmp_path / "run.html").read_text()
    index, details = embedded(page)
    assert [row[0] for row in index["rows"]] == ["c1", "c2", "c3"]
    assert [row[2] for row in index["rows"]] == ["pass", "pass", "error"]
    assert index["datasets"] == ["d", "other"]
    assert [d["evaluators"][0]["fields"][0]["actual"] for d in details[:2]] == [1, 1]
    assert (details[2]["evaluators"], details[2]["error"]) == ([], "target exited with code 2")
    assert "rows of several datasets (d, other)" in page
    assert "1 line of the results file could not be read and is left out: line 5: not JSON" in page
    assert "No manifest beside the results file" in page
    # the totals count each case once, from its last row (c1's first, failing row is not counted)
    assert "passed<b>2</b>" in page and "failed<b>0</b>" in page and "errors<b>1</b>" in page
    assert "mean score<b>0.667</b>" in page and "Mean per evaluator: fa 1.000" in page
    assert '<td>total</td><td class="num">2</td><td class="num">0</td><td class="num">0</td>' in page


def test_long_and_hostile_values_are_cut_and_escaped(tmp_path):
    huge = "<script>alert(1)</script>" + "y" * 100_000
    row = fa_row("</script><script>alert(2)</script>", huge, candidate_answer=huge)
    write(tmp_path / "run.jsonl", [row])
    assert invoke("report", str(tmp_path / "run.jsonl"), "-o", str(tmp_path / "r.html")).exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert "<script>alert" not in page and "</script><script>" not in page
    index, details = embedded(page)
    assert index["rows"][0][0] == "</script><script>alert(2)</script>"
    actual = details[0]["evaluators"][0]["fields"][0]["actual"]
    assert actual["$length"] == len(huge) and actual["$cut"] == huge[:VALUE_CHARS]
    assert len(page) < 60_000  # the 100 kB value is embedded once, cut, and compressed
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None and "default-src 'none'" in policy.group(1) and "script-src 'sha256-" in policy.group(1)


def test_bad_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "run.jsonl", [fa_row("c1", 1)])
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "junk.jsonl").write_text("junk\n")
    cases = [
        (["report", "nope.jsonl"], 2, "error: results file not found: nope.jsonl"),
        (["report", "empty.jsonl"], 2, "error: no result rows in empty.jsonl"),
        (["report", "junk.jsonl"], 2, "error: no result rows in junk.jsonl (line 1: not JSON: "),
        (
            ["report", "run.jsonl", "-o", "run.jsonl"],
            2,
            "error: --out run.jsonl is the results file (run.jsonl): an output never replaces an input",
        ),
        (
            ["report", "run.jsonl", "-o", "no/such/dir/r.html"],
            5,
            "error: cannot write the HTML report no/such/dir/r.html: ",
        ),
    ]
    for args, code, message in cases:
        result = invoke(*args)
        assert result.exit_code == code, (args, result.output)
        assert result.stderr.startswith(message), (args, result.stderr)
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_eval_html_needs_a_results_file(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    result = invoke("eval", "dataset.yaml", "--out", "-", "--html", "r.html")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: --html needs the results in a file: it reads them back at the end of the run, not with --out -"
    )
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--html", "run.jsonl").exit_code == 2
    made = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--html", "out/report.html")
    assert made.exit_code == 0, made.output
    index, _ = embedded(Path("out/report.html").read_text())
    assert index["rows"][0][:3] == ["c1", 1.0, "pass"]


def test_an_evaluators_misses_carry_the_values_of_their_field_entries(tmp_path):
    miss = fa_row("c1", 2)
    result = miss.evaluator_results[0]
    result.details["fields"][0]["reason"] = "value mismatch"
    result.misses = ["total (value mismatch)"]
    write(tmp_path / "run.jsonl", [miss])
    assert invoke("report", str(tmp_path / "run.jsonl")).exit_code == 0
    _, details = embedded((tmp_path / "run.html").read_text())
    assert details[0]["evaluators"][0]["misses"] == ["total (value mismatch; expected 1, got 2)"]
