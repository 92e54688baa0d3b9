"""A path argument that is a directory — `.`, an empty string, any folder — is a usage error with
what was expected (exit 2), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


@pytest.mark.parametrize(
    "args, first, hint",
    [
        (["report", "."], "results file is a directory, not a file: . (the current directory)", "--out)"),
        (["report", ""], "results file is a directory, not a file: . (the current directory)", "--out)"),
        (["report", "sub"], "results file is a directory, not a file: sub", "--out)"),
        (["report", "run.jsonl", "-o", "."], "--out is a directory, not a file: . (the current directory)", "HTML"),
        (["merge", ".", "-o", "x.jsonl"], "the run is a directory, not a file: . (the current directory)", "--out)"),
        (["merge", "run.jsonl", "sub", "-o", "x.jsonl"], "the run is a directory, not a file: sub", "--out)"),
        (["merge", "run.jsonl", "-o", "sub"], "--out is a directory, not a file: sub", "merged results"),
    ],
    ids=["report-dot", "report-empty", "report-dir", "report-out-dot", "merge-dot", "merge-dir", "merge-out-dir"],
)
def test_a_directory_for_a_file_is_a_usage_error(ws, args, first, hint):
    (ws.root / "sub").mkdir()
    ws.file("run.jsonl", "")
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: {first}"
    assert lines[1].startswith("hint: ") and hint in lines[1]
    assert "Traceback" not in result.output


MOCK = "targets:\n  - {name: default, provider: mock, echo_expected: true}\n"
EVALUATORS = "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
CASE = EVALUATORS + (
    "evalcases:\n  - {id: c1, input_messages: [{role: user, content: hi}], "
    "expected_messages: [{role: assistant, content: {a: 1}}]}\n"
)


def project(ws) -> None:
    """Datasets at several depths, and files below the same directory that are no dataset."""
    ws.targets(MOCK)
    ws.file("a.yaml", "description: first\n" + CASE)
    ws.file("nested/deep/b.yml", CASE)
    ws.file("nested/bad.yaml", "evalcases: 7\n")  # a dataset with a problem: reported
    line = '{"id": "j1", "input_messages": [{"role": "user", "content": "hi"}], "expected_messages": '
    ws.file("nested/lines.jsonl", line + '[{"role": "assistant", "content": {"a": 1}}]}\n')
    ws.file("nested/lines.yaml", "description: the sidecar, checked with its dataset\n" + EVALUATORS)
    ws.file("ci.yaml", "jobs: {build: {runs-on: ubuntu}}\n")  # YAML, no evalcases
    ws.file("results.jsonl", '{"eval_id": "c1", "score": 1}\n')  # a results file
    ws.file(".hidden/c.yaml", CASE)
    ws.file("node_modules/pkg/d.yaml", CASE)


def test_validate_a_directory_checks_every_dataset_below_it(ws):
    project(ws)
    result = invoke("validate", ".")
    assert result.exit_code == 2, result.output
    assert result.stdout.splitlines() == [
        "ok: a.yaml (1 case)",
        "ok: nested/deep/b.yml (1 case)",
        "ok: nested/lines.jsonl (1 case)",
    ]
    assert "nested/bad.yaml" in result.stderr and result.stderr.rstrip().endswith("1 problem found")


def test_validate_takes_directories_globs_and_files_together_each_once(ws):
    project(ws)
    result = invoke("validate", "nested/deep", "*.yaml", "a.yaml", "nested/lines.jsonl")
    assert result.exit_code == 2  # ci.yaml, matched by the glob, is checked as given (not a dataset)
    assert result.stdout.splitlines() == [
        "ok: nested/deep/b.yml (1 case)",
        "ok: a.yaml (1 case)",
        "ok: nested/lines.jsonl (1 case)",
    ]
    assert "ci.yaml" in result.stderr


@pytest.mark.parametrize(
    "argument, why",
    [
        ("empty", "empty: no dataset below it (a .yaml with evalcases:, or a .jsonl of cases)"),
        ("none*.yaml", "none*.yaml: the pattern matches no file"),
    ],
    ids=["empty-directory", "glob-matching-nothing"],
)
def test_an_argument_that_stands_for_no_file_is_a_problem(ws, argument, why):
    (ws.root / "empty").mkdir()
    (ws.root / "empty" / "notes.yaml").write_text("a: 1\n")
    result = invoke("validate", argument)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [why, "1 problem found"]


def test_discovery_rules():
    from agentv_py.loading.discover import is_dataset

    assert not is_dataset(Path("nothing-here.yaml"))  # unreadable: not a dataset, never an error


def test_a_dataset_whose_evalcases_come_late_is_found(ws):
    ws.targets(MOCK)
    ws.file("long.yaml", "description: |\n" + "  filler line\n" * 20_000 + CASE)
    assert invoke("validate", ".").stdout.splitlines() == ["ok: long.yaml (1 case)"]


def test_a_fifo_or_a_link_below_a_directory_is_passed_over(ws):
    """Opening a FIFO waits for a writer: discovery never opens one (nor follows a link)."""
    import os

    project(ws)
    os.mkfifo(ws.root / "nested" / "pipe.yaml")
    os.symlink(ws.root / "a.yaml", ws.root / "nested" / "link.yaml")
    result = invoke("validate", "nested")
    assert result.stdout.splitlines() == ["ok: nested/deep/b.yml (1 case)", "ok: nested/lines.jsonl (1 case)"]
