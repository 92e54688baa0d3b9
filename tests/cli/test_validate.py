from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.usefixtures("both_chunkings")


def test_validate_reports_every_problem_in_every_file(ws):
    ws.dataset("evalcases:\n  - id: a\n  - id: a\n", "one.yaml")
    ws.dataset("evalcases: []\n", "two.yaml")
    result = CliRunner().invoke(app, ["validate", "one.yaml", "two.yaml", "missing.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "one.yaml:3: evalcases[1].id: duplicate id 'a' (first used by evalcases[0]); ids must be unique",
        "two.yaml:1: evalcases: evalcases must be a non-empty list of cases",
        "missing.yaml: file not found",
        "3 problems found",
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
    assert result.stdout == "ok: fine.yaml (1 case)\n"
    assert result.stderr.splitlines() == [
        "recursive.yaml:6: evalcases[0].expected_output.again: alias *r refers to a node that contains it "
        "(a recursive structure); datasets cannot hold recursive data",
        "duplicate.yaml:6: evalcases[0].id: duplicate key 'id' (first at line 5)",
        "note: fine.yaml: target not checked: no targets file found",
        "2 problems found",
    ]


# What a field path, a key, a type name or a file name holds is data: its control characters and
# bidi overrides are shown as escapes on every line validate writes, never obeyed.
HOSTILE = "\x1b]0;PWNTITLE\x07\x1b[31m\u202e"
HOSTILE_YAML = "\\x1b]0;PWNTITLE\\x07\\x1b[31m\\u202e"  # the same, as a YAML double-quoted escape
SHOWN = "\\x1b]0;PWNTITLE\\x07\\x1b[31m\\u202e"  # what validate prints for it
SUITE = "execution:\n  evaluators:\n    - {{type: field_accuracy, fields: [{{path: {path}}}]}}\nevalcases:\n"


def test_validate_shows_control_characters_in_problems_warnings_and_paths_as_escapes(ws):
    ws.dataset(
        SUITE.format(path="a") + f'  - id: c1\n    expected_output: {{"k{HOSTILE_YAML}": 1, "k{HOSTILE_YAML}": 2}}\n',
        "dup.yaml",
    )
    ws.dataset(f'execution:\n  evaluators: [{{type: "bogus{HOSTILE_YAML}"}}]\nevalcases:\n  - id: c1\n', "unknown.yaml")
    ws.dataset(SUITE.format(path=f'"a{HOSTILE_YAML}"') + "  - id: c1\n    expected_output: {b: 1}\n", "warn.yaml")
    ws.dataset(SUITE.format(path="a") + "  - id: c1\n    expected_output: {a: 1}\n", f"ok{HOSTILE}.yaml")
    result = CliRunner().invoke(app, ["validate", "dup.yaml", "unknown.yaml", "warn.yaml", f"ok{HOSTILE}.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"dup.yaml:6: evalcases[0].expected_output.k{SHOWN}: duplicate key 'k{SHOWN}' (first at line 6)",
        f"unknown.yaml:2: execution.evaluators[0].type: Unknown evaluator type: bogus{SHOWN}. "
        "Valid types: field_accuracy, code_judge, iou_score, coordinate_distance, llm_judge, rubric, composite, "
        "tool_trajectory, latency, cost, token_usage, execution_metrics, skill_trigger, contains, contains_any, "
        "contains_all, icontains, icontains_any, icontains_all, starts_with, ends_with, regex, equals, is_json, "
        "anls_star",
        f"warning: warn.yaml:3: execution.evaluators[0].fields[0].path: malformed path 'a{SHOWN}': "
        f"segment 'a{SHOWN}' is not a key optionally followed by [index] or [*] ('$' alone is the whole answer); "
        "the field will always be missing",
        "note: warn.yaml: target not checked: no targets file found",
        f"note: ok{SHOWN}.yaml: target not checked: no targets file found",
        "2 problems found",
    ]
    assert result.stdout.splitlines() == ["ok: warn.yaml (1 case)", f"ok: ok{SHOWN}.yaml (1 case)"]


def test_validate_shows_control_characters_in_a_note_as_escapes(ws):
    ws.dataset(
        "execution:\n  evaluators: [{type: llm_judge, prompt: grade it}]\nevalcases:\n  - id: c1\n"
        "    input_messages: [{role: user, content: hi}]\n    expected_output: {a: 1}\n",
        f"j{HOSTILE}.yaml",
    )
    result = CliRunner().invoke(app, ["validate", f"j{HOSTILE}.yaml"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"note: j{SHOWN}.yaml: target and judge targets not checked: no targets file found"
    ]
    assert result.stdout.splitlines() == [f"ok: j{SHOWN}.yaml (1 case)"]


NOTHING = (
    "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
    "evalcases:\n"
    "  - {id: kept, expected_output: {a: 1}}\n"
    "  - id: deleted\n    input: the ground truth of this case was deleted\n"
    "  - {id: judged, evaluators: [{type: code_judge, script: [python3, j.py]}]}\n"
    "  - {id: rubric, rubrics: [mentions the total]}\n"
    "  - {id: composite, evaluators: [{type: composite, aggregator: {type: weighted_average},\n"
    "      evaluators: [{type: iou_score, threshold: 0.5}]}]}\n"
)


def test_a_case_with_nothing_to_compare_is_a_load_error_at_its_line(ws):
    """No ground truth and only evaluators that compare with one: the case could never be
    scored (it scored 0 with no reason, or 1.0 with a judge that did not look): exit 2, its line.
    A case whose evaluator works without ground truth (a code judge, rubrics) is left alone."""
    ws.file("j.py", "print('{\"score\": 1}')\n")
    ws.dataset(NOTHING)
    result = CliRunner().invoke(app, ["validate", "dataset.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "dataset.yaml:6: evalcases[1]: case 'deleted' has nothing to compare: no expected_messages or "
        "expected_output, and its evaluators (field_accuracy) compare the answer with one; give the case its "
        "expected answer, or an evaluator that works without one (a code_judge, an llm_judge)",
        "dataset.yaml:10: evalcases[4]: case 'composite' has nothing to compare: no expected_messages or "
        "expected_output, and its evaluators (composite) compare the answer with one; give the case its "
        "expected answer, or an evaluator that works without one (a code_judge, an llm_judge)",
    ]
