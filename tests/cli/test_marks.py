"""`skip:` and `xfail:` on a case, `--exclude GLOB` and `--strict-xfail`, with pytest's meaning
(issue 27, point 8): skipped cases do not run; an xfail case that fails does not fail the gate,
one that passes is an XPASS (a gate failure with --strict-xfail); shown in the summary, JUnit,
Markdown and HTML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.cli.test_eval import invoke


def marked_project(ws, marks: dict[str, str]) -> None:
    """Five cases answering {a: 1}; `right` expects that, `wrong*` expect {a: 2}; `marks` adds lines to a case."""
    ws.cli_target("cat {FILES}")
    cases = {"right": 1, "wrong": 2, "wrong-known": 2, "ocr": 2, "flaky": 1}
    lines = ["execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}", "evalcases:"]
    for case_id, expected in cases.items():
        ws.file(f"fx/{case_id}.json", '{"a": 1}')
        lines.append(
            f"  - id: {case_id}\n"
            f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}]}}]\n"
            f"    expected_output: {{a: {expected}}}" + (f"\n    {marks[case_id]}" if case_id in marks else "")
        )
    ws.file("dataset.yaml", "\n".join(lines) + "\n")


MARKS = {"wrong": "xfail: parser drops the sign", "ocr": "skip: needs OCR", "flaky": "xfail: true"}


def rows(ws) -> dict[str, dict]:
    return {row["eval_id"]: row for row in map(json.loads, (ws.root / "o.jsonl").read_text().splitlines())}


def test_skip_and_xfail_keep_the_gate_and_say_so(ws):
    marked_project(ws, {**MARKS, "wrong-known": "xfail: stale"})
    result = invoke(
        "eval", "dataset.yaml", "--out", "o.jsonl", "--junit", "j.xml", "--summary-md", "s.md", "--html", "r.html"
    )
    assert result.exit_code == 0, result.output
    assert "4 cases of 'dataset' against target 't'" in result.stderr
    assert "1 skipped case not run" in result.stderr
    out = result.stdout
    assert "2 xfailed" in out and "1 xpassed" in out and "1 skipped" in out
    assert "  XPASS flaky: xfail: true" in out
    assert "  XFAIL wrong: parser drops the sign" in out
    assert "  SKIPPED ocr: needs OCR" in out
    got = rows(ws)
    assert sorted(got) == ["flaky", "right", "wrong", "wrong-known"]  # the skipped case has no row
    assert (got["wrong"]["xfail"], got["flaky"]["xfail"]) == ("parser drops the sign", "xfail: true")
    assert "xfail" not in got["right"]
    manifest = json.loads((ws.root / "o.jsonl.meta.json").read_text())
    assert manifest["skipped"] == {"ocr": "needs OCR"}
    suite = ET.parse(ws.root / "j.xml").getroot()[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "0", "3")
    skips = {
        case.get("name"): case.find("skipped").get("message") for case in suite if case.find("skipped") is not None
    }
    assert skips == {
        "wrong": "XFAIL: parser drops the sign (score 0.000, fail)",
        "wrong-known": "XFAIL: stale (score 0.000, fail)",
        "ocr": "SKIPPED: needs OCR",
    }
    markdown = (ws.root / "s.md").read_text()
    assert "| flaky | XPASS | xfail: true |" in markdown and "| ocr | SKIPPED | needs OCR |" in markdown
    html = (ws.root / "r.html").read_text()
    assert 'id="marked-table"' in html and "needs OCR" in html and "parser drops the sign" in html


def test_strict_xfail_fails_the_gate_on_an_xpass(ws):
    marked_project(ws, MARKS)
    result = invoke(
        "eval", "dataset.yaml", "--out", "o.jsonl", "--strict-xfail", "--eval-id", "flaky", "--junit", "j.xml"
    )
    assert result.exit_code == 1, result.output
    assert "gate failed: 1 xfail case passed (XPASS: flaky) with --strict-xfail" in result.output
    failure = ET.parse(ws.root / "j.xml").getroot()[0].find("testcase/failure")
    assert failure is not None and failure.get("message") == "XPASS(strict): xfail: true"


def test_an_unmarked_failure_still_fails_the_gate(ws):
    marked_project(ws, MARKS)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 1  # `wrong-known` is not marked
    assert "gate failed: 1 of 2 cases did not pass" in result.output


def test_exclude_leaves_cases_out(ws):
    marked_project(ws, MARKS)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--exclude", "wrong*")
    assert result.exit_code == 0, result.output
    assert sorted(rows(ws)) == ["flaky", "right"]
    assert "1 skipped case, 2 excluded cases not run" in result.stderr
    assert "2 cases left out by --exclude" in result.stdout


def test_exclude_matching_nothing_is_a_usage_error(ws):
    marked_project(ws, MARKS)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--exclude", "invoice-*")
    assert result.exit_code == 2
    assert "error: --exclude 'invoice-*' matches no case" in result.stderr
    assert "ids here: right, wrong, wrong-known, ocr, flaky" in result.stderr
    assert not (ws.root / "o.jsonl").exists()


@pytest.mark.parametrize(
    "marks, problem",
    [
        (
            "skip: x\n    xfail: y",
            "dataset.yaml:10: evalcases[0].xfail: a case is either skipped (skip: does not run) or expected to fail "
            "(xfail: runs, may fail), not both",
        ),
        (
            "skip: ''",
            "dataset.yaml:9: evalcases[0].skip: skip is true, or the reason (a non-empty string), not an empty string",
        ),
        (
            "xfail: 3",
            "dataset.yaml:9: evalcases[0].xfail: xfail is true, or the reason (a non-empty string), not int 3",
        ),
    ],
    ids=["both", "empty-reason", "not-a-reason"],
)
def test_bad_marks_are_load_errors(ws, marks, problem):
    marked_project(ws, {"right": marks})
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert problem in result.output, result.output
