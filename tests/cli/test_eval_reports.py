"""`agentv eval --junit / --junit-per-field / --summary-md` and `$GITHUB_STEP_SUMMARY`: real runs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from typer.testing import CliRunner

from agentv_py.cli import app

SCHEMA = xmlschema.XMLSchema(Path(__file__).parents[1] / "fixtures" / "junit.xsd")


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})}).invoke(app, list(args))


@pytest.fixture
def run(ws, monkeypatch):
    """Three cases: one passes, one misses field b, one whose target crashes."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    ws.cli_target("sh {FILES}")
    ws.cases_dataset(
        [
            ("good", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}),
            ("bad|id", 'echo \'{"a": 1, "b": "<script>"}\'', {"a": 1, "b": 2}),
            ("crash", "echo 'extractor exploded' >&2; exit 7", {"a": 1, "b": 2}),
        ]
    )
    return ws


def test_junit_per_field_is_valid_and_counts_each_field(run):
    result = invoke(
        "eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--junit", "reports/junit.xml",
        "--junit-per-field",
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    text = Path("reports/junit.xml").read_text()
    SCHEMA.validate(text)
    suites = ET.fromstring(text).findall("testsuite")
    assert [(s.get("name"), s.get("tests"), s.get("failures"), s.get("errors")) for s in suites] == [
        ("dataset", "3", "1", "1"),
        ("dataset.a", "3", "0", "1"),
        ("dataset.b", "3", "1", "1"),
    ]
    cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert set(cases) == {"good", "bad|id", "crash"}
    failure = cases["bad|id"].find("failure")
    assert failure is not None and failure.text is not None
    assert 'b: expected 2, got "<script>"' in failure.text
    error = cases["crash"].find("error")
    assert error is not None
    assert error.get("message") == "target 't' failed: exit code 7: extractor exploded"


def test_summary_md_and_the_github_step_summary(run):
    step = Path("step.md")
    step.write_text("earlier step\n")
    result = invoke(
        "eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--workers", "1",
        "--summary-md", "summary.md",
        env={"GITHUB_STEP_SUMMARY": str(step.resolve())},
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    summary = Path("summary.md").read_text()
    assert step.read_text() == "earlier step\n" + summary  # appended, as GitHub Actions expects
    assert summary.startswith("## agentv: dataset against t\n\n**⚠️ errors** (every case passed): 1 case had a target")
    assert "| 3 | 1 | 0 | 1 | 1 | 0 | 0.500 |" in summary
    assert "| b | 1 | 2 | 0.50 \\[0.09, 0.91\\] | 0 |" in summary
    (bad,) = [line for line in summary.splitlines() if line.startswith("| bad")]
    assert bad.startswith("| bad\\|id | 0.500 | fail | b (type mismatch: got string, expected number")  # the row's miss
    assert "<script>" not in summary
    assert "| crash | 0.000 | error | error: target 't' failed: exit code 7: extractor exploded |" in summary


def test_step_summary_with_results_on_stdout_has_no_field_table(run):
    step = Path("step.md")
    result = invoke("eval", "dataset.yaml", "--out", "-", "--max-retries", "0", env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 4, result.output
    text = step.read_text()
    assert "| 3 | 1 | 0 | 1 | 1 | 0 | 0.500 |" in text and "Worst fields" not in text


def test_no_report_without_options(run):
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0")
    assert result.exit_code == 4
    assert sorted(p.name for p in Path().iterdir() if p.suffix in (".xml", ".md")) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--junit-per-field"],
            "error: --junit-per-field goes with --junit FILE\nhint: see agentv eval --help\n",
            id="per-field-alone",
        ),
        pytest.param(
            ["--junit", "j.xml", "--out", "-"],
            "error: --junit needs the results in a file: it reads them back at the end of the run, not with --out -\n"
            "hint: pass --out FILE, or leave --out out\n",
            id="junit-with-stdout",
        ),
        pytest.param(
            ["--junit", "out.jsonl", "--out", "out.jsonl"],
            "error: --junit out.jsonl is also --out: each output needs a path of its own\n"
            "hint: see agentv eval --help\n",
            id="junit-is-the-results",
        ),
        pytest.param(
            ["--summary-md", "./out.jsonl", "--out", "out.jsonl"],
            "error: --summary-md out.jsonl is also --out: each output needs a path of its own\n"
            "hint: see agentv eval --help\n",
            id="summary-is-the-results",
        ),
    ],
)
def test_usage_errors_exit_2_before_anything_runs(run, args, message):
    result = invoke("eval", "dataset.yaml", *args)
    assert (result.exit_code, result.stderr) == (2, message)
    assert not Path("out.jsonl").exists()


def test_a_report_that_cannot_be_written_exits_5_after_the_results(run):
    Path("blocked").write_text("a file, not a directory")
    result = invoke(
        "eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--summary-md", "s.md",
        "--junit", "blocked/junit.xml",
    )  # fmt: skip
    assert result.exit_code == 5, result.output
    assert result.stderr.splitlines()[-1] == (
        "error: cannot write the JUnit report blocked/junit.xml: File exists; the results are kept in out.jsonl"
    )
    assert len(Path("out.jsonl").read_text().splitlines()) == 3
    assert "Totals: 3 cases" in result.stdout


def test_junit_reads_back_a_resumed_file_whole(run):
    first = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--eval-id", "good")
    assert first.exit_code == 0, first.output
    result = invoke("eval", "dataset.yaml", "--resume", "out.jsonl", "--max-retries", "0", "--junit", "j.xml")
    assert result.exit_code == 4, result.output
    suite = ET.fromstring(Path("j.xml").read_text()).find("testsuite")
    assert suite is not None
    assert sorted(c.get("name") or "" for c in suite.findall("testcase")) == ["bad|id", "crash", "good"]
    assert [json.loads(line)["eval_id"] for line in Path("out.jsonl").read_text().splitlines()][0] == "good"


def test_rescore_writes_the_same_reports(run):
    first = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0")
    assert first.exit_code == 4, first.output
    step = Path("step.md")
    result = invoke(
        "rescore", "out.jsonl", "--out", "again.jsonl", "--junit", "j.xml", "--junit-per-field",
        env={"GITHUB_STEP_SUMMARY": str(step)},
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    text = Path("j.xml").read_text()
    SCHEMA.validate(text)
    suites = ET.fromstring(text).findall("testsuite")
    assert [(s.get("name"), s.get("tests"), s.get("failures"), s.get("errors")) for s in suites] == [
        ("dataset", "3", "1", "1"),
        ("dataset.a", "3", "0", "1"),
        ("dataset.b", "3", "1", "1"),
    ]
    assert "| b | 1 | 2 | 0.50 \\[0.09, 0.91\\] | 0 |" in step.read_text()
    assert "Results: again.jsonl" in step.read_text()
