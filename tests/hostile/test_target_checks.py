"""Issue 11, point 12: a cli target whose program cannot start is exit 2 before any case runs, and a
program that cannot start is never retried (`attempts` counts the calls really made)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from agentv_py import load_dataset
from agentv_py.cli import app
from agentv_py.runner.engine import RunOptions, run_case
from agentv_py.runner.outcome import TargetOutcome


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def _dataset(ws, evaluator: str = "{type: field_accuracy, fields: [{path: a}]}") -> None:
    ws.file("in.json", '{"a": 1}')
    ws.dataset(
        f"""
        execution:
          target: t
          evaluators: [{evaluator}]
        evalcases:
          - id: c1
            input_messages: [{{role: user, content: [{{type: file, value: in.json}}]}}]
            expected_output: {{a: 1}}
        """
    )


def _refused(ws, *lines: str) -> None:
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == list(lines)
    out = ws.root / "o.jsonl"
    assert not out.exists() or out.read_text() == ""  # no case ran


def test_a_missing_program_is_exit_2_before_any_case_runs(ws):
    _dataset(ws)
    ws.cli_target("no-such-extractor {FILES}")
    _refused(
        ws,
        "error: target 't' cannot start: command not found: no-such-extractor (not on PATH)",
        f"hint: the target runs `no-such-extractor {{FILES}}` in {ws.root}",
    )


def test_a_relative_program_is_looked_up_in_the_targets_cwd(ws):
    _dataset(ws)
    (ws.root / "sub").mkdir()
    ws.file("bin/extract", '#!/bin/sh\ncat "$@"\n').chmod(0o755)  # beside the dataset, not in cwd
    ws.cli_target("./bin/extract {FILES}", extra="cwd: sub")
    _refused(
        ws,
        f"error: target 't' cannot start: program not found: ./bin/extract (looked in {ws.root / 'sub'})",
        f"hint: the target runs `./bin/extract {{FILES}}` in {ws.root / 'sub'}",
    )
    ws.file("sub/bin/extract", '#!/bin/sh\ncat "$@"\n').chmod(0o755)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output


def test_a_program_that_is_not_executable_is_exit_2(ws):
    _dataset(ws)
    ws.file("extract.sh", 'cat "$@"\n').chmod(0o644)
    ws.cli_target("./extract.sh {FILES}")
    _refused(
        ws,
        "error: target 't' cannot start: not executable: ./extract.sh; run `chmod +x ./extract.sh`, "
        "or name its interpreter first, e.g. `sh ./extract.sh`",
        f"hint: the target runs `./extract.sh {{FILES}}` in {ws.root}",
    )


def test_a_missing_absolute_program_and_a_missing_cwd(ws):
    _dataset(ws)
    ws.cli_target("/no/such/extractor {FILES}")
    _refused(
        ws,
        "error: target 't' cannot start: program not found: /no/such/extractor",
        f"hint: the target runs `/no/such/extractor {{FILES}}` in {ws.root}",
    )
    ws.cli_target("cat {FILES}", extra="cwd: nope")
    _refused(
        ws,
        f"error: target 't' cannot start: its cwd is not a directory: {ws.root / 'nope'}",
        f"hint: the target runs `cat {{FILES}}` in {ws.root / 'nope'}",
    )


def test_a_bare_name_is_found_on_the_targets_own_path(ws):
    _dataset(ws)
    ws.file("tools/my-extractor", '#!/bin/sh\ncat "$@"\n').chmod(0o755)
    path = f"{ws.root / 'tools'}:{os.environ['PATH']}"
    ws.cli_target("my-extractor {FILES}", extra=f"env: {{PATH: {json.dumps(path)}}}")
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output


def test_a_shell_template_is_checked_by_its_first_plain_word(ws):
    _dataset(ws)
    ws.cli_target("no-such-tool {FILES} | cat")
    _refused(
        ws,
        "error: target 't' cannot start: command not found: no-such-tool (not on PATH)",
        f"hint: the target runs `no-such-tool {{FILES}} | cat` in {ws.root}",
    )


def test_a_shell_template_starting_with_a_builtin_is_left_to_the_shell_and_not_retried(ws):
    """`cd . && missing` cannot be checked beforehand; the shell's 127 ("not found") is one
    attempt, not --max-retries more."""
    _dataset(ws)
    ws.cli_target("cd . && no-such-tool {FILES}")
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--max-retries", "3")
    assert result.exit_code != 2, result.output
    row = json.loads((ws.root / "o.jsonl").read_text())
    assert (row["status"], row["attempts"]) == ("error", 1)
    assert row["error"].startswith("target 't' failed: exit code 127: ")


def test_a_program_that_vanishes_after_the_check_is_not_retried(ws):
    """The healthcheck (which runs after the check) removes the program: every case's spawn fails
    with "No such file or directory", once."""
    _dataset(ws)
    ws.file("extract.sh", '#!/bin/sh\ncat "$@"\n').chmod(0o755)
    ws.cli_target("./extract.sh {FILES}", extra="healthcheck:\n  command_template: rm extract.sh")
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--max-retries", "3")
    assert result.exit_code != 2, result.output
    row = json.loads((ws.root / "o.jsonl").read_text())
    assert (row["error"], row["attempts"]) == (
        "target 't' failed: cannot run ./extract.sh: No such file or directory",
        1,
    )


def test_a_cli_judge_target_is_checked_too(ws):
    _dataset(ws, evaluator="{type: llm_judge, name: quality, target: j}")
    ws.targets(
        """
        targets:
          - {name: t, provider: cli, command_template: "cat {FILES}"}
          - {name: j, provider: cli, command_template: "no-such-judge {PROMPT}"}
        """
    )
    _refused(
        ws,
        "error: target 'j' cannot start: command not found: no-such-judge (not on PATH)",
        f"hint: the target runs `no-such-judge {{PROMPT}}` in {ws.root}",
    )


def test_dry_run_does_not_check_the_program_and_validate_does(ws):
    _dataset(ws)
    ws.cli_target("no-such-extractor {FILES}")
    assert invoke("eval", "dataset.yaml", "--dry-run", "--out", "o.jsonl").exit_code == 0
    result = invoke("validate", "dataset.yaml", ".agentv/targets.yaml")
    assert result.exit_code == 2, result.output
    assert result.stdout.splitlines() == ["ok: .agentv/targets.yaml (1 target)"]
    assert result.stderr.splitlines()[0] == (
        "dataset.yaml: target 't' cannot start: command not found: no-such-extractor (not on PATH)"
    )


class _Runner:
    name = "t"
    vision = False

    def __init__(self, outcome: TargetOutcome) -> None:
        self.outcome = outcome
        self.calls = 0

    def invoke(self, case, attempt):
        self.calls += 1
        return self.outcome

    def complete(self, messages):
        raise AssertionError("not a judge")


def test_attempts_count_the_calls_really_made(ws):
    _dataset(ws)
    dataset = load_dataset(Path("dataset.yaml"))
    options = RunOptions(workers=1, max_retries=3)
    permanent = _Runner(TargetOutcome(None, "target 't' failed: command not found: x (not on PATH)", retryable=False))
    row = run_case(dataset.cases[0], dataset, permanent, options)
    assert (permanent.calls, row.attempts, row.error) == (1, 1, permanent.outcome.error)
    transient = _Runner(TargetOutcome(None, "target 't' failed: exit code 1"))
    row = run_case(dataset.cases[0], dataset, transient, options)
    assert (transient.calls, row.attempts) == (4, 4)
