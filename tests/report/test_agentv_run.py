"""AgentV v4.42 run folders: our rows written as one (report/agentv_run.py) and read back
(report/agentv_rows.py), field by field, with hostile case ids and malformed AgentV rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentv_py.models.results import EvaluatorResult, ResultRow, Trace
from agentv_py.report.agentv_rows import AgentvRunError, agentv_index, agentv_row, convert_index, readable_results
from agentv_py.report.agentv_run import execution_status, folder_name, folder_problem, index_entry, write_agentv_run
from agentv_py.report.agentv_sums import agentv_type, our_type
from agentv_py.report.jsonl import read_rows
from tests.conftest import make_row


def result(
    name: str = "fields", type: str = "field_accuracy", score: float | None = 1.0, **more: Any
) -> EvaluatorResult:
    defaults: dict[str, Any] = {
        "status": "processed",
        "passed": score == 1.0,
        "verdict": "pass" if score == 1.0 else "fail",
    }
    return EvaluatorResult(name=name, type=type, score=score, **{**defaults, **more})


FULL = make_row(
    "invoice-004",
    timestamp="2026-11-21T17:32:36.272Z",
    dataset="invoices",
    conversation_id="conv-1",
    target="mock",
    score=0.75,
    verdict="partial",
    hits=["a"],
    misses=["b (wrong)"],
    reasoning="1/2 fields",
    candidate_answer='{"a": 1}',
    evaluator_results=[
        result(score=0.75, verdict="partial", hits=["a"], misses=["b (wrong)"], details={"fields": []}, reasoning="r"),
        result("judge", "llm_judge", 1.0),
        result("skipped", "code_judge", None, status="skipped", verdict=None),
        result("crashed", "code_judge", None, status="error", verdict=None, reasoning="exit 1"),
        result("all", "composite", 1.0, evaluator_results=[result("inner", "is_json", 1.0)]),
    ],
    attempts=2,
    duration_ms=41.5,
    trace=Trace(token_usage={"input": 10, "output": 5}, cost_usd=0.002, model="gpt-x"),
    run_id="run-1",
    xfail="known bug",
)


# ----------------------------------------------------------------------------- names and types


@pytest.mark.parametrize(
    ("ours", "agentv"),
    [
        ("field_accuracy", "field-accuracy"),
        ("llm_judge", "llm-grader"),
        ("code_judge", "code-grader"),
        ("tool_trajectory", "tool-trajectory"),
        ("contains", "contains"),
    ],
    ids=["field-accuracy", "llm-grader", "code-grader", "tool-trajectory", "same"],
)
def test_evaluator_types_map_both_ways(ours: str, agentv: str) -> None:
    assert agentv_type(ours) == agentv
    assert our_type(agentv) == ours


@pytest.mark.parametrize(
    ("case_id", "expected"),
    [
        ("invoice-001", "invoice-001"),
        ("", "unknown"),
        ("   ", "unknown"),
        ("../escape", ".._escape-"),
        ("..", "__-"),
        (".", "_-"),
        ("a/b\\c:d*e?f", "a_b_c_d_e_f-"),
        ("line\nbreak\x1b[0m", "line_break_[0m-"),
        ('q"<>|', "q____-"),
        ("x" * 300, "x" * 80 + "-"),
    ],
    ids=["plain", "empty", "blank", "dot-dot-slash", "dot-dot", "dot", "separators", "controls", "quotes", "huge"],
)
def test_folder_names_stay_one_safe_segment(case_id: str, expected: str) -> None:
    name = folder_name(case_id, "unknown")
    assert name.startswith(expected)
    assert "/" not in name and "\\" not in name and name.strip(".") and len(name) <= 89
    assert (len(name) == len(expected) + 8) if expected.endswith("-") else name == expected


def test_two_ids_that_read_alike_get_two_folders() -> None:
    assert folder_name("a/b", "x") != folder_name("a_b", "x") != folder_name("a\\b", "x")


# ----------------------------------------------------------------------------- one row


def test_an_index_row_keeps_every_field_agentv_has() -> None:
    entry = index_entry(FULL, "invoices/invoice-004", has_answer=True)
    assert list(entry)[:4] == ["timestamp", "test_id", "suite", "conversation_id"]
    assert entry["test_id"] == "invoice-004" and entry["suite"] == "invoices" and entry["target"] == "mock"
    assert (entry["score"], entry["duration_ms"], entry["cost_usd"]) == (0.75, 41.5, 0.002)
    assert entry["token_usage"] == {"input": 10, "output": 5}
    assert entry["execution_status"] == "quality_failure"
    assert entry["grading_path"] == "invoices/invoice-004/grading.json"
    assert entry["answer_path"] == entry["output_path"] == "invoices/invoice-004/outputs/answer.md"
    assert entry["metadata"] == {
        "agentv_py": {
            "verdict": "partial",
            "attempts": 2,
            "reasoning": "1/2 fields",
            "run_id": "run-1",
            "xfail": "known bug",
            "model": "gpt-x",
        }
    }
    scores = entry["scores"]
    assert [(s["name"], s["type"], s["score"], s["verdict"]) for s in scores] == [
        ("fields", "field-accuracy", 0.75, "fail"),
        ("judge", "llm-grader", 1.0, "pass"),
        ("skipped", "code-grader", 0, "skip"),
        ("crashed", "code-grader", 0, "fail"),
        ("all", "composite", 1.0, "pass"),
    ]
    assert scores[0]["assertions"] == [{"text": "a", "passed": True}, {"text": "b (wrong)", "passed": False}]
    assert scores[3]["status"] == "error"
    assert scores[4]["scores"][0]["type"] == "is-json"


@pytest.mark.parametrize(
    ("status", "verdict", "expected"),
    [
        ("ok", "pass", "ok"),
        ("ok", "partial", "quality_failure"),
        ("ok", "fail", "quality_failure"),
        ("error", "fail", "execution_error"),
    ],
    ids=["pass", "partial", "fail", "error"],
)
def test_execution_status(status: str, verdict: str, expected: str) -> None:
    assert execution_status(make_row(status=status, verdict=verdict)) == expected


def test_a_row_read_back_is_the_row_written() -> None:
    entry = json.loads(json.dumps(index_entry(FULL, "s/t", has_answer=True)))
    back = agentv_row(entry)
    assert back.model_dump(
        exclude={"candidate_answer", "evaluator_results", "output_messages", "trace"}
    ) == FULL.model_dump(exclude={"candidate_answer", "evaluator_results", "output_messages", "trace"})
    assert back.trace == Trace(duration_ms=41.5, token_usage={"input": 10, "output": 5}, cost_usd=0.002, model="gpt-x")
    assert [(r.name, r.type, r.status, r.score, r.verdict) for r in back.evaluator_results] == [
        ("fields", "field_accuracy", "processed", 0.75, "fail"),  # AgentV has no `partial`
        ("judge", "llm_judge", "processed", 1.0, "pass"),
        ("skipped", "code_judge", "skipped", None, None),
        ("crashed", "code_judge", "error", None, "fail"),
        ("all", "composite", "processed", 1.0, "pass"),
    ]
    assert back.evaluator_results[0].details == {"fields": []}
    assert back.evaluator_results[3].reasoning == "exit 1"
    assert back.evaluator_results[4].evaluator_results[0].type == "is_json"


# ----------------------------------------------------------------------------- AgentV's own rows


def test_agentvs_own_rows_read() -> None:
    row = agentv_row(
        {
            "timestamp": "2026-04-28T02:16:32.367Z",
            "test_id": "no-imgur",
            "suite": "redteam",
            "score": 0.125,
            "target": "azure",
            "scores": [{"name": "contains-$1", "type": "contains", "score": 0, "weight": 2, "verdict": "fail"}],
            "assertions": [{"text": 'Output contains "$1"', "passed": False, "evidence": ""}],
        }
    )
    assert (row.eval_id, row.dataset, row.target, row.status, row.verdict) == (
        "no-imgur",
        "redteam",
        "azure",
        "ok",
        "fail",
    )
    assert row.misses == ['Output contains "$1"'] and row.evaluator_results[0].weight == 2


@pytest.mark.parametrize(
    ("value", "status", "verdict", "error"),
    [
        ({"test_id": "t", "score": 0.9}, "ok", "pass", None),  # no execution_status: AgentV's 0.8 threshold
        ({"test_id": "t", "score": 0.7}, "ok", "fail", None),
        ({"test_id": "t", "score": 0.7, "execution_status": "ok"}, "ok", "pass", None),  # its own threshold said so
        ({"testId": "t", "score": 0, "executionStatus": "execution_error"}, "error", "fail", "AgentV execution error"),
        (
            {"test_id": "t", "score": 0, "execution_status": "execution_error", "failure_stage": "agent"},
            "error",
            "fail",
            "AgentV execution error (agent)",
        ),
    ],
    ids=["above-threshold", "below-threshold", "status-ok", "camel-case-error", "error-stage"],
)
def test_status_and_verdict_of_agentv_rows(value: dict[str, Any], status: str, verdict: str, error: str | None) -> None:
    row = agentv_row(value)
    assert (row.status, row.verdict, row.error) == (status, verdict, error)


def test_a_row_with_only_a_score_has_one_result_for_it() -> None:
    row = agentv_row({"test_id": "t", "score": 0.94, "target": "claude"})
    assert [(r.name, r.type, r.score, r.verdict) for r in row.evaluator_results] == [("score", "score", 0.94, "pass")]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, 2], "not an AgentV result row (a JSON object)"),
        ({"score": 1}, "no test_id (a string)"),
        ({"test_id": "", "score": 1}, "no test_id (a string)"),
        ({"test_id": "t"}, "test 't': missing or invalid score (a number)"),
        ({"test_id": "t", "score": "0.5"}, "test 't': missing or invalid score (a number)"),
        ({"test_id": "t", "score": True}, "test 't': missing or invalid score (a number)"),
        ({"test_id": "t", "score": 1, "target": 3}, "test 't': target is not a string"),
        ({"test_id": "t", "score": 1, "scores": {}}, "test 't': scores is not a list"),
        ({"test_id": "t", "score": 1, "scores": [3]}, "test 't': scores[0] is not an object"),
        (
            {"test_id": "t", "score": 1, "scores": [{"name": "n", "type": "x", "score": None}]},
            "test 't': scores[0].score is not a number",
        ),
        (
            {"test_id": "t", "score": 1, "scores": [{"name": "n", "type": "x", "score": 1, "assertions": [{"x": 1}]}]},
            "test 't': scores[0].assertions[0] is not an assertion ({text: string, passed: boolean})",
        ),
        ({"test_id": "t", "score": 1, "duration_ms": "fast"}, "test 't': duration_ms is not a number"),
        (
            {"test_id": "t", "score": 1, "execution_status": "done"},
            "test 't': unknown execution_status 'done' (expected ok, quality_failure or execution_error)",
        ),
    ],
    ids=[
        "array", "no-test-id", "empty-test-id", "no-score", "string-score", "bool-score", "target-number",
        "scores-object", "score-entry-number", "grader-score-null", "bad-assertion", "duration-string",
        "unknown-status",
    ],
)  # fmt: skip
def test_malformed_rows_say_what_is_wrong(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        agentv_row(value)
    assert str(caught.value) == message


def test_a_malformed_line_names_the_file_and_line(tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    index.write_text('{"test_id": "a", "score": 1}\n\n{"test_id": "b"}\n')
    with pytest.raises(AgentvRunError) as caught, (tmp_path / "out.jsonl").open("wb") as out:
        convert_index(index, out)
    assert caught.value.message == f"{index}:3: test 'b': missing or invalid score (a number)"
    index.write_text('{"test_id": "a", "score": 1}\nnot json\n')
    with pytest.raises(AgentvRunError) as caught, (tmp_path / "out.jsonl").open("wb") as out:
        convert_index(index, out)
    assert caught.value.message.startswith(f"{index}:2: not JSON: ")


# ----------------------------------------------------------------------------- the folder


def rows_of(path: Path) -> list[ResultRow]:
    return [row for _, row in read_rows(path) if isinstance(row, ResultRow)]


HOSTILE_IDS = ["../escape", "..", "a/b", "a_b", "line\nbreak", "/etc/passwd", "x" * 5000, "CON", "[bold]<b>"]


def test_a_folder_of_hostile_ids_stays_in_its_folder_and_reads_back(tmp_path: Path) -> None:
    rows = [
        make_row(case_id, candidate_answer="answer " + case_id, evaluator_results=[result()]) for case_id in HOSTILE_IDS
    ]
    retried = make_row(
        "a/b", score=0.5, verdict="fail", candidate_answer="answer a/b", evaluator_results=[result(score=0.5)]
    )
    rows.append(retried)  # a case run again: its last row wins
    folder = tmp_path / "box" / "run"
    assert write_agentv_run(lambda: rows, folder, eval_file="d.yaml") == len(HOSTILE_IDS)
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert all(path.resolve().is_relative_to(folder.resolve()) for path in written)
    entries = [json.loads(line) for line in (folder / "index.jsonl").read_text().splitlines()]
    assert [entry["test_id"] for entry in entries] == [i for i in HOSTILE_IDS if i != "a/b"] + ["a/b"]
    assert len({entry["artifact_dir"] for entry in entries}) == len(entries)
    for entry in entries:
        grading = json.loads((folder / entry["grading_path"]).read_text())
        assert grading["summary"]["total"] == len(grading["assertions"])
        assert (folder / entry["answer_path"]).read_text() == "answer " + entry["test_id"]
    benchmark = json.loads((folder / "benchmark.json").read_text())
    assert benchmark["metadata"]["eval_file"] == "d.yaml" and benchmark["metadata"]["targets"] == ["t"]
    assert benchmark["run_summary"]["t"]["pass_rate"] == {"mean": 0.889, "stddev": 0.314}
    assert benchmark["per_grader_summary"] == {"fields:field-accuracy": {"mean": 0.944, "stddev": 0.157}}
    with readable_results(folder) as source:
        back = rows_of(source)
    assert [(row.eval_id, row.score) for row in back] == [(e["test_id"], e["score"]) for e in entries]


def test_an_index_file_and_a_results_file_are_told_apart(tmp_path: Path) -> None:
    ours = tmp_path / "index.jsonl"  # our results, whatever its name
    ours.write_bytes(json.dumps(make_row().to_json_dict()).encode() + b"\n")
    theirs = tmp_path / "run" / "index.jsonl"
    theirs.parent.mkdir()
    theirs.write_text('{"test_id": "a", "score": 1}\n')
    assert agentv_index(ours) is None
    assert agentv_index(theirs) == theirs == agentv_index(theirs.parent)
    with readable_results(ours) as source:
        assert source == ours
    for folder in (tmp_path, tmp_path / "empty"):  # our results named index.jsonl in it; nothing in it
        folder.mkdir(exist_ok=True)
        with pytest.raises(AgentvRunError) as caught, readable_results(folder, "BASE"):
            pass
        assert caught.value.message == (
            "BASE is a directory, not a file, and not an AgentV run folder "
            f"(no index.jsonl of AgentV result rows): {folder}"
        )


@pytest.mark.parametrize(
    ("setup", "problem"),
    [
        (lambda p: None, None),
        (lambda p: p.mkdir(), None),
        (lambda p: (p.mkdir(), (p / "index.jsonl").write_text("")), None),
        (lambda p: p.write_text("x"), "{p} is not a folder"),
        (
            lambda p: (p.mkdir(), (p / "dataset.yaml").write_text("")),
            "{p} is a folder with other files in it and no index.jsonl: not an AgentV run folder",
        ),
    ],
    ids=["new", "empty", "run-folder", "a-file", "another-folder"],
)  # fmt: skip
def test_which_folders_take_a_run(tmp_path: Path, setup: Any, problem: str | None) -> None:
    path = tmp_path / "run"
    setup(path)
    assert folder_problem(path) == (problem.format(p=path) if problem else None)


def test_a_symbolic_link_left_in_a_run_folder_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "run"
    (folder / "d").mkdir(parents=True)
    (folder / "index.jsonl").write_text("")
    (folder / "d" / "c1").symlink_to(outside)
    with pytest.raises(OSError, match="is a symbolic link"):
        write_agentv_run(lambda: [make_row("c1")], folder)
    assert list(outside.iterdir()) == []
