"""`agentv plan-size`: a plan from one run or from two paired runs, exit codes, bad input."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_eval import invoke
from tests.cli.test_metrics import worked_example_file


def test_a_plan_from_one_run_says_the_five_documents_are_not_enough(tmp_path):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    result = invoke("plan-size", path, "--detect", "0.05", "-f", "json")
    assert result.exit_code == 1, result.output  # some metric needs more documents
    data = json.loads(result.stdout)
    plans = {p["metric"]: p for p in data["plans"]}
    assert list(plans)[0] == "mean score" and "F1 gross_total" in plans
    assert all(p["documents"] == 5 and p["needed"] > 5 and not p["enough"] for p in plans.values())
    assert plans["F1 gross_total"]["measured"] == "one run (runs assumed independent)"
    table = invoke("plan-size", path, "--detect", "0.05", "--field", "gross_total")
    assert table.exit_code == 1 and "F1 gross_total" in table.stdout and "F1 currency" not in table.stdout


def test_a_drop_the_run_can_detect_exits_0(tmp_path):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    result = invoke("plan-size", path, "--detect", "0.99", "--field", "supplier.name", "-f", "json")
    assert result.exit_code == 0, result.output
    assert all(p["enough"] for p in json.loads(result.stdout)["plans"])


def test_two_paired_runs_measure_the_difference(ws):
    ws.cli_target("cat {FILES}")
    cases = [(f"c{i}", '{"a": 1}', {"a": 1}) for i in range(1, 11)]
    ws.cases_dataset(cases)
    assert invoke("eval", "dataset.yaml", "--out", "a.jsonl").exit_code == 0
    ws.cases_dataset([(c, '{"a": 2}' if c in ("c1", "c2") else a, e) for c, a, e in cases])
    assert invoke("eval", "dataset.yaml", "--out", "b.jsonl").exit_code == 1
    result = invoke("plan-size", "a.jsonl", "--against", "b.jsonl", "--detect", "0.1", "-f", "json")
    plans = json.loads(result.stdout)["plans"]
    assert plans[0]["metric"] == "mean score" and plans[0]["measured"] == "paired runs"
    assert plans[0]["sd"] == pytest.approx(0.421637, abs=1e-6)  # stdev of (0,...,0,-1,-1) over 10 cases


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--detect", "0"], "error: --detect 0 is not between 0 and 1"),
        (["--detect", "1.5"], "error: --detect 1.5 is not between 0 and 1"),
        (["--detect", "0.1", "--power", "1"], "error: --power 1 is not between 0 and 1"),
        (["--detect", "0.1", "--alpha", "0"], "error: --alpha 0 is not between 0 and 1"),
        (["--detect", "0.1", "--field", "nope"], "error: no field named nope in"),
    ],
)
def test_bad_options_exit_2(tmp_path, args, message):
    path = str(worked_example_file(tmp_path / "run.jsonl"))
    result = invoke("plan-size", path, *args)
    assert result.exit_code == 2 and result.stderr.startswith(message), result.stderr


def test_a_run_with_one_case_cannot_give_a_spread(ws):
    ws.cli_target("cat {FILES}")
    ws.cases_dataset([("c1", '{"a": 1}', {"a": 1})])
    invoke("eval", "dataset.yaml", "--out", "one.jsonl")
    result = invoke("plan-size", "one.jsonl", "--detect", "0.05")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: plan-size needs at least 2 scored cases in one.jsonl to measure their spread, found 1"
    )


def test_a_missing_file_exits_2(tmp_path):
    result = invoke("plan-size", str(tmp_path / "missing.jsonl"), "--detect", "0.05")
    assert result.exit_code == 2 and "RESULTS results file" in result.stderr
