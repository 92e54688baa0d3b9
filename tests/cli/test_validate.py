from __future__ import annotations

from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import REPO_ROOT


def test_validate_reports_every_problem_in_every_file(ws):
    ws.dataset("evalcases:\n  - id: a\n  - id: a\n", "one.yaml")
    ws.dataset("evalcases: []\n", "two.yaml")
    result = CliRunner().invoke(app, ["validate", "one.yaml", "two.yaml", "missing.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "one.yaml:2: evalcases[0]: case 'a' has no evaluators: "
        "add execution.evaluators to the dataset or evaluators to the case",
        "one.yaml:3: evalcases[1]: case 'a' has no evaluators: "
        "add execution.evaluators to the dataset or evaluators to the case",
        "one.yaml:3: evalcases[1].id: duplicate id 'a' (first used by evalcases[0]); ids must be unique",
        "two.yaml:1: evalcases: evalcases must be a non-empty list of cases",
        "missing.yaml: file not found",
        "5 problems found",
    ]


def test_validate_accepts_every_example(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = CliRunner().invoke(
        app,
        [
            "validate",
            "evals/invoice-extraction/dataset.yaml",
            "evals/invoice-extraction/.agentv/targets.yaml",
            "evals/invoice-extraction/confusion-metrics.yaml",
            "evals/layout-detection/dataset.yaml",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "ok: evals/invoice-extraction/dataset.yaml (7 cases)",
        "ok: evals/invoice-extraction/.agentv/targets.yaml (2 targets)",
        "ok: evals/invoice-extraction/confusion-metrics.yaml (7 cases)",
        "ok: evals/layout-detection/dataset.yaml (3 cases)",
    ]


def test_validate_refuses_hostile_yaml_and_goes_on_to_the_next_file(ws):
    suite = "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
    ws.dataset(suite + "evalcases:\n  - id: c1\n    expected_output: &r {a: 1, again: *r}\n", "recursive.yaml")
    ws.dataset(suite + "evalcases:\n  - id: c1\n    id: c2\n", "duplicate.yaml")
    ws.dataset(suite + "evalcases:\n  - id: c1\n    expected_output: {a: 1}\n", "fine.yaml")
    result = CliRunner().invoke(app, ["validate", "recursive.yaml", "duplicate.yaml", "fine.yaml"])
    assert result.exit_code == 2
    assert result.stdout == "ok: fine.yaml (1 cases)\n"
    assert result.stderr.splitlines() == [
        "recursive.yaml:6: evalcases[0].expected_output.again: alias *r refers to a node that contains it "
        "(a recursive structure); datasets cannot hold recursive data",
        "duplicate.yaml:6: evalcases[0].id: duplicate key 'id' (first at line 5)",
        "2 problems found",
    ]
