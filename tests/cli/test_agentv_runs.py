"""`agentv eval --agentv-run DIR` writes AgentV's v4.42 run folder, and `agentv compare`,
`agentv metrics` and `agentv report` read it (and AgentV's own index.jsonl) back: real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_eval import invoke
from tests.conftest import Workspace


@pytest.fixture
def run(ws: Workspace) -> Workspace:
    """Three cases: one passes, one misses field b, one whose target crashes."""
    ws.cli_target("sh {FILES}")
    ws.cases_dataset(
        [
            ("good", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}),
            ("bad|id", 'echo \'{"a": 1, "b": 3}\'', {"a": 1, "b": 2}),
            ("crash", "echo 'extractor exploded' >&2; exit 7", {"a": 1, "b": 2}),
        ]
    )
    return ws


def index_rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "index.jsonl").read_text().splitlines()]


def test_eval_writes_the_run_folder(run: Workspace) -> None:
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--agentv-run", "runs/one")
    assert result.exit_code == 4, result.output
    assert "Reports written to: runs/one (AgentV run folder)" in result.output
    folder = Path("runs/one")
    assert sorted(p.name for p in folder.iterdir()) == ["benchmark.json", "dataset", "index.jsonl", "timing.json"]
    rows = {row["test_id"]: row for row in index_rows(folder)}
    assert {k: (v["score"], v["execution_status"]) for k, v in rows.items()} == {
        "good": (1.0, "ok"),
        "bad|id": (0.5, "quality_failure"),
        "crash": (0.0, "execution_error"),
    }
    assert rows["crash"]["error"] == "target 't' failed: exit code 7: extractor exploded"
    assert rows["bad|id"]["grading_path"].startswith("dataset/bad_id-")  # `|` is not in a folder name
    assert (folder / rows["good"]["answer_path"]).read_text() == '{"a": 1, "b": 2}\n'
    benchmark = json.loads((folder / "benchmark.json").read_text())
    assert benchmark["notes"] == ["1 test(s) had execution errors and are excluded from quality pass_rate"]
    assert benchmark["metadata"]["tests_run"] == ["bad|id", "crash", "good"]


def test_compare_metrics_and_report_read_the_folder_as_the_jsonl(run: Workspace) -> None:
    invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--agentv-run", "runs/one")
    compared = invoke("compare", "out.jsonl", "runs/one", "--format", "json")
    assert compared.exit_code == 0, compared.output
    document = json.loads(compared.stdout)
    assert (document["base"], document["new"], document["paired_cases"], document["cases"]) == (
        "out.jsonl",
        "runs/one",
        2,
        [],
    )
    assert document["errored"] == {"crash": "both"}
    ours, theirs = invoke("metrics", "out.jsonl"), invoke("metrics", "runs/one/index.jsonl")
    assert theirs.exit_code == ours.exit_code == 0
    assert theirs.stdout.replace("runs/one/index.jsonl", "out.jsonl") == ours.stdout
    report = invoke("report", "runs/one")
    assert report.exit_code == 0, report.output
    assert report.stdout == "runs/one/report.html\n"
    page = Path("runs/one/report.html").read_text()
    assert "runs/one" in page and "bad|id" in page


def test_compare_of_two_agentv_runs_gates(run: Workspace) -> None:
    invoke("eval", "dataset.yaml", "--out", "base.jsonl", "--max-retries", "0", "--agentv-run", "runs/base")
    Path("fx/good.json").write_text('echo \'{"a": 1, "b": 0}\'')
    invoke("eval", "dataset.yaml", "--out", "new.jsonl", "--max-retries", "0", "--agentv-run", "runs/new")
    result = invoke("compare", "runs/base", "runs/new/index.jsonl")
    assert result.exit_code == 1, result.output
    assert "regression: 1 case went from pass to not pass (> --allow-flips 0): good" in result.output
    same = invoke("compare", "runs/base", "runs/base/index.jsonl")
    assert same.exit_code == 2
    assert "error: BASE and NEW are the same AgentV run: runs/base" in same.output


def test_agentvs_own_trend_samples_compare(ws: Workspace) -> None:
    for name, scores in (("march", (0.94, 0.90)), ("april", (0.88, 0.70))):
        rows = [
            {"test_id": t, "suite": "code-review", "target": "claude", "score": s}
            for t, s in zip(("a", "b"), scores, strict=True)
        ]
        ws.file(f"{name}/index.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    result = invoke("compare", "march", "april")
    assert result.exit_code == 1
    assert "regression: 1 case went from pass to not pass (> --allow-flips 0): b" in result.output


CLI_ERRORS = [
    (
        ["--out", "-", "--agentv-run", "runs/x"],
        "error: --agentv-run needs the results in a file: it reads them back at the end of the run, not with --out -",
    ),
    (
        ["--out", "runs/x/index.jsonl", "--agentv-run", "runs/x"],
        "error: --agentv-run's index.jsonl runs/x/index.jsonl is also --out: each output needs a path of its own",
    ),
    (
        ["--agentv-run", "."],
        "error: --agentv-run . is a folder with other files in it and no index.jsonl: not an AgentV run folder",
    ),
    (["--agentv-run", "dataset.yaml"], "error: --agentv-run dataset.yaml is not a folder"),
]


@pytest.mark.parametrize(("args", "message"), CLI_ERRORS, ids=["stdout", "out-in-folder", "project-folder", "a-file"])
def test_folders_that_cannot_take_a_run_are_usage_errors(run: Workspace, args: list[str], message: str) -> None:
    before = sorted(str(p) for p in Path(".").rglob("*"))
    result = invoke("eval", "dataset.yaml", *args)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[0] == message
    assert sorted(str(p) for p in Path(".").rglob("*")) == before  # nothing ran, nothing was written


MALFORMED = [
    (
        '{"test_id": "a", "score": 1}\n{"test_id": "b", "score": "high"}\n',
        "2: test 'b': missing or invalid score (a number)",
    ),
    (
        '{"test_id": "a", "score": 1}\n\n{"test_id": "b", "score": 1, "scores": [1]}\n',
        "3: test 'b': scores[0] is not an object",
    ),
    ('{"test_id": "a", "score": 1}\n{"test_id": "b", "score": 1\n', "2: not JSON: "),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED, ids=["score-string", "score-entry", "cut-short"])
@pytest.mark.parametrize("command", ["compare", "metrics", "report"])
def test_a_malformed_agentv_row_is_a_usage_error_at_its_line(
    ws: Workspace, text: str, message: str, command: str
) -> None:
    ws.file("bad/index.jsonl", text)
    ws.file("good/index.jsonl", '{"test_id": "a", "score": 1}\n')
    result = invoke(command, *(["good", "bad"] if command == "compare" else ["bad"]))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: bad/index.jsonl:{message}")
    assert "hint: pass a results file `agentv eval` wrote, or an AgentV run folder" in result.output
    assert not Path("bad/report.html").exists()


def test_hostile_case_ids_stay_in_the_folder(ws: Workspace) -> None:
    ids = ["../escape", "..", "a/b", "line\nbreak", "[bold]x[/bold]", "y" * 400]
    cases = "".join(
        f"  - id: {json.dumps(case_id)}\n    input_messages: [{{role: user, content: hi}}]\n"
        f"    expected_messages: [{{role: assistant, content: {{a: 1}}}}]\n"
        for case_id in ids
    )
    ws.dataset(f"execution:\n  evaluators: [{{type: field_accuracy, fields: [{{path: a}}]}}]\nevalcases:\n{cases}")
    ws.targets("targets:\n  - name: default\n    provider: mock\n")
    result = invoke("eval", "dataset.yaml", "--dry-run", "--out", "out.jsonl", "--agentv-run", "box/run")
    assert result.exit_code == 0, result.output
    outside = [
        p for p in Path(".").rglob("*") if p.is_file() and not p.resolve().is_relative_to(Path("box/run").resolve())
    ]
    assert sorted(str(p) for p in outside) == [
        ".agentv/targets.yaml",
        "dataset.yaml",
        "out.jsonl",
        "out.jsonl.meta.json",
    ]
    assert [row["test_id"] for row in index_rows(Path("box/run"))] == ids
    assert invoke("compare", "out.jsonl", "box/run").exit_code == 0
