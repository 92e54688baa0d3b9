"""Results files and manifests are data (issue 25, point 1): `agentv rescore RUN` never runs a
judge that the run's manifest chose. A received bundle (rows + manifest + a hidden folder holding
a dataset and its "judge") runs nothing; naming the dataset runs it, said before it runs."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def test_a_received_bundle_runs_nothing(ws):
    hidden = ws.root / ".bundle"
    ws.file(".bundle/judge.py", "import pathlib\npathlib.Path('PWNED').write_text('x')\nprint('{\"score\": 1}')\n")
    ws.file(".bundle/fx/c1.json", "echo hi")
    ws.file(
        ".bundle/dataset.yaml",
        "execution:\n  target: t\n  evaluators:\n"
        f"    - {{type: code_judge, name: j, script: [{sys.executable}, judge.py]}}\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]\n"
        "    expected_output: hi\n",
    )
    ws.cli_target("sh {FILES}")
    shutil.copy(ws.root / ".agentv/targets.yaml", hidden / "targets.yaml")
    made = invoke("eval", ".bundle/dataset.yaml", "--out", "run.jsonl", "--targets", ".bundle/targets.yaml")
    assert made.exit_code == 0, made.output
    (hidden / "PWNED").unlink()
    assert json.loads(Path("run.jsonl.meta.json").read_text())["dataset"]["path"] == str(hidden / "dataset.yaml")
    result = invoke("rescore", "run.jsonl", "--out", "again.jsonl")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: run.jsonl's manifest names the dataset {hidden / 'dataset.yaml'}")
    assert "rescore runs judges only from a dataset you name" in result.stderr
    assert not (hidden / "PWNED").exists() and not Path("again.jsonl").exists()


def test_the_targets_file_a_manifest_records_is_not_read(ws):
    """Configuration named by a manifest is not read either: the run's --targets is only a hint."""
    ws.file("fx/c1.json", "echo 1")
    ws.file("elsewhere/targets.yaml", "targets:\n  - {name: t, provider: cli, command_template: 'sh {FILES}'}\n")
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]\n"
        "    expected_output: {a: 1}\n"
    )
    made = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--targets", "elsewhere/targets.yaml")
    assert made.exit_code == 1, made.output  # "1" is not JSON: the case fails; the run is what matters
    result = invoke("rescore", "run.jsonl", "--out", "again.jsonl")
    assert result.exit_code == 1, result.output
    assert (
        "warning: the run used --targets elsewhere/targets.yaml; rescore reads only a targets file you name "
        "or the project's (none found): pass --targets to use it"
    ) in result.stderr


def test_rows_beside_another_runs_manifest_are_not_its(ws):
    """A manifest speaks only for its own rows: rows of run A beside run B's manifest are re-scored
    from the rows alone (with --dataset), and the new run derives from A, not from B."""
    ws.cli_target("sh {FILES}")
    ws.file("fx/c1.json", "echo '{\"a\": 1}'")
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]\n"
        "    expected_output: {a: 1}\n"
    )
    assert invoke("eval", "dataset.yaml", "--out", "a.jsonl").exit_code == 0
    assert invoke("eval", "dataset.yaml", "--out", "b.jsonl").exit_code == 0
    run_a = json.loads(Path("a.jsonl.meta.json").read_text())["run_id"]
    run_b = json.loads(Path("b.jsonl.meta.json").read_text())["run_id"]
    shutil.copy("b.jsonl.meta.json", "a.jsonl.meta.json")  # B's manifest beside A's rows
    refused = invoke("rescore", "a.jsonl", "--out", "r.jsonl")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[0] == (
        f"error: a.jsonl.meta.json is the manifest of run {run_b}, not of the rows of a.jsonl: "
        "the dataset they were run with is unknown"
    )
    result = invoke("rescore", "a.jsonl", "--dataset", "dataset.yaml", "--out", "r.jsonl")
    assert result.exit_code == 0, result.output
    assert "re-scoring from the rows alone" in result.stderr
    assert json.loads(Path("r.jsonl.meta.json").read_text())["derived_from"] == run_a


@pytest.mark.parametrize(
    ("case_extra", "listed"),
    [
        pytest.param("", "llm_judge 'llm_judge': calls the default judge target", id="the default judge"),
        pytest.param("    rubrics: [Mentions hi]\n", "rubric 'rubric': calls the default judge target", id="rubrics"),
    ],
)
def test_judges_no_list_names_are_refused_too(ws, case_extra, listed):
    """A case without evaluators gets AgentV's default llm_judge, a case with `rubrics:` a rubric
    judge: the bundle's judge target (a command) would run. Refused and listed like the rest."""
    hidden = ws.root / ".bundle"
    ws.file(".bundle/pwn.sh", 'touch PWNED; echo \'{"score": 1, "hits": [], "misses": [], "reasoning": "x"}\'\n')
    ws.file(".bundle/fx/c1.json", "echo hi")
    ws.file(
        ".bundle/targets.yaml",
        "targets:\n  - {name: t, provider: cli, command_template: 'sh {FILES}'}\n"
        "  - {name: jt, provider: cli, command_template: 'sh pwn.sh {PROMPT}'}\n",
    )
    ws.file(
        ".bundle/dataset.yaml",
        "execution:\n  target: t\n  judge_target: jt\nevalcases:\n  - id: c1\n"
        "    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]\n"
        "    expected_output: hi\n" + case_extra,
    )
    made = invoke("eval", ".bundle/dataset.yaml", "--out", "run.jsonl", "--targets", ".bundle/targets.yaml")
    assert made.exit_code in (0, 1, 4), made.output
    (hidden / "PWNED").unlink()
    result = invoke("rescore", "run.jsonl", "--out", "again.jsonl")
    assert result.exit_code == 2, result.output
    assert f"whose judges would run: {listed}." in " ".join(result.stderr.split())
    assert not (hidden / "PWNED").exists() and not Path("again.jsonl").exists()
    named = invoke("rescore", "run.jsonl", "--dataset", ".bundle/dataset.yaml", "--out", "again.jsonl")
    said = named.stderr.splitlines()  # before it runs: the judge, and the command its target runs
    assert f"  runs {listed}" in said
    assert f"  runs judge target 'jt' (the default): sh pwn.sh {{PROMPT}} (in {hidden})" in said


def test_rows_of_two_runs_are_not_one_manifests(ws):
    """Rows of run A with one row of run B, beside B's manifest: not B's file."""
    ws.cli_target("sh {FILES}")
    for i in (1, 2):
        ws.file(f"fx/c{i}.json", "echo '{\"a\": 1}'")
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
        "evalcases:\n"
        + "".join(
            f"  - id: c{i}\n    input_messages: [{{role: user, content: [{{type: file, value: fx/c{i}.json}}]}}]\n"
            "    expected_output: {a: 1}\n"
            for i in (1, 2)
        )
    )
    assert invoke("eval", "dataset.yaml", "--out", "a.jsonl").exit_code == 0
    assert invoke("eval", "dataset.yaml", "--out", "b.jsonl", "-e", "c1").exit_code == 0
    rows_a = [line for line in Path("a.jsonl").read_text().splitlines() if '"c2"' in line]
    Path("mix.jsonl").write_text(Path("b.jsonl").read_text() + "\n".join(rows_a) + "\n")
    shutil.copy("b.jsonl.meta.json", "mix.jsonl.meta.json")
    run_b = json.loads(Path("b.jsonl.meta.json").read_text())["run_id"]
    refused = invoke("rescore", "mix.jsonl", "--out", "r.jsonl")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[0] == (
        f"error: mix.jsonl.meta.json is the manifest of run {run_b}, not of the rows of mix.jsonl: "
        "the dataset they were run with is unknown"
    )
