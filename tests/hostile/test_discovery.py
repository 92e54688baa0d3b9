"""The targets file never comes from outside the project (issue 11, point 3).

A targets file is code: its command templates are run. It is looked for from the dataset's folder
up to the repository root (and in the current directory when that is inside the repository);
outside a repository, only in the dataset's folder and the current directory. A `targets.yaml`
planted in a parent folder (a shared /tmp, a home directory, a checkout's parent) is never run.
The run's header names the targets file used, and a target-selection error names the dataset
and the targets file read for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.loading import discover_targets_file
from agentv_py.locate import targets_search_dirs

PLANTED = "targets:\n  - {name: default, provider: cli, command_template: 'touch PWNED'}\n"
MOCK = "targets:\n  - {name: default, provider: mock, response: '{\"a\": 1}'}\n"
DATASET = (
    "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
    "evalcases:\n  - id: c1\n    expected_output: {a: 1}\n"
)


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder in no repository (none of its ancestors holds .git), as the current directory."""
    assert not any((d / ".git").exists() for d in (tmp_path, *tmp_path.parents))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ----------------------------------------------------------------------------- inside a repository


def test_a_targets_file_above_the_repository_root_is_never_used(tmp_path, monkeypatch):
    write(tmp_path / "targets.yaml", PLANTED)  # the checkout's parent folder
    write(tmp_path / ".agentv" / "targets.yaml", PLANTED)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / "evals" / "ds" / "dataset.yaml", DATASET)
    monkeypatch.chdir(project)
    assert discover_targets_file(project / "evals" / "ds") is None
    result = invoke("eval", "evals/ds/dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    places = ", ".join(str(d) for d in (project / "evals" / "ds", project / "evals", project))
    assert result.stderr.splitlines()[0] == (
        "error: no targets file found (looked for .agentv/targets.yaml and targets.yaml in: " + places + ")"
    )
    assert not (project / "PWNED").exists() and not (project / "evals" / "ds" / "PWNED").exists()


def test_inside_a_repository_the_search_stops_at_its_root(ws):
    ds = ws.root / "evals" / "ds"
    ds.mkdir(parents=True)
    assert targets_search_dirs(ds) == [ds, ds.parent, ws.root]
    write(ws.root / ".agentv" / "targets.yaml", MOCK)
    assert discover_targets_file(ds) == ws.root / ".agentv" / "targets.yaml"
    nearer = write(ds.parent / "targets.yaml", MOCK)
    assert discover_targets_file(ds) == nearer


def test_a_current_directory_outside_the_repository_is_not_searched(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / "dataset.yaml", DATASET)
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "targets.yaml", PLANTED)
    monkeypatch.chdir(elsewhere)
    assert targets_search_dirs(project) == [project]
    assert discover_targets_file(project) is None


def test_a_current_directory_inside_the_repository_is_searched(ws, monkeypatch):
    write(ws.root / "evals" / "dataset.yaml", DATASET)
    tools = ws.root / "tools"
    found = write(tools / "targets.yaml", MOCK)
    monkeypatch.chdir(tools)
    assert targets_search_dirs(ws.root / "evals") == [ws.root / "evals", ws.root, tools]
    assert discover_targets_file(ws.root / "evals") == found


# ----------------------------------------------------------------------------- outside a repository


def test_outside_a_repository_parent_folders_are_not_searched(outside, monkeypatch):
    write(outside / "targets.yaml", PLANTED)  # e.g. a targets.yaml someone left in /tmp
    write(outside / ".agentv" / "targets.yaml", PLANTED)
    ds = outside / "shared" / "ds"
    write(ds / "dataset.yaml", DATASET)
    monkeypatch.chdir(ds)
    assert targets_search_dirs(ds) == [ds]
    assert discover_targets_file(ds) is None
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"error: no targets file found (looked for .agentv/targets.yaml and targets.yaml in: {ds})"
    )
    assert not (ds / "PWNED").exists()


def test_outside_a_repository_the_dataset_folder_and_the_current_directory(outside):
    ds = outside / "ds"
    write(ds / "dataset.yaml", DATASET)
    assert targets_search_dirs(ds) == [ds, outside]
    in_cwd = write(outside / "targets.yaml", MOCK)
    assert discover_targets_file(ds) == in_cwd
    beside = write(ds / ".agentv" / "targets.yaml", MOCK)
    assert discover_targets_file(ds) == beside


# ----------------------------------------------------------------------------- the header and errors


def header(result) -> str:
    return result.stderr.splitlines()[0]


def test_the_header_names_the_targets_file_used(ws):
    ws.dataset(DATASET, "evals/dataset.yaml")
    ws.targets(MOCK)
    result = invoke("eval", "evals/dataset.yaml", "--out", "o.jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert header(result) == "agentv: 1 case of 'dataset' against target 'default' from .agentv/targets.yaml (1 worker)"


def test_the_header_names_a_targets_file_given_with_targets(ws, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("chosen") / "my-targets.yaml"
    elsewhere.write_text(MOCK.replace("default", "mine"))
    ws.dataset(DATASET)
    result = invoke("eval", "dataset.yaml", "--targets", str(elsewhere), "--target", "mine", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    assert header(result) == f"agentv: 1 case of 'dataset' against target 'mine' from {elsewhere} (4 workers)"


def test_the_dry_run_header_says_no_targets_file_was_read(ws):
    ws.dataset(DATASET)
    result = invoke("eval", "dataset.yaml", "--dry-run", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    assert header(result) == (
        "agentv: 1 case of 'dataset' against target 'dry-run' (dry run, no targets file read) (4 workers)"
    )


def test_the_dry_run_header_names_the_file_of_its_judge_targets(ws):
    ws.dataset(
        "execution:\n  judge_target: judge\n  evaluators:\n    - {type: llm_judge}\n"
        "evalcases:\n  - id: c1\n    input: hi\n    expected_output: hello\n"
    )
    ws.targets("targets:\n  - {name: judge, provider: mock, response: '{\"score\": 1}'}\n")
    result = invoke("eval", "dataset.yaml", "--dry-run", "--out", "o.jsonl")
    assert header(result) == (
        "agentv: 1 case of 'dataset' against target 'dry-run' (dry run, judge targets from .agentv/targets.yaml) "
        "(4 workers)"
    )


def test_a_target_selection_error_names_the_dataset_and_the_targets_file(ws):
    ws.dataset(DATASET.replace("execution:\n", "execution:\n  target: extractor\n"), "evals/invoices.yaml")
    ws.targets(MOCK)
    result = invoke("eval", "evals/invoices.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: target 'extractor' (from execution.target in the dataset) is not defined in .agentv/targets.yaml, "
        "the targets file read for evals/invoices.yaml. Available targets: default",
        "hint: pass --target NAME, set execution.target in the dataset, or pass --targets PATH",
    ]
    assert not Path("o.jsonl").exists() or Path("o.jsonl").read_text() == ""  # nothing ran
