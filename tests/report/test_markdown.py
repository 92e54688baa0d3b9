"""The Markdown summary: totals, gate, worst fields, failed cases; values that cannot break it."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.markdown import FAILED_CASES, FieldTally, cell, summary_markdown, tally_fields
from agentv_py.report.summary import RunSummary, gate


def fa(fields: list[tuple[str, str]]) -> EvaluatorResult:
    return EvaluatorResult(
        name="fields",
        type="field_accuracy",
        status="processed",
        score=1.0,
        passed=True,
        verdict="pass",
        details={"fields": [{"path": p, "status": s, "expected": 1, "actual": 2} for p, s in fields]},
    )


def row(eval_id: str, verdict: str = "pass", **kw: Any) -> ResultRow:
    data: dict[str, Any] = {
        "timestamp": "2026-01-02T03:04:05Z",
        "eval_id": eval_id,
        "dataset": "invoices",
        "target": "t",
        "status": "ok",
        "score": 1.0 if verdict == "pass" else 0.0,
        "verdict": verdict,
    }
    data.update(kw)
    return ResultRow.model_validate(data)


def summarize(rows: list[ResultRow]) -> RunSummary:
    summary = RunSummary(total_selected=len(rows))
    for position, each in enumerate(rows):
        summary.add(each, position)
    summary.results_path = "out.jsonl"
    return summary


def test_a_run_with_misses_and_an_error():
    rows = [
        row("c1", evaluator_results=[fa([("total", "hit"), ("date", "hit")])]),
        row(
            "c2",
            "fail",
            misses=["total (expected 1, got 2)", "date (bad)", "a", "b"],
            evaluator_results=[fa([("total", "miss"), ("date", "miss")])],
        ),
        row("c3", "fail", misses=["total (expected 1, got 2)"], evaluator_results=[fa([("total", "miss")])]),
        row("c4", "fail", status="error", error="target exited with code 2"),
    ]
    summary = summarize(rows)
    text = summary_markdown(summary, gate(summary, None), tally_fields(rows), dataset="invoices", target="t")
    assert text == "\n".join(
        [
            "## agentv: invoices against t",
            "",
            "**⚠️ errors** (every case passed): 1 case had a target error (the target call failed)",
            "",
            "| cases | passed | partial | failed | target errors | evaluator errors | mean score |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            "| 4 | 1 | 0 | 2 | 1 | 0 | 0.250 |",
            "",
            "pass rate 0.25 \\[0.05, 0.70\\], mean score 0.25 \\[0.00, 0.75\\] (95% intervals, 4 cases)",
            "",
            "| evaluator | mean score |",
            "|---|---:|",
            "| fields | 1.000 |",
            "",
            "### Worst fields (2 of 2 with misses)",
            "",
            "| field | misses | of scored | miss rate [95%] | could not score |",
            "|---|---:|---:|---:|---:|",
            "| total | 2 | 3 | 0.67 \\[0.21, 0.94\\] | 0 |",
            "| date | 1 | 2 | 0.50 \\[0.09, 0.91\\] | 0 |",
            "",
            "### Cases that did not pass (3 of 3 shown)",
            "",
            "| case | score | verdict | misses |",
            "|---|---:|---|---|",
            "| c2 | 0.000 | fail | total (expected 1, got 2)<br>date (bad)<br>a<br>(+1 more) |",
            "| c3 | 0.000 | fail | total (expected 1, got 2) |",
            "| c4 | 0.000 | error | error: target exited with code 2 |",
            "",
            "Results: out.jsonl",
            "",
        ]
    )


def test_a_passing_run_without_field_details():
    rows = [row("a"), row("b")]
    summary = summarize(rows)
    text = summary_markdown(summary, gate(summary, 0.5), None, dataset="d")
    assert text.splitlines()[:3] == ["## agentv: d", "", "**✅ gate passed** (mean score >= 0.5)"]
    assert "Worst fields" not in text and "did not pass" not in text


def test_every_field_matched_is_said():
    rows = [row("a", evaluator_results=[fa([("total", "hit")])])]
    summary = summarize(rows)
    assert "Every scored field matched." in summary_markdown(
        summary, gate(summary, None), tally_fields(rows), dataset="d"
    )


def test_failed_cases_and_fields_are_bounded():
    rows = [row(f"c{i:03}", "fail", misses=["m"], evaluator_results=[fa([(f"f{i:02}", "miss")])]) for i in range(30)]
    summary = summarize(rows)
    text = summary_markdown(summary, gate(summary, None), tally_fields(rows), dataset="d")
    assert f"### Cases that did not pass ({FAILED_CASES} of 30 shown)" in text
    assert "| c019 |" in text and "| c020 |" not in text
    assert "### Worst fields (10 of 30 with misses)" in text
    assert "| f09 |" in text and "| f10 |" not in text


def test_tally_counts_errors_apart_from_scored():
    broken = {"path": "total", "status": "could not score", "reason": "bad expected"}
    result = EvaluatorResult(
        name="f", type="field_accuracy", status="processed", score=1.0, passed=True, verdict="pass",
        details={"fields": [broken, {"path": "date", "status": "not scored"}]},
    )  # fmt: skip
    assert tally_fields([row("a", evaluator_results=[result])]) == {
        "total": FieldTally(scored=0, misses=0, errors=1),
        "date": FieldTally(scored=0, misses=0, errors=0),
    }


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param("plain id", "plain id", id="plain"),
        pytest.param("a|b", r"a\|b", id="pipe"),
        pytest.param("`code`", r"\`code\`", id="backticks"),
        pytest.param("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;", id="script-tag"),
        pytest.param("]]>", r"\]\]&gt;", id="cdata-end"),
        pytest.param("&amp;", "&amp;amp;", id="entity"),
        pytest.param("one\ntwo\r\nthree", "one↵two↵three", id="newlines"),
        pytest.param("bell\x07esc\x1b[31m", "bell\ufffdesc\ufffd\\[31m", id="control-characters"),
        pytest.param("ab\u202edc\u2066x\u200f", "ab\ufffddc\ufffdx\ufffd", id="bidi-controls"),
        pytest.param("[link](http://x)", r"\[link\](http://x)", id="link"),
        pytest.param("*bold* _em_ ~del~", r"\*bold\* \_em\_ \~del\~", id="emphasis"),
        pytest.param("back\\slash", r"back\\slash", id="backslash"),
        pytest.param("x" * 300, "x" * 199 + "…", id="long"),
    ],
)
def test_cell_escapes_values(value: str, shown: str):
    assert cell(value) == shown


def test_hostile_ids_and_misses_cannot_break_the_table():
    hostile = "x|y\n| injected | row |<img src=x onerror=alert(1)>`"
    rows = [row(hostile, "fail", misses=[hostile], evaluator_results=[fa([(hostile, "miss")])])]
    summary = summarize(rows)
    text = summary_markdown(summary, gate(summary, None), tally_fields(rows), dataset=hostile, target=hostile)
    assert "<img" not in text and "| injected |" not in text
    failed = [line for line in text.splitlines() if line.startswith("| x")]
    # a table row keeps its columns: every `|` of the value is escaped
    assert [line.replace("\\|", "").count("|") for line in failed] == [
        6,
        5,
    ]  # the worst-fields row (5 columns), then the failed case (4)


def test_a_failed_case_shows_its_misses_with_the_values_of_their_details_entries():
    result = fa([("total", "miss")])
    result.details["fields"][0]["reason"] = "value mismatch"
    rows = [row("c1", "fail", misses=["total (value mismatch)"], evaluator_results=[result])]
    summary = summarize(rows)
    text = summary_markdown(summary, gate(summary, None), tally_fields(rows), dataset="invoices", target="t")
    assert "| c1 | 0.000 | fail | total (value mismatch; expected 1, got 2) |" in text
