"""`agentv validate` makes the checks `agentv eval` makes before it runs (preflight.preflight, one
function for both), with the same messages; an unset `${{ VAR }}` is only a warning for validate,
which CI runs without secrets, and the healthcheck (an action, not a check) is eval's alone."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app

pytestmark = pytest.mark.usefixtures("both_chunkings")

SUITE = "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
CASES = "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: hi}]\n    expected_output: {a: 1}\n"
JUDGED = "execution:\n  target: t\n  evaluators:\n    - {type: llm_judge, prompt: grade it, target: judge}\n"
UNSET = "environment variable {var} is not set (used as ${{{{ {var} }}}})"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_selected_target_whose_program_does_not_exist(ws):
    ws.dataset(SUITE + CASES)
    ws.cli_target("./missing.sh {PROMPT}")
    message = f"target 't' cannot start: program not found: ./missing.sh (looked in {ws.root})"
    hint = f"the target runs `./missing.sh {{PROMPT}}` in {ws.root}"
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 2
    assert checked.stdout == ""
    assert checked.stderr.splitlines() == [f"dataset.yaml: {message}", f"  hint: {hint}", "1 problem found"]
    evaluated = run("eval", "dataset.yaml")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines() == [f"error: {message}", f"hint: {hint}"]


def test_an_unknown_target_from_the_option_or_the_dataset(ws):
    ws.dataset(SUITE + CASES)
    ws.cli_target("python3 -c pass", name="other")
    message = (
        "target '{name}' (from {origin}) is not defined in .agentv/targets.yaml, the targets file read for "
        "dataset.yaml. Available targets: other"
    )
    hint = "pass --target NAME, set execution.target in the dataset, or pass --targets PATH"
    for args, name, origin in (
        (["--target", "nope"], "nope", "--target"),
        ([], "t", "execution.target in the dataset"),
    ):
        checked = run("validate", "dataset.yaml", *args)
        assert checked.exit_code == 2
        shown = message.format(name=name, origin=origin)
        assert checked.stderr.splitlines() == [f"dataset.yaml: {shown}", f"  hint: {hint}", "1 problem found"]
        evaluated = run("eval", "dataset.yaml", *args)
        assert evaluated.exit_code == 2
        assert evaluated.stderr.splitlines() == [f"error: {shown}", f"hint: {hint}"]
    assert run("validate", "dataset.yaml", "--target", "other").exit_code == 0


def test_a_missing_judge_target_and_the_target_are_both_reported(ws):
    ws.dataset(JUDGED + CASES)
    ws.cli_target("./missing.sh {PROMPT}")
    judge = (
        "dataset.yaml:4: execution.evaluators[0].target: llm_judge 'llm_judge': judge target 'judge' (from "
        "target) is not defined in .agentv/targets.yaml. Available targets: t"
    )
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 2
    assert checked.stderr.splitlines() == [
        judge,
        f"dataset.yaml: target 't' cannot start: program not found: ./missing.sh (looked in {ws.root})",
        f"  hint: the target runs `./missing.sh {{PROMPT}}` in {ws.root}",
        "2 problems found",
    ]
    ws.cli_target("python3 -c pass")  # eval stops at the first: the program, once it can start
    evaluated = run("eval", "dataset.yaml")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines() == ["error: 1 problem found:", f"  {judge}"]


def test_an_unset_variable_is_a_warning_for_validate_and_an_error_for_eval(ws, monkeypatch):
    monkeypatch.delenv("AGENTV_T_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    ws.dataset(JUDGED + CASES)
    ws.targets(
        "targets:\n"
        "  - name: t\n    provider: cli\n    command_template: python3 -c pass --key ${{ AGENTV_T_KEY }} {PROMPT}\n"
        "    judge_target: judge\n"
        "  - name: judge\n    provider: openai\n    model: gpt-4o\n    api_key: ${{ AZURE_OPENAI_API_KEY }}\n"
    )
    target_key = ".agentv/targets.yaml:4: targets[0].command_template: " + UNSET.format(var="AGENTV_T_KEY")
    judge_key = ".agentv/targets.yaml:9: targets[1].api_key: " + UNSET.format(var="AZURE_OPENAI_API_KEY")
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 0, checked.output
    assert checked.stderr.splitlines() == [f"warning: {target_key}", f"warning: {judge_key}"]
    assert checked.stdout == "ok: dataset.yaml (1 case)\n"
    evaluated = run("eval", "dataset.yaml")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines() == ["error: 1 problem found:", f"  {target_key}"]
    monkeypatch.setenv("AGENTV_T_KEY", "k")
    evaluated = run("eval", "dataset.yaml")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines() == ["error: 1 problem found:", f"  {judge_key}"]


def test_with_a_variable_unset_the_other_checks_still_run_on_the_target(ws, monkeypatch):
    monkeypatch.delenv("AGENTV_T_KEY", raising=False)
    monkeypatch.delenv("AGENTV_T_PY", raising=False)
    ws.dataset(SUITE + CASES)
    ws.cli_target("./missing.sh --key ${{ AGENTV_T_KEY }} {PROMPT}")
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 2
    assert checked.stderr.splitlines() == [
        "warning: .agentv/targets.yaml:4: targets[0].command_template: " + UNSET.format(var="AGENTV_T_KEY"),
        f"dataset.yaml: target 't' cannot start: program not found: ./missing.sh (looked in {ws.root})",
        f"  hint: the target runs `./missing.sh --key ${{{{ AGENTV_T_KEY }}}} {{PROMPT}}` in {ws.root}",
        "1 problem found",
    ]
    # The program itself unset: it cannot be looked for, and that is not a problem.
    ws.cli_target("${{ AGENTV_T_PY }} run.py {PROMPT}")
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 0, checked.output
    assert checked.stderr.splitlines() == [
        "warning: .agentv/targets.yaml:4: targets[0].command_template: " + UNSET.format(var="AGENTV_T_PY")
    ]


def test_no_targets_file_is_a_note_not_a_problem(ws):
    ws.dataset(SUITE + CASES)
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 0, checked.output
    assert checked.stderr.splitlines() == ["note: dataset.yaml: target not checked: no targets file found"]
    assert checked.stdout == "ok: dataset.yaml (1 case)\n"
    evaluated = run("eval", "dataset.yaml")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines()[0].startswith("error: no targets file found (looked for ")


def test_targets_option_names_the_file_checked_with(ws):
    ws.dataset(SUITE + CASES)
    ws.targets("targets:\n  - name: t\n    provider: cli\n    command_template: ./gone.sh {PROMPT}\n", "elsewhere.yaml")
    checked = run("validate", "dataset.yaml", "--targets", "elsewhere.yaml")
    assert checked.exit_code == 2
    assert checked.stderr.splitlines()[0] == (
        f"dataset.yaml: target 't' cannot start: program not found: ./gone.sh (looked in {ws.root})"
    )
    missing = run("validate", "dataset.yaml", "--targets", "nowhere.yaml")
    assert missing.exit_code == 2
    assert missing.stderr.splitlines() == ["nowhere.yaml: file not found", "1 problem found"]


def test_validate_does_not_run_the_healthcheck(ws):
    ws.dataset(SUITE + CASES)
    ws.cli_target("python3 -c pass", extra="healthcheck: {command_template: 'python3 -c \"raise SystemExit(3)\"'}")
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 0, checked.output
    assert checked.stderr == ""
    evaluated = run("eval", "dataset.yaml")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines()[0].startswith("error: healthcheck of target 't' failed: ")


def test_a_set_secret_is_masked_and_an_unset_one_is_warned_about_once(ws, monkeypatch):
    monkeypatch.setenv("AGENTV_T_SECRET", "hunter2-secret")
    monkeypatch.delenv("AGENTV_T_UNSET", raising=False)
    ws.dataset("execution:\n  target: t\n  evaluators:\n    - {type: llm_judge, prompt: grade it}\n" + CASES)
    ws.cli_target(
        "./missing.sh --key ${{ AGENTV_T_SECRET }} {PROMPT}",
        extra="judge_target: t\nenv: {OTHER: '${{ AGENTV_T_UNSET }}'}",
    )
    checked = run("validate", "dataset.yaml")
    assert checked.exit_code == 2
    assert "hunter2-secret" not in checked.output
    assert checked.stderr.splitlines() == [  # the target is its own judge: one warning, one problem
        "warning: .agentv/targets.yaml:6: targets[0].env.OTHER: " + UNSET.format(var="AGENTV_T_UNSET"),
        f"dataset.yaml: target 't' cannot start: program not found: ./missing.sh (looked in {ws.root})",
        f"  hint: the target runs `./missing.sh --key *** {{PROMPT}}` in {ws.root}",
        "1 problem found",
    ]
