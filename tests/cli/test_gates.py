"""`gates:` in the dataset and `--baseline/--max-drop`: real runs, the exact printed gate lines and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app

pytestmark = pytest.mark.usefixtures("both_chunkings")


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def gate_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("gate")]


GOOD = {"a": 1, "b": 2}
CASES = [
    ("c1", GOOD, GOOD),
    ("c2", GOOD, GOOD),
    ("c3", {"a": 1, "b": 9}, GOOD),  # b wrong: FP+FN
    ("c4", GOOD, GOOD),
]


def with_gates(ws, gates: str, cases=CASES) -> Path:
    """The shared 4-case dataset (3 pass, one misses b) with `gates` YAML on top."""
    ws.cli_target("sh {FILES}")
    path = ws.cases_dataset([(i, f"echo '{json.dumps(answer)}'", exp) for i, answer, exp in cases])
    path.write_text(gates + "\n" + path.read_text())
    return path


def test_every_gate_is_printed_with_its_value_and_gate_passed(ws):
    with_gates(
        ws,
        "gates:\n  min_mean_score: 0.8\n  min_pass_rate: 0.75\n"
        "  evaluators: {field_accuracy: {min_mean: 0.5}}\n  fields: {a: {recall: 1.0}, b: {f1: 0.7}}",
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert gate_lines(result.stderr) == [
        "gate mean score: 0.875 (>= 0.8) passed",
        "gate pass rate: 0.750 (>= 0.75) passed",
        "gate evaluator field_accuracy mean: 0.875 (>= 0.5) passed",
        "gate field a recall: 1.000 (>= 1) passed",
        "gate field b f1: 0.750 (>= 0.7) passed",
        "gate passed",
    ]
    manifest = json.loads(Path("out.jsonl.meta.json").read_text())
    assert manifest["gate"]["outcome"] == "ok"
    assert manifest["gate"]["rule"] == "every gate holds (5 gates)"
    assert [(c["name"], c["value"], c["passed"]) for c in manifest["gate"]["checks"]][-1] == ("field b f1", 0.75, True)


def test_a_failed_field_gate_exits_1_and_says_which(ws):
    with_gates(ws, "gates:\n  fields: {b: {recall: 0.99, precision: 0.5}}")
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--summary-md", "summary.md")
    assert result.exit_code == 1, result.output
    assert gate_lines(result.stderr) == [
        "gate field b precision: 0.750 (>= 0.5) passed",
        "gate field b recall: 0.750 (>= 0.99) failed",
        "gate failed: 1 gate of 2 failed",
    ]
    summary = Path("summary.md").read_text()
    assert "**❌ gate failed** (every gate holds (2 gates)): gate failed: 1 gate of 2 failed" in summary
    assert "| field b recall | 0.750 | >= 0.99 | ❌ failed |" in summary


def test_threshold_is_one_more_gate_beside_the_datasets(ws):
    with_gates(ws, "gates:\n  min_pass_rate: 0.5")
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--threshold", "0.9")
    assert result.exit_code == 1, result.output
    assert gate_lines(result.stderr) == [
        "gate mean score: 0.875 (>= 0.9) failed",
        "gate pass rate: 0.750 (>= 0.5) passed",
        "gate failed: 1 gate of 2 failed",
    ]


def test_a_target_error_still_exits_4_with_gates(ws):
    with_gates(ws, "gates:\n  min_pass_rate: 0.1", cases=[*CASES[:1], ("boom", "x", GOOD)])
    Path("fx/boom.json").write_text("exit 3")
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0")
    assert result.exit_code == 4, result.output
    assert result.stderr.splitlines()[-1] == "1 case had a target error (the target call failed)"


def test_baseline_gates_the_drop_of_the_mean_and_of_each_fields_f1(ws):
    with_gates(ws, "", cases=[("c1", GOOD, GOOD), ("c2", GOOD, GOOD)])
    assert invoke("eval", "dataset.yaml", "--out", "base.jsonl").exit_code == 0
    Path("fx/c2.json").write_text('echo \'{"a": 1, "b": 9}\'')  # b breaks on c2
    result = invoke("eval", "dataset.yaml", "--out", "new.jsonl", "--baseline", "base.jsonl", "--max-drop", "0.3")
    assert result.exit_code == 1, result.output
    assert gate_lines(result.stderr) == [
        "gate cases pass -> not pass vs baseline: 1 (<= 0) failed: c2",
        "gate mean score drop vs baseline: 0.250 (<= 0.3) passed",
        "gate field a f1 drop vs baseline: 0.000 (<= 0.3) passed",
        "gate field b f1 drop vs baseline: 0.500 (<= 0.3) failed",
        "gate failed: 2 gates of 4 failed",
    ]
    manifest = json.loads(Path("new.jsonl.meta.json").read_text())
    assert manifest["options"]["baseline"] == "base.jsonl"
    assert manifest["options"]["max_drop"] == 0.3
    assert manifest["options"]["allow_flips"] == 0
    same = invoke("eval", "dataset.yaml", "--out", "again.jsonl", "--baseline", "new.jsonl")
    assert same.exit_code == 0, same.output
    assert gate_lines(same.stderr)[-1] == "gate passed"


def test_baseline_fails_a_case_that_no_longer_passes_even_when_the_mean_rises(ws):
    """compare's golden rule: a case that passed in BASE and does not now fails the gate, however the
    other cases and the mean did; --allow-flips N loosens it explicitly."""
    with_gates(ws, "", cases=[("c1", GOOD, GOOD), ("c2", {"a": 1, "b": 0}, GOOD), ("c3", {"a": 0, "b": 0}, GOOD)])
    assert invoke("eval", "dataset.yaml", "--out", "base.jsonl").exit_code == 1  # c2, c3 fail: mean 0.5
    Path("fx/c1.json").write_text('echo \'{"a": 1, "b": 9}\'')  # c1: pass -> fail
    for case in ("c2", "c3"):
        Path(f"fx/{case}.json").write_text(f"echo '{json.dumps(GOOD)}'")  # fixed
    result = invoke("eval", "dataset.yaml", "--out", "new.jsonl", "--baseline", "base.jsonl", "--max-drop", "1")
    assert result.exit_code == 1, result.output
    assert gate_lines(result.stderr)[0] == "gate cases pass -> not pass vs baseline: 1 (<= 0) failed: c1"
    assert "gate mean score drop vs baseline: -0.333 (<= 1) passed" in gate_lines(result.stderr)
    allowed = invoke(
        "eval", "dataset.yaml", "--out", "n2.jsonl", "--baseline", "base.jsonl", "--max-drop", "1", "--allow-flips", "1"
    )
    assert allowed.exit_code == 0, allowed.output
    assert gate_lines(allowed.stderr)[0] == "gate cases pass -> not pass vs baseline: 1 (<= 1) passed: c1"
    (check, *_) = json.loads(Path("n2.jsonl.meta.json").read_text())["gate"]["checks"]
    assert (check["value"], check["shown"], check["detail"], check["passed"]) == (1, "1", "c1", True)


def test_a_case_id_in_a_gate_line_cannot_drive_the_terminal(ws):
    evil = "evil\n\x1b[31mRED\u202e"
    with_gates(ws, "", cases=[("c1", GOOD, GOOD)])
    text = Path("dataset.yaml").read_text().replace("id: c1", f"id: {json.dumps(evil)}")
    Path("dataset.yaml").write_text(text)
    assert invoke("eval", "dataset.yaml", "--out", "base.jsonl").exit_code == 0
    Path("fx/c1.json").write_text('echo \'{"a": 1, "b": 9}\'')
    result = invoke("eval", "dataset.yaml", "--out", "new.jsonl", "--baseline", "base.jsonl", "--max-drop", "1")
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("gate cases")]
    assert line == "gate cases pass -> not pass vs baseline: 1 (<= 0) failed: evil\\n\\x1b[31mRED\\u202e"
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr


def test_rescore_gates_against_a_baseline_and_its_manifest_records_every_gate(ws):
    """Tightening an evaluator and re-scoring: --baseline says which field's F1 the change cost."""
    with_gates(ws, "gates:\n  min_pass_rate: 0.5", cases=[("c1", GOOD, GOOD), ("c2", {"a": 1, "b": 2.5}, GOOD)])
    text = Path("dataset.yaml").read_text()
    lenient = text.replace("{path: b}", "{path: b, match: numeric_tolerance, tolerance: 1}")
    assert lenient != text
    Path("dataset.yaml").write_text(lenient)
    assert invoke("eval", "dataset.yaml", "--out", "base.jsonl").exit_code == 0
    Path("dataset.yaml").write_text(text)  # exact again: c2's b (2.5 for 2) now misses
    result = invoke("rescore", "base.jsonl", "--out", "strict.jsonl", "--baseline", "base.jsonl", "--max-drop", "0.1")
    assert result.exit_code == 1, result.output
    assert gate_lines(result.stderr) == [
        "gate pass rate: 0.500 (>= 0.5) passed",
        "gate cases pass -> not pass vs baseline: 1 (<= 0) failed: c2",
        "gate mean score drop vs baseline: 0.250 (<= 0.1) failed",
        "gate field a f1 drop vs baseline: 0.000 (<= 0.1) passed",
        "gate field b f1 drop vs baseline: 0.500 (<= 0.1) failed",
        "gate failed: 3 gates of 5 failed",
    ]
    manifest = json.loads(Path("strict.jsonl.meta.json").read_text())
    assert (manifest["options"]["baseline"], manifest["options"]["max_drop"]) == ("base.jsonl", 0.1)
    assert manifest["gate"]["outcome"] == "gate_failed"
    assert [(c["name"], c["passed"]) for c in manifest["gate"]["checks"]] == [
        ("pass rate", True),
        ("cases pass -> not pass vs baseline", False),
        ("mean score drop vs baseline", False),
        ("field a f1 drop vs baseline", True),
        ("field b f1 drop vs baseline", False),
    ]
    lone = invoke("rescore", "base.jsonl", "--out", "x.jsonl", "--max-drop", "0.1")
    assert lone.exit_code == 2 and lone.stderr.splitlines()[0] == "error: --max-drop goes with --baseline BASE.jsonl"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--max-drop", "0.1"],
            "error: --max-drop goes with --baseline BASE.jsonl",
            id="max-drop-without-baseline",
        ),
        pytest.param(
            ["--baseline", "nowhere.jsonl"],
            "error: --baseline results file not found: nowhere.jsonl",
            id="missing-baseline",
        ),
        pytest.param(
            ["--allow-flips", "1"],
            "error: --allow-flips goes with --baseline BASE.jsonl",
            id="allow-flips-without-baseline",
        ),
        pytest.param(
            ["--baseline", "base.jsonl", "--allow-flips", "-1"],
            "error: invalid --allow-flips -1: a number of cases, 0 or more",
            id="negative-allow-flips",
        ),
    ],
)
def test_bad_baseline_options_exit_2(ws, args, message):
    with_gates(ws, "", cases=CASES[:1])
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == message
    assert not Path("out.jsonl").exists() or Path("out.jsonl").read_text() == ""


def test_a_baseline_of_another_dataset_is_refused(ws):
    with_gates(ws, "", cases=CASES[:1])
    other = ws.dataset(Path("dataset.yaml").read_text(), name="other.yaml")
    assert invoke("eval", str(other), "--out", "base.jsonl").exit_code == 0
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--baseline", "base.jsonl")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == (
        f"error: --baseline base.jsonl is a run of another dataset: 'other' ({other.resolve()}), "
        f"this run is 'dataset' ({Path('dataset.yaml').resolve()})"
    )


def test_a_gate_on_a_field_nobody_scores_is_a_located_load_error(ws):
    with_gates(ws, "gates:\n  fields:\n    invoice_number: {recall: 0.99}", cases=CASES[:1])
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[1] == (
        "  dataset.yaml:3: gates.fields.invoice_number: names field 'invoice_number', which no field_accuracy "
        "evaluator scores (fields scored: a, b)"
    )


def test_a_gate_on_an_evaluator_no_case_runs_is_a_located_load_error(ws):
    with_gates(ws, "gates:\n  evaluators:\n    field_acuracy: {min_mean: 0.9}\n    latency: {min_mean: 1}", CASES[:1])
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "dataset.yaml:3: gates.evaluators.field_acuracy: names evaluator 'field_acuracy', which no case runs "
        "(did you mean 'field_accuracy'?); evaluators: field_accuracy",
        "dataset.yaml:4: gates.evaluators.latency: names evaluator 'latency', which no case runs; "
        "evaluators: field_accuracy",
        "2 problems found",
    ]


@pytest.mark.parametrize(
    ("gates", "expected"),
    [
        pytest.param("gates: {min_pass_rte: 0.5}", "did you mean 'min_pass_rate'?", id="unknown-key"),
        pytest.param("gates: {min_mean_score: 1.5}", "less than or equal to 1", id="above-one"),
        pytest.param("gates: {fields: {a: {recal: 0.5}}}", "did you mean 'recall'?", id="unknown-metric"),
    ],
)
def test_bad_gates_are_load_errors(ws, gates, expected):
    with_gates(ws, gates, cases=CASES[:1])
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2, result.output
    assert "dataset.yaml:1: gates" in result.stderr
    assert expected in result.stderr


def test_rescore_applies_the_datasets_gates(ws):
    path = with_gates(ws, "")
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl").exit_code == 1  # no gates: c3 did not pass
    path.write_text("gates:\n  fields: {b: {recall: 0.9}}\n" + path.read_text())
    result = invoke("rescore", "run.jsonl", "--out", "rescored.jsonl")
    assert result.exit_code == 1, result.output
    assert gate_lines(result.stderr) == [
        "gate field b recall: 0.750 (>= 0.9) failed",
        "gate failed: 1 gate of 1 failed",
    ]
