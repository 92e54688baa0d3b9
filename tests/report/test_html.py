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


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"verdict": "fail", "score": 0.0}, "fail"),
        ({"verdict": "fail", "score": 0.0, "xfail": "parser drops the sign"}, "xfail"),
        ({"verdict": "pass", "xfail": "parser drops the sign"}, "xpass"),
        ({"status": "error", "verdict": "fail", "score": 0.0, "xfail": "known"}, "xfail"),
    ],
    ids=["fail", "xfail", "xpass", "xfail-error"],
)
def test_an_xfail_case_reads_xfail_or_xpass_in_the_case_table(tmp_path, fields, shown):
    results = write(tmp_path / "run.jsonl", [make_row(**fields)])
    assert invoke("report", str(results)).exit_code == 0
    index, details = embedded((tmp_path / "run.html").read_text())
    assert index["rows"][0][2] == shown
    assert details[0]["verdict"] == fields["verdict"]  # the case's own verdict, when it is opened


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
            ["report", "run.jsonl", "-o", "run.jsonl/r.html"],  # a missing folder is made; a file is no folder
            5,
            "error: cannot write the HTML report run.jsonl/r.html: ",
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


# ----------------------------------------------------------------------------- the "show all" fold

HOSTILE_PATH = "<script>window.__pwned = 1</script>"
QUOTED = "say \"hi\" & 'bye' </script>"


def sub(path: str, expected: Any, actual: Any = "absent", status: str = "hit") -> dict[str, Any]:
    entry = {"path": path, "expected": expected, "status": status}
    return entry if actual == "absent" else {**entry, "actual": actual}


def items_field(pairs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    listed = [
        {"expected": i, "actual": i, "similarity": 1.0, "status": "hit", "fields": p} for i, p in enumerate(pairs)
    ]
    return {
        "path": "line_items",
        "match": "items",
        "expected": [{"description": "a"}] * len(pairs),
        "actual": [{"description": "a"}] * len(pairs),
        "status": "hit",
        "alignment": {"key": ["description"], "pairs": listed},
    }


@pytest.mark.parametrize(
    ("pairs", "shown", "folded"),
    [
        ([[sub("sku", None, None)], [sub("sku", None)]], [], ["sku"]),
        ([[sub("sku", None, None)], [sub("sku", None, "A-1", "not scored")]], ["sku"], []),
        ([[sub("qty", 2, 2)], [sub("sku", None, None)]], ["qty"], ["sku"]),  # absent from a pair: nothing there
        ([[sub("sku", None, None, "miss")]], ["sku"], []),  # a miss is never hidden
        ([[sub("b", None, None), sub("a", 1, 1)], [sub("c", 3, 3), sub("d", None, None)]], ["a", "c"], ["b", "d"]),
        ([[]], [], []),
    ],
    ids=[
        "null-or-absent-everywhere",
        "a-value-on-one-side",
        "absent-from-a-pair",
        "a-miss",
        "first-named-order",
        "none",
    ],
)
def test_item_columns(pairs, shown, folded):
    from agentv_py.models.field_results import read_field
    from agentv_py.report.page_cases import item_columns

    outcome = read_field(items_field(pairs))
    assert outcome is not None and outcome.alignment is not None
    assert item_columns(outcome.alignment) == (shown, folded)


def folding_row(eval_id: str = "c1") -> Any:
    """A case with 3 fields not scored (one with a hostile path and a quoted value), scored
    fields around them, and an items table with 2 columns null on both sides in every row."""
    fields = [
        {"path": "total", "expected": 1, "actual": 1, "status": "hit", "score": 1.0},
        {"path": "po_number", "status": "not scored", "reason": "no expected value", "actual": QUOTED},
        {"path": "date", "expected": "2024-01-02", "actual": "2024-02-01", "status": "miss", "score": 0.0},
        {"path": HOSTILE_PATH, "status": "not scored", "reason": "no expected value"},
        {"path": "currency", "expected": "EUR", "status": "could not score", "reason": "invalid expected value"},
        items_field(
            [
                [sub("qty", 2, 2), sub("sku", None, None), sub(HOSTILE_PATH, None)],
                [sub("qty", 1, 3, "miss"), sub("sku", None, None), sub("note", None, QUOTED, "not scored")],
            ]
        ),
        {"path": "notes", "expected": "x", "status": "not scored", "reason": "optional, missing"},
    ]
    results = [processed_result(name="fa", type="field_accuracy", score=0.5, details={"fields": fields})]
    return make_row(eval_id=eval_id, score=0.5, verdict="fail", evaluator_results=results)


def test_fields_not_scored_and_null_item_columns_are_folded(tmp_path):
    row = folding_row()
    nested = folding_row().evaluator_results[0].model_copy(update={"name": "member"})
    row.evaluator_results.append(
        processed_result(name="all", type="composite", score=0.5).model_copy(update={"evaluator_results": [nested]})
    )
    write(tmp_path / "run.jsonl", [row])
    assert invoke("report", str(tmp_path / "run.jsonl")).exit_code == 0
    page = (tmp_path / "run.html").read_text()
    assert "<script>window" not in page and 'say "hi"' not in page  # escaped in the index, packed in the details
    _, details = embedded(page)
    every = [f["path"] for f in row.evaluator_results[0].details["fields"]]
    for evaluator in (details[0]["evaluators"][0], details[0]["evaluators"][1]["children"][0]):
        shown = [f["path"] for f in evaluator["fields"]]
        folded = [f["path"] for f in evaluator["folded_fields"]]
        assert shown == ["total", "date", "currency", "line_items"]  # "could not score" stays in view
        assert folded == ["po_number", HOSTILE_PATH, "notes"]  # the dataset's order, values kept
        assert sorted(shown + folded) == sorted(every)  # nothing lost
        assert evaluator["folded_fields"][0]["actual"] == QUOTED
        items = evaluator["fields"][3]
        assert (items["columns"], items["folded_columns"]) == (["qty", "note"], ["sku", HOSTILE_PATH])
        assert [len(p["fields"]) for p in items["alignment"]["pairs"]] == [3, 3]  # every cell kept


def test_a_case_with_nothing_to_fold_folds_nothing(tmp_path):
    write(tmp_path / "run.jsonl", [fa_row("c1", 2)])
    assert invoke("report", str(tmp_path / "run.jsonl")).exit_code == 0
    _, details = embedded((tmp_path / "run.html").read_text())
    evaluator = details[0]["evaluators"][0]
    assert [f["path"] for f in evaluator["fields"]] == ["total"] and evaluator["folded_fields"] == []
