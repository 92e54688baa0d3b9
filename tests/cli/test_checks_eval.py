"""`agentv eval` and `agentv validate` with the deterministic checks (contains, regex, is_json,
...) in an `evalcases` dataset, against a real cli target printing each case's answer file."""

from __future__ import annotations

from typer.testing import CliRunner

from agentv_py.cli import app
from tests.cli.test_eval import invoke, rows
from tests.conftest import script

DATASET = """\
execution:
  target: t
  evaluators:
    - {type: is_json, schema: {type: object, required: [status]}}
    - {type: contains, value: '"status"'}
evalcases:
  - id: ok
    input_messages: [{role: user, content: [{type: file, value: ok.txt}]}]
    execution:
      evaluators:
        - {type: regex, value: '"status"\\s*:\\s*"ok"'}
        - {type: icontains_all, value: [STATUS, OK]}
        - {name: no-error, type: contains, value: error, negate: true}
  - id: prose
    input_messages: [{role: user, content: [{type: file, value: prose.txt}]}]
    execution:
      evaluators:
        - {type: starts_with, value: Dear}
        - {type: equals, value: 'Dear User, all is well.'}
        - {type: contains_any, value: [error, failure]}
"""


def test_checks_score_an_evalcases_dataset(ws):
    ws.cli_target(f"sh {script('echo_file.sh')} {{FILES}}")
    ws.file("ok.txt", '{"status": "ok", "code": 200}\n')
    ws.file("prose.txt", "Dear User, all is well.\n")
    ws.dataset(DATASET)
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1")
    assert result.exit_code == 1, result.output
    found = {row["eval_id"]: row for row in rows("out.jsonl")}
    ok = {r["name"]: (r["type"], r["score"], r["hits"], r["misses"]) for r in found["ok"]["evaluator_results"]}
    assert ok == {
        'regex-"status"\\s*:\\s*"ok"': ("regex", 1.0, ['Output matches pattern /"status"\\s*:\\s*"ok"/'], []),
        "icontains-all-2": ("icontains_all", 1.0, ["Output contains all 2 expected strings (case-insensitive)"], []),
        "no-error": ("contains", 1.0, ['Output does not contain "error"'], []),
    }
    assert found["ok"]["score"] == 1.0
    prose = {r["name"]: (r["score"], r["hits"], r["misses"]) for r in found["prose"]["evaluator_results"]}
    assert prose == {
        "starts-with-Dear": (1.0, ['Output starts with "Dear"'], []),
        "equals-Dear User, all is well.": (1.0, ['Output equals "Dear User, all is well."'], []),
        "contains-any-2": (0.0, [], ['Output does not contain any of: "error", "failure"']),
    }


def test_validate_reports_bad_checks_with_file_and_line(ws):
    ws.dataset(
        "execution:\n  evaluators:\n"
        "    - {type: regex, value: '(unclosed'}\n"
        "    - {type: is_json, schema: {type: [1]}}\n"
        "    - {type: starts_with, value: ''}\n"
        "evalcases:\n  - id: c1\n    input: hi\n"
    )
    result = CliRunner().invoke(app, ["validate", "dataset.yaml"])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "dataset.yaml:3: execution.evaluators[0].value: value is not a valid regular expression: "
        "missing ), unterminated subpattern at position 0"
    )
    assert lines[1] == (
        "dataset.yaml:4: execution.evaluators[1].schema: schema is not a valid JSON Schema: "
        "1 is not one of ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] (at type[0])"
    )
    assert (
        lines[2] == "dataset.yaml:5: execution.evaluators[2].value: value must not be empty: give the text to look for"
    )
    assert lines[-1] == "3 problems found"
