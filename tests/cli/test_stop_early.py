"""`agentv eval --stop-early` end to end with a real cli target: the cases in a random order, the
run stopping once the gate is settled (the mean against --threshold by the confidence sequence;
the default gate at the first case that does not pass), the manifest's record, --resume running
the rest, and the runs it refuses."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_eval import invoke, rows


def dataset(ws, cases: int, wrong: set[int] = frozenset()) -> None:
    ws.cli_target("cat {FILES}")
    ws.cases_dataset(
        [(f"c{i:03d}", {"a": 2 if i in wrong else 1}, {"a": 1}) for i in range(cases)], fields="[{path: a}]"
    )


def manifest(path: str) -> dict:
    return json.loads((__import__("pathlib").Path(path + ".meta.json")).read_text())


def test_a_clear_threshold_gate_stops_after_a_few_cases_and_resume_runs_the_rest(ws):
    dataset(ws, 200, wrong={3, 50})  # mean 0.99: far above 0.5
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--stop-early", "--threshold", "0.5", "-w", "1")
    assert result.exit_code == 0, result.output
    ran = rows("o.jsonl")
    record = manifest("o.jsonl")["stopped_early"]
    assert 1 < len(ran) < 40 and record["run"] == len(ran) and record["cases"] == 200
    assert record["decided"] == "above" and record["low"] >= 0.5 and record["seed"] == 20260227
    said = " ".join(result.stdout.split())
    assert f"Stopped early after {len(ran)} of 200 cases: the mean score of all 200 cases is >= 0.5 at 95%" in said
    ids = [row["eval_id"] for row in ran]
    assert ids != sorted(ids)  # a random order, not the dataset's
    invoke("eval", "dataset.yaml", "--out", "again.jsonl", "--stop-early", "--threshold", "0.5", "-w", "1")
    assert [row["eval_id"] for row in rows("again.jsonl")] == ids  # seeded: the same order
    resumed = invoke("eval", "dataset.yaml", "--resume", "o.jsonl")
    assert resumed.exit_code == 1, resumed.output  # every case now: two did not pass
    assert len(rows("o.jsonl")) == 200 and "stopped_early" not in manifest("o.jsonl")


def test_a_mean_settled_below_the_threshold_fails_the_gate(ws):
    dataset(ws, 100, wrong=set(range(0, 100, 2)))  # mean 0.5: far below 0.9
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--stop-early", "--threshold", "0.9", "-w", "1")
    assert result.exit_code == 1, result.output
    assert manifest("o.jsonl")["stopped_early"]["decided"] == "below" and len(rows("o.jsonl")) < 100
    assert "gate failed: stopped early after" in result.stderr + result.stdout


def test_the_default_gate_stops_at_the_first_case_that_does_not_pass(ws):
    dataset(ws, 50, wrong={10})
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--stop-early", "-w", "1")
    assert result.exit_code == 1, result.output
    ran = [row["eval_id"] for row in rows("o.jsonl")]
    # c010 settles it; the one worker may already have started the next case, which is written too
    assert "c010" in ran and len(ran) - ran.index("c010") <= 2 and len(ran) < 50
    assert manifest("o.jsonl")["stopped_early"]["decided"] == "a case did not pass"


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("gates", [], "error: --stop-early decides the --threshold gate (the mean score) or the default one"),
        ("resume", ["--resume", "o.jsonl"], "error: --stop-early starts a fresh run"),
    ],
)
def test_runs_stop_early_cannot_decide_are_refused(ws, setup, args, message):
    dataset(ws, 5)
    if setup == "gates":
        ws.file("dataset.yaml", (ws.root / "dataset.yaml").read_text() + "gates:\n  min_pass_rate: 0.5\n")
    else:
        assert invoke("eval", "dataset.yaml", "--out", "o.jsonl").exit_code == 0
    result = invoke("eval", "dataset.yaml", "--stop-early", *args)
    assert result.exit_code == 2 and result.stderr.startswith(message), result.stderr
