"""The run manifest: written beside every results file, hashes that are stable and change when
an input changes, secrets masked, errors of a bad manifest in words."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.report.manifest import ManifestError, manifest_path, read_manifest
from tests.conftest import Workspace

SECRET = "sk-manifest-SECRET-9f8e7d6c"

THEIRS = "<library's words>"
"""In an expected message, stands for words a library writes (json, pydantic), which any release
of it may change: the test pins agentv's part around them, never theirs."""


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected` exactly, each THEIRS in it standing for some (non-empty) text."""
    return re.fullmatch(".+".join(map(re.escape, expected.split(THEIRS))), actual, re.DOTALL) is not None


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def project(ws: Workspace, threshold: float = 0.85) -> None:
    ws.file("judge.py", "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': 1}))\n")
    ws.file("answer.json", json.dumps({"name": "ACME"}))
    ws.targets(
        f"""
        targets:
          - name: t
            provider: cli
            command_template: "{sys.executable} -c \\"print(open('answer.json').read())\\""
            env: {{API_TOKEN: "${{{{ MANIFEST_TOKEN }}}}"}}
        """
    )
    ws.dataset(
        f"""
        execution:
          target: t
          evaluators:
            - {{type: field_accuracy, fields: [{{path: name, match: fuzzy, threshold: {threshold}}}]}}
            - {{type: code_judge, name: j, script: [{sys.executable}, judge.py]}}
        evalcases:
          - id: c1
            input: go
            expected_output: {{name: ACME}}
          - id: c2
            input: go
            expected_output: {{name: ACME}}
        """
    )


def run(ws: Workspace, monkeypatch: pytest.MonkeyPatch, out: str = "out.jsonl") -> dict:
    monkeypatch.setenv("MANIFEST_TOKEN", SECRET)
    result = invoke("eval", "dataset.yaml", "--out", out, "--threshold", "0.5")
    assert result.exit_code == 0, result.output
    return json.loads(manifest_path(ws.root / out).read_text())


def test_every_run_writes_a_manifest_and_stamps_its_rows(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    project(ws)
    manifest = run(ws, monkeypatch)
    rows = [json.loads(line) for line in (ws.root / "out.jsonl").read_text().splitlines()]
    assert {row["run_id"] for row in rows} == {manifest["run_id"]}
    assert manifest["status"] == "completed" and manifest["ended_at"] >= manifest["started_at"]
    assert manifest["dataset"]["case_ids"] == ["c1", "c2"] and manifest["dataset"]["cases"] == 2
    assert manifest["counts"] == {
        "selected": 2,
        "written": 2,
        "passed": 2,
        "partial": 0,
        "failed": 0,
        "target_errors": 0,
        "evaluator_errors": 0,
        "mean_score": 1.0,
    }
    assert manifest["gate"] == {"rule": "mean score >= 0.5", "outcome": "ok", "passed": True, "message": ""}
    assert sorted(info["type"] for info in manifest["evaluators"].values()) == ["code_judge", "field_accuracy"]
    assert list(manifest["files"]) == [str((ws.root / "judge.py").resolve())]
    assert manifest["options"]["threshold"] == 0.5
    assert manifest["tool"]["name"] == "agentv"


def test_no_secret_reaches_the_manifest(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    project(ws)
    run(ws, monkeypatch)
    text = manifest_path(ws.root / "out.jsonl").read_text()
    assert SECRET not in text
    assert json.loads(text)["target"]["config"]["env"] == {"API_TOKEN": "***"}


def test_hashes_are_stable_and_follow_their_inputs(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    project(ws)
    first = run(ws, monkeypatch, "a.jsonl")
    second = run(ws, monkeypatch, "b.jsonl")
    keys = ("evaluators_sha256", "files", "target", "case_evaluators")
    assert [first[k] for k in keys] == [second[k] for k in keys]
    assert first["dataset"]["sha256"] == second["dataset"]["sha256"] and first["run_id"] != second["run_id"]

    monkeypatch.setenv("MANIFEST_TOKEN", "another-secret-value-123")  # a new key is not a new target
    assert run(ws, monkeypatch, "c.jsonl")["target"]["sha256"] == first["target"]["sha256"]

    ws.file("judge.py", "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': 1.0}))\n")
    changed_judge = run(ws, monkeypatch, "d.jsonl")
    assert changed_judge["files"] != first["files"] and changed_judge["evaluators_sha256"] == first["evaluators_sha256"]

    project(ws, threshold=0.9)  # one evaluator option changed
    changed = run(ws, monkeypatch, "e.jsonl")
    assert changed["evaluators_sha256"] != first["evaluators_sha256"]
    assert changed["dataset"]["sha256"] != first["dataset"]["sha256"]


def test_jsonl_on_stdout_has_no_manifest(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    project(ws)
    monkeypatch.setenv("MANIFEST_TOKEN", SECRET)
    result = invoke("eval", "dataset.yaml", "--out", "-")
    assert result.exit_code == 0, result.output
    assert list(ws.root.glob("**/*.meta.json")) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(None, "no run manifest beside {r} (looked for {m})", id="missing"),
        pytest.param(
            "{not json",
            "{m} is not JSON (" + THEIRS + "): it was edited or cut short",
            id="not-json",
        ),
        pytest.param('{"run_id": "x"}', "{m} is not a run manifest: tool: " + THEIRS, id="not-a-manifest"),
        pytest.param(
            "[]",
            "{m} is not a run manifest: (top level): " + THEIRS,
            id="a-list",
        ),
    ],
)
def test_a_bad_manifest_is_said_in_words(tmp_path: Path, content: str | None, message: str) -> None:
    results = tmp_path / "run.jsonl"
    if content is not None:
        manifest_path(results).write_text(content)
    with pytest.raises(ManifestError) as caught:
        read_manifest(results)
    expected = message.format(r=results, m=manifest_path(results))
    assert matches(expected, str(caught.value)), str(caught.value)


def test_a_manifest_round_trips(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    project(ws)
    written = run(ws, monkeypatch)
    assert read_manifest(ws.root / "out.jsonl").model_dump(mode="json") == written


@pytest.mark.parametrize(
    "per_case",
    [
        pytest.param({}, id="empty"),
        pytest.param({"c1": "a" * 64}, id="one"),
        pytest.param({"b": "2", "a": "1", "B": "3", "é": "4", "\U0001f600": "5", "\uffff": "6"}, id="code-point-order"),
        pytest.param({'q"uote\\d': "x", "ctl\x00\x1f\n": "y", "sep\u2028": 'v"\\'}, id="escaped"),
    ],
)
def test_the_per_case_map_is_hashed_as_canonical_json(per_case: dict[str, str]) -> None:
    from agentv_py.loading.fingerprint import canonical_sha256, mapping_sha256

    assert mapping_sha256(per_case) == canonical_sha256(per_case)  # manifests of older runs compare equal


def test_a_manifest_is_written_as_json_dump_writes_it_and_read_back_equal(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentv_py.report.manifest import write_manifest

    project(ws)
    run(ws, monkeypatch)
    manifest = read_manifest(ws.root / "out.jsonl")
    ids = [f"case-{n}" for n in range(2500)] + ['odd "id"\u2028é']
    variants = {
        "as-run": manifest,
        "no-cases": manifest.model_copy(
            update={"case_evaluators": {}, "dataset": manifest.dataset.model_copy(update={"case_ids": []})}
        ),
        "many-cases": manifest.model_copy(
            update={
                "case_evaluators": {case_id: "ab"[n % 2] * 64 for n, case_id in enumerate(ids)},
                "dataset": manifest.dataset.model_copy(update={"case_ids": ids}),
            }
        ),
        "map-in-another-order": manifest.model_copy(
            update={
                "case_evaluators": {"c2": "x", "c1": "y"},
                "dataset": manifest.dataset.model_copy(update={"case_ids": ["c1", "c2"]}),
            }
        ),
    }
    for name, variant in variants.items():
        results = tmp_path / f"{name}.jsonl"
        write_manifest(manifest_path(results), variant)
        expected = json.dumps(variant.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        assert manifest_path(results).read_text(encoding="utf-8") == expected, name
        back = read_manifest(results)
        assert back == variant, name
        assert list(back.case_evaluators) == list(variant.case_evaluators), name
        assert len({id(value) for value in back.case_evaluators.values()}) <= 2, name  # one string per hash
