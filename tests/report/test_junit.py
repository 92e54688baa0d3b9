"""JUnit XML from rows: structure, counts, per-field suites, hostile values, schema validity."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.junit import field_outcomes, write_junit, xml_text

SCHEMA = xmlschema.XMLSchema(Path(__file__).parents[1] / "fixtures" / "junit.xsd")


def field(path: str, status: str, expected: Any = None, actual: Any = None, reason: str | None = None) -> dict:
    entry: dict[str, Any] = {"path": path, "match": "exact", "expected": expected, "actual": actual, "status": status}
    if reason is not None:
        entry["reason"] = reason
    return entry


def fa(fields: list[dict], status: str = "processed", name: str = "fields") -> EvaluatorResult:
    return EvaluatorResult(
        name=name,
        type="field_accuracy",
        status=status,  # type: ignore[arg-type]
        score=None if status == "error" else 1.0,
        passed=status != "error",
        verdict=None if status == "error" else "pass",
        reasoning="judge crashed" if status == "error" else "",
        details={"fields": fields},
    )


def row(eval_id: str, verdict: str = "pass", **kw: Any) -> ResultRow:
    data: dict[str, Any] = {
        "timestamp": "2026-01-02T03:04:05.678Z",
        "eval_id": eval_id,
        "dataset": "invoices",
        "target": "t",
        "status": "ok",
        "score": 1.0 if verdict == "pass" else 0.5,
        "verdict": verdict,
        "duration_ms": 1500.0,
    }
    data.update(kw)
    return ResultRow.model_validate(data)


def junit(rows: list[ResultRow], per_field: bool = False, dataset: str = "invoices") -> str:
    out = io.StringIO()
    write_junit(out, lambda: iter(rows), dataset=dataset, per_field=per_field)
    text = out.getvalue()
    SCHEMA.validate(text)  # every output of these tests is valid against the common schema
    return text


RUN = [
    row("c1", evaluator_results=[fa([field("total", "hit", 10, 10), field("date", "hit", "d", "d")])]),
    row(
        "c2",
        "fail",
        score=0.5,
        misses=["total (expected 10, got 11)"],
        evaluator_results=[fa([field("total", "miss", 10, 11, "not equal"), field("date", "hit", "d", "d")])],
    ),
    row("c3", "fail", status="error", score=0.0, error="target exited with code 2"),
    row("c4", "partial", evaluator_results=[fa([], status="error")]),
    row(
        "c5",
        evaluator_results=[fa([field("total", "hit", 1, 1), field("date", "not scored", reason="no expected value")])],
    ),
]


def test_one_suite_with_one_testcase_per_case():
    root = ET.fromstring(junit(RUN))
    (suite,) = root.findall("testsuite")
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped", "time", "timestamp")} == {
        "name": "invoices",
        "tests": "5",
        "failures": "1",
        "errors": "2",
        "skipped": "0",
        "time": "7.500",
        "timestamp": "2026-01-02T03:04:05",
    }
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name"), c.get("time")) for c in cases] == [
        ("invoices", f"c{i}", "1.500") for i in range(1, 6)
    ]
    assert [child.tag for c in cases for child in c] == ["failure", "error", "error"]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "score 0.500 (fail): total (expected 10, got 11)"
    assert failure.text == "total (expected 10, got 11)\n\nexpected vs got:\ntotal: expected 10, got 11 (not equal)"
    error = cases[2].find("error")
    assert error is not None
    assert (error.get("type"), error.get("message"), error.text) == (
        "target_error",
        "target exited with code 2",
        "target exited with code 2",
    )
    evaluator_error = cases[3].find("error")
    assert evaluator_error is not None
    assert (evaluator_error.get("type"), evaluator_error.get("message")) == ("evaluator_error", "fields: judge crashed")


def test_per_field_adds_a_suite_per_field_path():
    root = ET.fromstring(junit(RUN, per_field=True))
    suites = root.findall("testsuite")
    assert [
        (s.get("name"), s.get("id"), s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped"))
        for s in suites
    ] == [
        ("invoices", "0", "5", "1", "2", "0"),
        ("invoices.total", "1", "5", "1", "1", "1"),
        ("invoices.date", "2", "5", "0", "1", "2"),
    ]
    total = suites[1].findall("testcase")
    assert [(c.get("classname"), c.get("name"), [child.tag for child in c]) for c in total] == [
        ("invoices.total", "c1", []),
        ("invoices.total", "c2", ["failure"]),
        ("invoices.total", "c3", ["error"]),
        ("invoices.total", "c4", ["skipped"]),
        ("invoices.total", "c5", []),
    ]
    miss = total[1].find("failure")
    assert miss is not None
    assert (miss.get("type"), miss.get("message")) == ("field_miss", "expected 10, got 11 (not equal)")
    skipped = suites[2].findall("testcase")[4].find("skipped")
    assert skipped is not None and skipped.get("message") == "no expected value"


def test_without_field_accuracy_per_field_adds_nothing():
    root = ET.fromstring(junit([row("a"), row("b", "fail", misses=["judge: too short"])], per_field=True))
    assert [s.get("name") for s in root.findall("testsuite")] == ["invoices"]


def test_no_rows_is_an_empty_valid_suite():
    root = ET.fromstring(junit([]))
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("time"), suite.findall("testcase")) == ("0", "0.000", [])


def test_a_field_in_a_composite_counts_and_two_evaluators_keep_the_worst():
    composite = EvaluatorResult(
        name="all",
        type="composite",
        status="processed",
        score=0.5,
        passed=False,
        verdict="fail",
        evaluator_results=[fa([field("total", "miss", 1, 2)], name="strict")],
    )
    outcomes = field_outcomes(row("x", evaluator_results=[fa([field("total", "hit", 1, 1)]), composite]))
    assert {path: (o.status, o.message) for path, o in outcomes.items()} == {"total": ("miss", "expected 1, got 2")}


HOSTILE = [
    pytest.param("]]>", id="cdata-end"),
    pytest.param("<script>alert(1)</script>", id="script-tag"),
    pytest.param("a\"b'c&d", id="quotes-and-ampersand"),
    pytest.param("bell\x07esc\x1bnul\x00", id="control-characters"),
    pytest.param("lone\ud800surrogate", id="lone-surrogate"),
    pytest.param("line\nbreak\ttab\rcr", id="whitespace"),
    pytest.param("a|b", id="pipe"),
    pytest.param("\ufffe\uffff", id="non-characters"),
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_stay_data(value: str):
    hostile = row(
        value,
        "fail",
        dataset=value,
        misses=[value],
        evaluator_results=[fa([field(value, "miss", value, value, value)])],
    )
    broken = row("e" + value, "fail", status="error", error=value)
    text = junit([hostile, broken], per_field=True, dataset=value)
    root = ET.fromstring(text)
    kept = xml_text(value)
    text_kept = kept.replace("\r", "\n")  # a parser reads a line end in element text as a newline
    suites = root.findall("testsuite")
    assert len(suites) == 2
    case = suites[0].findall("testcase")[0]
    assert case.get("name") == kept
    failure = case.find("failure")
    assert failure is not None and failure.text is not None and text_kept in failure.text
    error = suites[0].findall("testcase")[1].find("error")
    assert error is not None and (error.text or "") == text_kept
    assert "<script>" not in text


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        pytest.param("ok", "ok", id="plain"),
        pytest.param("a\x00b\x1fc\x7f", "abc\x7f", id="c0-dropped-del-kept"),
        pytest.param("t\tn\nr\r", "t\tn\nr\r", id="whitespace-kept"),
        pytest.param("x\ud800y\udfffz", "xyz", id="surrogates-dropped"),
        pytest.param("\U0001f600", "\U0001f600", id="astral-kept"),
        pytest.param("\ufffe\uffff\ufffd", "\ufffd", id="non-characters-dropped"),
    ],
)
def test_xml_text(value: str, kept: str):
    assert xml_text(value) == kept


def test_long_values_are_shortened_in_messages():
    outcomes = field_outcomes(row("x", evaluator_results=[fa([field("notes", "miss", "a" * 500, "b")])]))
    message = outcomes["notes"].message
    assert message == 'expected "' + "a" * 198 + '…, got "b"'


def test_the_schema_rejects_what_ci_systems_reject():
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        SCHEMA.validate('<testsuites><testsuite name="x"><testcase name="a"/></testsuite></testsuites>')


def test_a_junit_consumer_reads_what_is_written(tmp_path):
    """junitparser (the parser behind many CI plugins and scripts) reads the per-field report back:
    the suites, their counts, and each testcase's outcome with its message."""
    from junitparser import Error, Failure, JUnitXml, Skipped

    path = tmp_path / "junit.xml"
    path.write_text(junit(RUN, per_field=True), encoding="utf-8")
    report = JUnitXml.fromfile(str(path))
    suites = {suite.name: suite for suite in report}
    assert [(name, s.tests, s.failures, s.errors, s.skipped) for name, s in suites.items()] == [
        ("invoices", 5, 1, 2, 0),
        ("invoices.total", 5, 1, 1, 1),
        ("invoices.date", 5, 0, 1, 2),
    ]
    outcomes = {
        case.name: [(type(result).__name__, result.message) for result in case.result]
        for case in suites["invoices.total"]
    }
    assert outcomes["c1"] == [] and outcomes["c5"] == []
    assert outcomes["c2"] == [("Failure", "expected 10, got 11 (not equal)")]
    assert outcomes["c4"] == [("Skipped", "not scored for this case")]
    assert isinstance(next(iter(suites["invoices"])).result, list)
    kinds = {type(r) for case in suites["invoices"] for r in case.result}
    assert kinds == {Failure, Error} and Skipped not in kinds
    assert all(case.time == 1.5 for case in suites["invoices"])


def test_a_field_miss_is_shown_with_the_values_of_its_details_entry():
    """The row holds SPEC's bare text (`total (null value)`); JUnit adds the values from details."""
    fields = [field("total", "miss", 12.5, None, "null value"), field("number", "miss", "INV-1", reason="x")]
    del fields[1]["actual"]  # the answer had nothing at this path
    fields[1]["reason"] = "required, missing"
    misses = ["total (null value)", "number (required, missing)"]
    text = junit([row("c1", "fail", misses=misses, evaluator_results=[fa(fields)])])
    failure = ET.fromstring(text).find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "score 0.500 (fail): total (null value; expected 12.5, got null) (+1 more)"
    assert (failure.text or "").splitlines()[:2] == [
        "total (null value; expected 12.5, got null)",
        "number (required, missing; expected 'INV-1', got nothing)",
    ]


def test_a_failures_message_and_text_are_capped():
    """2 MB of misses used to become 2 MB per failure in the XML."""
    from agentv_py.report.junit import BODY_CHARS, MESSAGE_CHARS

    misses = [f"f{i} (value mismatch) " + "x" * 1_000 for i in range(2_000)]
    text = junit([row("c1", "fail", misses=misses)])
    failure = ET.fromstring(text).find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None
    assert len(failure.get("message", "")) < MESSAGE_CHARS + 200 and len(failure.text) < BODY_CHARS + 200
    assert failure.text.endswith("more characters: agentv explain RESULTS CASE shows them all)")
    assert len(text) < 40_000
