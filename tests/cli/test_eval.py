"""`agentv eval` as a program: exit codes, output streams, rows, retries, interrupts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import REPO_ROOT, script, stderr_of, wait_dead

ROW_KEYS = {
    "timestamp",
    "eval_id",
    "dataset",
    "conversation_id",
    "target",
    "status",
    "score",
    "verdict",
    "hits",
    "misses",
    "reasoning",
    "candidate_answer",
    "evaluator_results",
    "attempts",
    "duration_ms",
    "trace",
    "run_id",
}


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def rows(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def fields_of(row: dict) -> dict[str, dict]:
    """The fields of the row's one field_accuracy result, by path."""
    [result] = row["evaluator_results"]
    return {entry["path"]: entry for entry in result["details"]["fields"]}


@pytest.fixture
def sh_target(ws):
    """A cli target that runs each case's input file as a shell script (its behaviour)."""
    ws.cli_target("sh {FILES}")
    return ws


def test_all_pass_exits_0_and_writes_one_row_per_case(sh_target):
    sh_target.cases_dataset(
        [("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}), ("c2", 'echo \'{"a": 3, "b": 4}\'', {"a": 3, "b": 4})]
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    written = rows("out.jsonl")
    assert sorted(r["eval_id"] for r in written) == ["c1", "c2"]
    assert all(set(r) == ROW_KEYS and r["status"] == "ok" and r["score"] == 1.0 for r in written)
    assert "Results written to: out.jsonl" in result.stdout
    assert "Totals: 2 cases  2 passed  0 partial  0 failed  0 target errors" in result.stdout


def test_a_failing_case_exits_1(sh_target):
    sh_target.cases_dataset(
        [("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}), ("c2", 'echo \'{"a": 0, "b": 0}\'', {"a": 1, "b": 2})]
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 1
    assert "gate failed: 1 of 2 cases did not pass" in result.stderr


def test_threshold_gates_on_the_mean(sh_target):
    sh_target.cases_dataset(
        [("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}), ("c2", 'echo \'{"a": 1, "b": 0}\'', {"a": 1, "b": 2})]
    )
    assert invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--threshold", "0.75").exit_code == 0  # mean 0.75
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--threshold", "0.8")
    assert result.exit_code == 1
    assert "gate failed: mean score 0.750 < threshold 0.8" in result.stderr


def test_errored_cases_exit_4_and_still_get_rows(sh_target):
    sh_target.cases_dataset(
        [
            ("good", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}),
            ("bad", "echo '{\"a\": 0}'", {"a": 1, "b": 2}),
            ("crash", "echo 'extractor exploded' >&2; exit 7", {"a": 1}),
            ("garbage", "echo 'no json at all'", {"a": 1}),
            ("silent", "true", {"a": 1}),
        ]
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0", "--workers", "1")
    assert result.exit_code == 4  # takes precedence over the failing case
    assert result.stderr.splitlines()[-1] == "2 cases had a target error (the target call failed)"
    assert "Totals: 5 cases  1 passed  0 partial  2 failed  2 target errors" in result.stdout
    progress = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert progress[2] == "[3/5] error   0.000  crash  target error: target 't' failed: exit code 7: extractor exploded"
    assert progress[4] == "[5/5] error   0.000  silent  target error: target 't' returned an empty answer (stdout)"
    by_id = {r["eval_id"]: r for r in rows("out.jsonl")}
    assert set(by_id) == {"good", "bad", "crash", "garbage", "silent"}
    assert by_id["crash"]["status"] == "error" and by_id["crash"]["score"] == 0.0
    assert by_id["crash"]["error"] == "target 't' failed: exit code 7: extractor exploded"
    assert by_id["crash"]["evaluator_results"] == []
    assert by_id["silent"]["error"] == "target 't' returned an empty answer (stdout)"
    assert by_id["garbage"]["status"] == "ok" and by_id["garbage"]["misses"] == [
        "Failed to parse candidate answer as JSON"
    ]
    assert "error" not in by_id["good"]


def test_retries_record_attempts(ws, tmp_path):
    state = tmp_path / "state"
    ws.cli_target(f"sh {script('flaky.sh')} {state} {{FILES}}")
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    assert invoke("eval", "dataset.yaml", "--out", "out.jsonl").exit_code == 0
    assert rows("out.jsonl")[0]["attempts"] == 2
    state.unlink()
    assert invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--max-retries", "0").exit_code == 4
    assert rows("out.jsonl")[0]["error"] == "target 't' failed: exit code 1: transient failure"


def test_out_dash_writes_only_jsonl_to_stdout(sh_target):
    sh_target.cases_dataset([("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2})])
    result = invoke("eval", "dataset.yaml", "--out", "-")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["eval_id"] == "c1"
    assert "Totals:" in result.stderr and "Results written to: <stdout>" in result.stderr


def test_default_results_path(sh_target):
    sh_target.cases_dataset([("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2})], name="invoices.yaml")
    assert invoke("eval", "invoices.yaml").exit_code == 0
    written = list((sh_target.root / ".agentv" / "results").glob("invoices_*.jsonl"))
    assert len(written) == 1 and len(rows(written[0])) == 1


def test_eval_id_globs(sh_target):
    sh_target.cases_dataset(
        [(f"inv-{i}", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2}) for i in range(4)] + [("other", "exit 1", {})]
    )
    assert invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--eval-id", "inv-[01]", "-e", "inv-3").exit_code == 0
    assert sorted(r["eval_id"] for r in rows("o.jsonl")) == ["inv-0", "inv-1", "inv-3"]
    result = invoke("eval", "dataset.yaml", "--eval-id", "nope*")
    assert result.exit_code == 2
    assert "error: no case id matches --eval-id nope*" in result.stderr


def test_dry_run_needs_no_target(ws):
    ws.cases_dataset([("c1", "unused", {"a": 1, "b": 2})], target=None)
    result = invoke("eval", "dataset.yaml", "--dry-run", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    assert rows("o.jsonl")[0]["target"] == "dry-run"


def test_invalid_dataset_exits_2_without_traceback(ws):
    ws.dataset("evalcases:\n  - id: c1\n    expected_mesages: []\n")
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert "dataset.yaml:3: evalcases[0].expected_mesages: unknown key 'expected_mesages'" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_target_exits_2(sh_target):
    sh_target.cases_dataset([("c1", "true", {"a": 1})])
    result = invoke("eval", "dataset.yaml", "--target", "nope")
    assert result.exit_code == 2
    assert (
        "error: target 'nope' (from --target) is not defined in .agentv/targets.yaml, the targets file read for "
        "dataset.yaml. Available targets: t\n"
        "hint: pass --target NAME, set execution.target in the dataset, or pass --targets PATH" in result.stderr
    )


def test_no_targets_file_exits_2_with_hint(ws):
    ws.cases_dataset([("c1", "true", {"a": 1})], target=None)
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert "error: no targets file found" in result.stderr and "hint: pass --targets PATH" in result.stderr


def test_failing_healthcheck_exits_2(ws):
    ws.cli_target("cat {FILES}", extra="healthcheck:\n  command_template: sh -c 'echo model server down >&2; exit 1'")
    ws.cases_dataset([("c1", "{}", {"a": 1})])
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert "error: healthcheck of target 't' failed: exit code 1: model server down" in result.stderr


@pytest.mark.parametrize("args", [["--workers", "0"], ["--workers", "65"], ["--bogus"], ["--threshold", "2"]])
def test_usage_errors_exit_2(sh_target, args):
    sh_target.cases_dataset([("c1", "true", {"a": 1})])
    assert invoke("eval", "dataset.yaml", *args).exit_code == 2


def test_internal_error_exits_3_with_traceback(sh_target, monkeypatch):
    sh_target.cases_dataset([("c1", "true", {"a": 1})])

    def broken(request):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr("agentv_py.session.plan_eval", broken)
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 3
    assert "Traceback" in result.stderr and "RuntimeError: simulated bug" in result.stderr
    assert "internal error (this is a bug" in result.stderr


def test_verbose_lists_every_miss(sh_target):
    answer = "echo '{}'"
    sh_target.cases_dataset(
        [("c1", answer, dict.fromkeys("abcdef", 1))], fields="[" + ", ".join(f"{{path: {k}}}" for k in "abcdef") + "]"
    )
    short = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert "… 3 more (--verbose, or see" in short.stdout  # the rest of the line wraps: misses quote values
    full = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--verbose")
    assert "f (required, missing; expected 1, got nothing)" in full.stdout and "more (--verbose" not in full.stdout
    assert len(rows("o.jsonl")[0]["misses"]) == 6  # complete in JSONL either way


def test_help_lists_exit_codes():
    for args in (["--help"], ["eval", "--help"]):
        result = invoke(*args)
        assert result.exit_code == 0
        for line in (
            "0    gate passed",
            "2    usage or dataset/target configuration error",
            "4    a case had a target error",
            "130  interrupted",
        ):
            assert line in result.stdout


def _spawn_agentv(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "agentv_py", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_interrupt_keeps_finished_rows_and_exits_130(ws, tmp_path, sig):
    pids = tmp_path / "pids"
    pids.mkdir()
    ws.cli_target("sh {FILES}")
    fast = 'echo \'{"a": 1, "b": 2}\''
    slow = f"echo $$ > {pids}/$$; sleep 30"
    ws.cases_dataset(
        [("fast-1", fast, {"a": 1, "b": 2}), ("fast-2", fast, {"a": 1, "b": 2})]
        + [(f"slow-{i}", slow, {"a": 1}) for i in range(3)]
    )
    proc = _spawn_agentv(["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "5"], ws.root)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done = (ws.root / "out.jsonl").exists() and len((ws.root / "out.jsonl").read_text().splitlines()) >= 2
        if done and len(list(pids.iterdir())) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    stderr = stderr_of(proc, timeout=15)
    assert proc.returncode == 130, stderr.decode()
    written = rows(ws.root / "out.jsonl")  # every line is valid JSON
    assert sorted(r["eval_id"] for r in written) == ["fast-1", "fast-2"]
    for pid_file in pids.iterdir():
        assert wait_dead(int(pid_file.read_text()))


def test_python_dash_m_and_console_script_agree(ws):
    result = subprocess.run(
        [sys.executable, "-m", "agentv_py", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0 and result.stdout.startswith("agentv ")


def test_images_and_files_reach_the_command(ws):
    ws.file("scan.png", b"\x89PNG\r\n\x1a\n")
    ws.file("doc.json", "{}")
    ws.cli_target(
        f"python3 {script('argv_json.py')} --files {{FILES}} --images {{IMAGES}} --id {{EVAL_ID}}",
        extra='files_format: "{basename}"',
    )
    ws.dataset(
        """
        execution:
          target: t
          evaluators: [{type: field_accuracy, fields: [{path: argv}]}]
        evalcases:
          - id: c1
            input_messages:
              - role: user
                content:
                  - {type: file, value: doc.json}
                  - {type: image, value: scan.png}
            expected_output: {argv: [--files, doc.json, --images, scan.png, --id, c1]}
        """
    )
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, rows("o.jsonl")[0]["misses"]


JUDGES_DIR = REPO_ROOT / "tests" / "fixtures" / "judges"


def test_judge_details_round_trip_into_jsonl(sh_target):
    details = {"metrics": {"supplier.name": {"tp": 1, "fn": 0, "f1": None}}, "alignment": [[0, 1, 0.93]]}
    sh_target.file("judge.sh", f"cat >/dev/null; echo '{json.dumps({'score': 0.75, 'details': details})}'\n")
    sh_target.dataset(
        """
        execution:
          target: t
          evaluators: [{name: metrics, type: code_judge, script: [sh, judge.sh]}]
        evalcases:
          - id: c1
            input_messages: [{role: user, content: [{type: file, value: fx.sh}]}]
        """
    )
    sh_target.file("fx.sh", "echo '{}'")
    invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    result = rows("o.jsonl")[0]["evaluator_results"][0]
    assert (result["name"], result["score"], result["details"]) == ("metrics", 0.75, details)


def test_many_judges_run_concurrently_without_cross_talk(sh_target):
    cases = [(f"case-{i}", f"echo 'answer {i}'", {"i": i}) for i in range(40)]
    sh_target.cases_dataset(cases)
    text = (
        (sh_target.root / "dataset.yaml")
        .read_text()
        .replace(
            "{type: field_accuracy, fields: [{path: a}, {path: b}]}",
            f"{{type: code_judge, script: [python3, {JUDGES_DIR / 'by_id.py'}]}}",
        )
    )
    sh_target.file("dataset.yaml", text)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--workers", "8", "--threshold", "0")
    assert result.exit_code == 0, result.output
    written = rows("o.jsonl")
    assert len(written) == 40
    for row in written:
        i = int(row["eval_id"].split("-")[1])
        judged = row["evaluator_results"][0]
        assert judged["score"] == pytest.approx(i / 100)
        assert judged["details"] == {"eval_id": row["eval_id"], "answer": f"answer {i}\n"}


def test_example_judges_score_the_acme_case(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = invoke(
        "eval", "evals/invoice-extraction/dataset.yaml", "--eval-id", "invoice-002", "-e", "invoice-007", "--out", "-"
    )
    assert result.exit_code == 0, result.stderr
    by_id = {json.loads(line)["eval_id"]: json.loads(line) for line in result.stdout.splitlines()}
    fuzzy = by_id["invoice-002"]["evaluator_results"][1]
    assert (fuzzy["name"], fuzzy["score"]) == ("names_fuzzy", 1.0)
    assert fuzzy["hits"] == ["supplier.name: 86.7% >= 85%", "importer.name: 93.8% >= 90%"]
    summary = by_id["invoice-007"]["evaluator_results"][0]
    assert summary["name"] == "summary_similarity" and summary["score"] >= 0.85


def test_a_judge_that_cannot_run_exits_4(sh_target):
    sh_target.file("judge.sh", "cat >/dev/null; echo 'not json'\n")
    sh_target.cases_dataset([("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2})])
    text = (
        (sh_target.root / "dataset.yaml")
        .read_text()
        .replace(
            "{type: field_accuracy, fields: [{path: a}, {path: b}]}",
            "{type: field_accuracy, fields: [{path: a}, {path: b}]}\n"
            "    - {name: j, type: code_judge, script: [sh, judge.sh]}",
        )
    )
    sh_target.file("dataset.yaml", text)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 4
    assert "[1/1] fail    0.500  c1  evaluator error: j: code_judge 'j': stdout is not JSON: 'not json'" in (
        result.stderr.splitlines()
    )
    assert result.stderr.splitlines()[-1] == "1 case had an evaluator error (an evaluator could not run)"
    assert "Totals: 1 case  0 passed  0 partial  1 failed  0 target errors  1 evaluator error" in result.stdout
    row = rows("o.jsonl")[0]
    assert row["status"] == "ok" and row["score"] == 0.5  # the errored judge counts 0 in the mean
    assert row["misses"] == ["j: code_judge 'j': stdout is not JSON: 'not json'"]


def test_layout_detection_example(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = invoke("eval", "evals/layout-detection/dataset.yaml", "--out", "-")
    assert result.exit_code == 1  # page 3's signature is 36 px off: partial, by design
    by_id = {json.loads(line)["eval_id"]: json.loads(line) for line in result.stdout.splitlines()}
    regions = {r["name"]: r for r in by_id["page-1-invoice"]["evaluator_results"]}["regions"]
    assert (regions["details"]["tp"], regions["details"]["fp"], regions["details"]["fn"]) == (3, 1, 1)
    assert regions["misses"] == ["expected[3] (no box found)", "boxes[3] (spurious box)"]
    assert by_id["page-2-xywh"]["score"] == 1.0
    stamp = {r["name"]: r for r in by_id["page-3-rotated-stamp"]["evaluator_results"]}
    assert 0.85 < stamp["stamp_exact"]["score"] < stamp["stamp_bbox"]["score"] < 0.9
    assert stamp["signature"]["misses"] == ["signature_center (euclidean distance 36.1 > 15)"]


def test_a_long_dataset_name_still_gets_a_default_results_file(sh_target):
    """A 250-character dataset name used to make every eval without --out fail (name too long)."""
    sh_target.cases_dataset([("c1", 'echo \'{"a": 1, "b": 2}\'', {"a": 1, "b": 2})], name="d.yaml")
    Path("d.yaml").write_text(f"dataset: {'n' * 250}\n" + Path("d.yaml").read_text())
    result = invoke("eval", "d.yaml")
    assert result.exit_code == 0, result.output
    (written,) = (sh_target.root / ".agentv" / "results").glob("n*.jsonl")
    assert len(written.name) < 150 and written.name.startswith("n" * 71 + "-")
    assert Path(str(written) + ".meta.json").is_file() and len(rows(written)) == 1
