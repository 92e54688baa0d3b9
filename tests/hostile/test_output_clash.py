"""No output path may replace an input (issue 25, point 2): --out, --html, --junit, --summary-md,
`rescore --out`, `report -o` and `merge -o` naming the dataset, the targets file, a judge's script
or prompt, a results file read or its manifest, or another output of the same command: exit 2
before anything runs or is written, naming both roles; every input byte for byte as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import processed_result
from agentv_py.locate import output_clash, same_file
from tests.conftest import make_row

DATASET = """\
execution:
  target: t
  evaluators:
    - {type: field_accuracy, fields: [{path: a}]}
    - {type: code_judge, name: j, script: [python3, judge.py]}
    - {type: llm_judge, name: l, prompt: prompts/judge.md, target: t}
evalcases:
  - id: c1
    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]
    expected_output: {a: 1}
"""


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


@pytest.fixture
def project(ws):
    ws.cli_target("cat {FILES}")
    ws.file("fx/c1.json", '{"a": 1}')
    ws.file("judge.py", 'import json; print(json.dumps({"score": 1}))\n')
    ws.file("prompts/judge.md", "Score {{ candidate_answer }} against {{ expected_output }}.\n")
    ws.dataset(DATASET)
    scored = [processed_result(name="field_accuracy", type="field_accuracy", score=1.0)]
    row = make_row("c1", dataset="dataset", score=1.0, verdict="pass", evaluator_results=scored)
    ws.file("run.jsonl", json.dumps(row.to_json_dict()) + "\n")
    ws.file("run.jsonl.meta.json", "{}")
    return ws


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


EVAL = ["eval", "dataset.yaml", "--dry-run"]
CASES = [
    (EVAL + ["--out", "dataset.yaml"], "--out dataset.yaml is the dataset"),
    (EVAL + ["--out", "o.jsonl", "--html", "dataset.yaml"], "--html dataset.yaml is the dataset"),
    (
        EVAL + ["--out", "o.jsonl", "--junit", ".agentv/targets.yaml"],
        "--junit .agentv/targets.yaml is the targets file",
    ),
    (EVAL + ["--out", "o.jsonl", "--summary-md", "judge.py"], "--summary-md judge.py is the script of code judge 'j'"),
    (EVAL + ["--out", "prompts/judge.md"], "--out prompts/judge.md is the prompt file of llm_judge 'l'"),
    (
        EVAL + ["--out", "o.jsonl", "--baseline", "run.jsonl", "--html", "run.jsonl"],
        "--html run.jsonl is the --baseline results",
    ),
    (
        EVAL + ["--out", "o.jsonl", "--baseline", "run.jsonl", "--junit", "run.jsonl.meta.json"],
        "--junit run.jsonl.meta.json is the --baseline manifest",
    ),
    (EVAL + ["--out", "o.jsonl", "--html", "o.jsonl.meta.json"], "--html o.jsonl.meta.json is also the --out manifest"),
    (EVAL + ["--out", "o.jsonl", "--html", "r.html", "--junit", "r.html"], "--html r.html is also --junit"),
    (EVAL + ["--out", "link.yaml"], "--out link.yaml is the dataset"),  # a symlink to it
    (EVAL + ["--out", "hard.yaml"], "--out hard.yaml is the dataset"),  # a hard link to it
    (
        ["rescore", "run.jsonl", "--dataset", "dataset.yaml", "--out", "o.jsonl", "--html", "judge.py"],
        "--html judge.py is the script of code judge 'j'",
    ),
    (
        ["rescore", "run.jsonl", "--dataset", "dataset.yaml", "--out", "dataset.yaml"],
        "--out dataset.yaml is the dataset",
    ),
    (
        ["report", "run.jsonl", "-o", "run.jsonl.meta.json"],
        "--out run.jsonl.meta.json is the manifest of the results file",
    ),
    (["report", "run.jsonl", "-o", "dataset.yaml", "--dataset", "dataset.yaml"], "--out dataset.yaml is --dataset"),
    (["merge", "run.jsonl", "-o", "run.jsonl"], "--out run.jsonl is the run run.jsonl"),
    (
        ["merge", "run.jsonl", "-o", "x.jsonl", "--dataset", "x.jsonl.meta.json"],
        "the --out manifest x.jsonl.meta.json is --dataset",
    ),
]


@pytest.mark.parametrize("args, said", CASES, ids=[" ".join(c[0][:1] + c[0][3:]) for c in CASES])
def test_an_output_never_replaces_an_input(project, args, said):
    os.symlink("dataset.yaml", "link.yaml")
    os.link("dataset.yaml", "hard.yaml")
    Path("x.jsonl.meta.json").write_text(DATASET)
    before = snapshot(project.root)
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"error: {said}"), first
    assert snapshot(project.root) == before  # nothing written, nothing removed


def test_report_never_replaces_the_dataset_its_manifest_names(project):
    """`agentv report` reads the dataset a run's manifest names (for the case images): an input."""
    made = invoke("eval", "dataset.yaml", "--out", "real.jsonl")
    assert made.exit_code in (0, 1, 4), made.output
    before = snapshot(project.root)
    result = invoke("report", "real.jsonl", "-o", "dataset.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --out dataset.yaml is the dataset its manifest names ("), result.stderr
    assert snapshot(project.root) == before


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("fx/c1.json", "--out fx/c1.json is an input file of case 'c1'"),
        ("extract.sh", "--out extract.sh is the program of target 't'"),
        ("tools/../extract.sh", "--out tools/../extract.sh is the program of target 't'"),
    ],
)
def test_the_cases_files_and_the_targets_program_are_inputs(project, out, said):
    project.file("extract.sh", 'cat "$1"\n')
    project.cli_target("sh -c 'cd . && sh extract.sh \"$0\"' {FILES}")
    before = snapshot(project.root)
    result = invoke("eval", "dataset.yaml", "--out", out)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {said} ("), result.stderr
    assert snapshot(project.root) == before


def test_rescore_never_replaces_a_cases_input_file(project):
    made = invoke("eval", "dataset.yaml", "--out", "real.jsonl")
    assert made.exit_code in (0, 1, 4), made.output
    before = snapshot(project.root)
    for args in (["--out", "fx/c1.json"], ["--out", "r.jsonl", "--html", "fx/c1.json"]):
        result = invoke("rescore", "real.jsonl", "--dataset", "dataset.yaml", *args)
        assert result.exit_code == 2, result.output
        assert "fx/c1.json is an input file of case 'c1' (" in result.stderr.splitlines()[0]
    assert snapshot(project.root) == before


def test_report_never_replaces_a_case_image_it_embeds(ws):
    from tests.report.test_html_browser import png

    ws.file("page.png", png(10, 10))
    ws.file("fx/c1.json", '{"box": [0, 0, 5, 5]}')
    ws.cli_target("cat {FILES}")
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: iou_score, name: box, path: box, threshold: 0.5}\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}, "
        "{type: image, value: page.png}]}]\n    expected_messages: [{role: assistant, content: {box: [0, 0, 5, 5]}}]\n"
    )
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl").exit_code == 0
    before = snapshot(ws.root)
    result = invoke("report", "run.jsonl", "-o", "page.png")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: --out page.png is an image of case 'c1' ("), result.stderr
    assert snapshot(ws.root) == before


def test_the_message_names_both_roles_and_what_to_do(project):
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--html", "dataset.yaml")
    dataset = Path("dataset.yaml").resolve()
    assert result.stderr == (
        f"error: --html dataset.yaml is the dataset ({dataset}): an output never replaces an input; pass another path\n"
        "hint: see agentv eval --help\n"
    )


def test_the_check_comes_before_the_healthcheck(project):
    """Nothing runs: the target's healthcheck, which would leave a mark, is never started."""
    project.cli_target("cat {FILES}", extra="healthcheck:\n  command_template: touch ran.txt")
    result = invoke("eval", "dataset.yaml", "--out", "dataset.yaml")
    assert result.exit_code == 2 and not Path("ran.txt").exists()


def test_same_file(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("x")
    os.link(a, b)
    (tmp_path / "s").symlink_to(a)
    assert same_file(a, b) and same_file(tmp_path / "s", a) and same_file(tmp_path / "d" / ".." / "a", a)
    assert not same_file(a, tmp_path / "new") and same_file(tmp_path / "new", tmp_path / "new")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert not same_file(loop, a)


def test_output_clash_ignores_options_not_given():
    assert output_clash([("--out", None), ("--html", Path("r.html"))], [("the dataset", None)]) is None
