"""`agentv rescore`: a real eval, then its stored answers scored again after the dataset changed,
with a target that counts its own calls (rescore must make none)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.cli.test_eval import invoke, rows

FIELDS_AB = "[{path: a}, {path: b}]"


def answer(value: dict[str, object]) -> str:
    """A case's input file: a shell script the counting target runs, printing `value` as JSON."""
    return f"echo '{json.dumps(value)}'"


@pytest.fixture
def counted(ws):
    """A cli target that notes each call in `calls` and runs the case's input file as a script."""
    ws.file("count.sh", f'echo call >> {ws.root}/calls\nsh "$1"\n')
    ws.cli_target(f"sh {ws.root}/count.sh {{FILES}}")
    return ws


def calls(ws) -> int:
    path = ws.root / "calls"
    return len(path.read_text().splitlines()) if path.exists() else 0


def meta(path: str | Path) -> dict:
    return json.loads(Path(f"{path}.meta.json").read_text())


CASES = [
    ("c1", answer({"a": 1, "b": 2}), {"a": 1, "b": 2}),
    ("c2", answer({"a": 1, "b": 0}), {"a": 1, "b": 2}),
    ("c3", answer({"a": 0, "b": 2}), {"a": 1, "b": 2}),
]


def run_eval(ws, cases=CASES, fields=FIELDS_AB, exit_code=1) -> None:
    ws.cases_dataset(cases, fields=fields)
    result = invoke("eval", "dataset.yaml", "--out", "old.jsonl")
    assert result.exit_code == exit_code, result.output


def test_changed_fields_change_the_scores_without_calling_the_target(counted):
    run_eval(counted)
    assert calls(counted) == 3
    before = Path("old.jsonl").read_bytes()
    counted.cases_dataset(CASES, fields="[{path: b}]")  # the evaluator changed: only b counts now

    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")

    assert result.exit_code == 1, result.output
    assert calls(counted) == 3  # not one target call
    assert Path("old.jsonl").read_bytes() == before  # the input is never touched
    scores = {row["eval_id"]: (row["score"], row["verdict"]) for row in rows("new.jsonl")}
    assert scores == {"c1": (1.0, "pass"), "c2": (0.0, "fail"), "c3": (1.0, "pass")}
    old, new = meta("old.jsonl"), meta("new.jsonl")
    assert new["derived_from"] == old["run_id"] and new["run_id"] != old["run_id"]
    assert {row["run_id"] for row in rows("new.jsonl")} == {new["run_id"]}
    assert new["status"] == "completed" and new["counts"]["passed"] == 2 and new["gate"]["outcome"] == "gate_failed"
    assert new["target"] == old["target"]  # the answers' target, not a stand-in
    assert new["evaluators_sha256"] != old["evaluators_sha256"]
    assert "warning: " in result.stderr and "changed since old.jsonl was written" in result.stderr
    dataset = Path("dataset.yaml").resolve()
    said = f"agentv: re-scoring 3 rows of old.jsonl with the evaluators of 'dataset' ({dataset}; no target calls"
    assert said in result.stderr
    assert "gate failed: 1 of 3 cases did not pass" in result.stderr
    assert "Totals: 3 cases  2 passed  0 partial  1 failed  0 target errors" in result.stdout


def test_rows_keep_what_the_run_measured_of_the_target(counted):
    run_eval(counted)
    assert invoke("rescore", "old.jsonl", "--out", "new.jsonl").exit_code == 1
    old = {row["eval_id"]: row for row in rows("old.jsonl")}
    for row in rows("new.jsonl"):
        before = old[row["eval_id"]]
        for key in ("target", "attempts", "duration_ms", "trace", "candidate_answer", "dataset"):
            assert row[key] == before[key], key
        assert row["evaluator_results"] == before["evaluator_results"]  # same evaluators: same results


def test_the_threshold_gates_like_eval(counted):
    run_eval(counted)
    assert invoke("rescore", "old.jsonl", "--out", "a.jsonl", "--threshold", "0.6").exit_code == 0
    result = invoke("rescore", "old.jsonl", "--out", "b.jsonl", "--threshold", "0.9")
    assert result.exit_code == 1
    assert "gate failed: mean score 0.667 < threshold 0.9" in result.stderr
    assert meta("b.jsonl")["gate"]["rule"] == "mean score >= 0.9"


def test_the_default_output_is_a_new_file_in_agentv_results(counted):
    run_eval(counted)
    result = invoke("rescore", "old.jsonl")
    assert result.exit_code == 1, result.output
    written = list(Path(".agentv/results").glob("dataset_*.jsonl"))
    assert len(written) == 1 and len(rows(written[0])) == 3
    assert meta(written[0])["derived_from"] == meta("old.jsonl")["run_id"]
    assert f"Results written to: {written[0]}" in result.stdout


def test_target_errors_are_copied_and_stay_errors(counted):
    cases = [*CASES[:1], ("bad", "echo oops >&2; exit 3", {"a": 1, "b": 2})]
    run_eval(counted, cases, exit_code=4)
    counted.cases_dataset(cases, fields="[{path: a}]")
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert result.exit_code == 4, result.output
    assert calls(counted) == 1 + 2  # eval retried the failing case once; rescore called nothing
    old = next(row for row in rows("old.jsonl") if row["eval_id"] == "bad")
    new = next(row for row in rows("new.jsonl") if row["eval_id"] == "bad")
    assert new["status"] == "error" and new["error"] == old["error"]
    assert {k: v for k, v in new.items() if k != "run_id"} == {k: v for k, v in old.items() if k != "run_id"}
    assert new["run_id"] == meta("new.jsonl")["run_id"] != old["run_id"]
    assert "1 case had a target error (the target call failed)" in result.stderr


def test_added_and_removed_cases_are_reported_not_run(counted):
    run_eval(counted)
    added = [
        ("n1", answer({"a": 1, "b": 2}), {"a": 1, "b": 2}),
        ("n2", answer({"a": 1, "b": 2}), {"a": 1, "b": 2}),
    ]
    counted.cases_dataset([CASES[0], CASES[2], *added])  # c2 removed, n1 and n2 added
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert result.exit_code == 1
    assert calls(counted) == 3
    assert sorted(row["eval_id"] for row in rows("new.jsonl")) == ["c1", "c3"]
    assert "warning: 1 row of old.jsonl is for cases no longer in the dataset (dropped): c2\n" in result.stderr
    assert (
        "warning: 2 cases in the dataset have no row in old.jsonl: n1, n2 (run them with agentv eval)\n"
        in result.stderr
    )
    assert "  warning: 2 cases in the dataset have no row in old.jsonl" in result.stdout  # repeated at the end
    assert meta("new.jsonl")["dataset"]["case_ids"] == ["c1", "c3"]


def test_a_truncated_last_line_is_skipped_and_its_case_has_no_row(counted):
    run_eval(counted)
    data = Path("old.jsonl").read_bytes()
    Path("old.jsonl").write_bytes(data[: data.rindex(b"\n", 0, -1) + 40])  # the last row cut short
    last = json.loads(data.splitlines()[-1])["eval_id"]
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert (
        "warning: old.jsonl:3: the last line is cut short (its run was stopped while writing it): skipped; "
        "its case counts as having no row\n"
    ) in result.stderr
    assert f"warning: 1 case in the dataset has no row in old.jsonl: {last} (run them with agentv eval)" in (
        result.stderr
    )
    assert len(rows("new.jsonl")) == 2 and last not in {row["eval_id"] for row in rows("new.jsonl")}


def test_the_last_of_several_rows_for_a_case_wins(counted):
    run_eval(counted)
    first = json.loads(Path("old.jsonl").read_text().splitlines()[0])
    again = {**first, "candidate_answer": json.dumps({"a": 9, "b": 9})}
    with open("old.jsonl", "a") as handle:
        handle.write(json.dumps(again) + "\n")
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert (
        f"warning: 1 case has more than one row in old.jsonl (the last one is used): {first['eval_id']} (2 rows)\n"
        in result.stderr
    )
    written = [row for row in rows("new.jsonl") if row["eval_id"] == first["eval_id"]]
    assert len(written) == 1 and written[0]["candidate_answer"] == again["candidate_answer"]
    assert written[0]["score"] == 0.0


def test_without_a_manifest_the_dataset_must_be_given(counted):
    run_eval(counted)
    run_id = meta("old.jsonl")["run_id"]
    Path("old.jsonl.meta.json").unlink()
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: no run manifest beside old.jsonl (looked for old.jsonl.meta.json): the dataset it was run with "
        "is unknown\nhint: pass --dataset DATASET to re-score the rows alone\n"
    )
    assert not Path("new.jsonl").exists()

    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--out", "new.jsonl")
    assert result.exit_code == 1, result.output
    assert (
        "warning: no run manifest beside old.jsonl (looked for old.jsonl.meta.json): re-scoring from the rows alone\n"
        in result.stderr
    )
    new = meta("new.jsonl")
    assert new["derived_from"] == run_id  # the run the rows name
    assert new["target"]["name"] == "t" and len(rows("new.jsonl")) == 3


def test_an_edited_manifest_is_refused_unless_the_dataset_is_given(counted):
    run_eval(counted)
    Path("old.jsonl.meta.json").write_text('{"run_id": ')
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: old.jsonl.meta.json is not JSON (")
    assert result.stderr.endswith(
        "): it was edited or cut short; the dataset it was run with is unknown\n"
        "hint: pass --dataset DATASET to re-score the rows alone\n"
    )
    Path("old.jsonl.meta.json").write_text('{"run_id": "x"}')
    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--out", "new.jsonl")
    assert result.exit_code == 1, result.output
    # ours around it; what is wrong with `tool` is pydantic's words
    warned = re.escape("warning: old.jsonl.meta.json is not a run manifest: tool: ") + ".+"
    warned += re.escape("; re-scoring from the rows alone")
    assert any(re.fullmatch(warned, line) for line in result.stderr.splitlines()), result.stderr


def test_results_of_another_dataset_are_refused(counted):
    run_eval(counted)
    other = [("x1", answer({"a": 1}), {"a": 1}), ("x2", answer({"a": 1}), {"a": 1}), CASES[0]]
    counted.cases_dataset(other, name="other.yaml")
    result = invoke("rescore", "old.jsonl", "--dataset", "other.yaml", "--out", "new.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: old.jsonl does not hold results of {counted.root / 'other.yaml'}: only 1 of the 3 cases it has rows "
        "for is in that dataset (not in it: c2, c3)\n"
        f"hint: pass the dataset the run used with --dataset (the run used {counted.root / 'dataset.yaml'}); "
        "rescore refuses a file whose rows are mostly for cases the dataset does not have\n"
    )
    assert not Path("new.jsonl").exists()


@pytest.mark.parametrize(
    "content, why",
    [("", "it is empty"), ("not json\n", "no line of it is a result row")],
    ids=["empty", "no-rows"],
)
def test_a_file_without_rows_is_refused(counted, content, why):
    run_eval(counted)
    Path("old.jsonl").write_text(content)
    result = invoke("rescore", "old.jsonl", "--out", "new.jsonl")
    assert result.exit_code == 2
    assert result.stderr == f"error: old.jsonl has no result rows ({why}): nothing to re-score\n"


def test_out_is_never_the_input(counted):
    run_eval(counted)
    before = Path("old.jsonl").read_bytes()
    for out in ("old.jsonl", "./old.jsonl", "old.jsonl.meta.json"):
        result = invoke("rescore", "old.jsonl", "--out", out)
        assert result.exit_code == 2
        assert result.stderr == (
            f"error: --out {out} is the results file being re-scored; rescore never overwrites it\n"
            "hint: pass another --out, or none (a new file in .agentv/results/)\n"
        )
    assert Path("old.jsonl").read_bytes() == before


def test_a_missing_results_file(ws):
    result = invoke("rescore", "nope.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: results file not found: nope.jsonl\nhint: pass the JSONL file `agentv eval` wrote (its --out)\n"
    )


def test_trace_evaluators_read_the_stored_output_messages(ws):
    ws.cli_target("sh {FILES}")
    envelope = {
        "output_messages": [{"role": "assistant", "content": "done", "tool_calls": [{"tool": "search"}]}],
        "token_usage": {"input": 10, "output": 5},
    }
    ws.file("fx/c1.json", f"echo '{json.dumps(envelope)}'")

    def dataset(minimum: int) -> None:
        ws.dataset(f"""
            execution:
              target: t
              evaluators:
                - {{name: tools, type: tool_trajectory, mode: any_order, minimums: {{search: {minimum}}}}}
            evalcases:
              - id: c1
                input_messages: [{{role: user, content: [{{type: file, value: fx/c1.json}}]}}]
                expected_messages: [{{role: assistant, content: done}}]
        """)

    dataset(1)
    assert invoke("eval", "dataset.yaml", "--out", "old.jsonl").exit_code == 0
    (old,) = rows("old.jsonl")
    assert old["output_messages"] == envelope["output_messages"]
    dataset(2)
    assert invoke("rescore", "old.jsonl", "--out", "new.jsonl").exit_code == 1
    (new,) = rows("new.jsonl")
    assert new["output_messages"] == envelope["output_messages"] and new["score"] == 0.0
    assert (
        new["trace"]
        == old["trace"]
        == {"duration_ms": old["trace"]["duration_ms"], "token_usage": {"input": 10, "output": 5}}
    )


def test_code_judges_run_again(counted):
    judge = counted.file(
        "judge.py", "import json, pathlib\nprint(json.dumps({'score': float(pathlib.Path('score.txt').read_text())}))\n"
    )
    counted.file("score.txt", "1")
    counted.dataset(f"""
        execution:
          target: t
          evaluators:
            - {{name: judged, type: code_judge, script: [{sys.executable}, {judge}]}}
        evalcases:
          - id: c1
            input_messages: [{{role: user, content: [{{type: file, value: fx/c1.json}}]}}]
            expected_output: x
          - id: c2
            input_messages: [{{role: user, content: [{{type: file, value: fx/c2.json}}]}}]
            expected_output: x
    """)
    counted.file("fx/c1.json", "echo one")
    counted.file("fx/c2.json", "echo two")
    assert invoke("eval", "dataset.yaml", "--out", "old.jsonl").exit_code == 0
    counted.file("score.txt", "0.25")
    dataset = Path("dataset.yaml").resolve()
    refused = invoke("rescore", "old.jsonl", "--out", "new.jsonl")  # the manifest names it: no code runs
    command = f"code judge 'judged': {sys.executable} {judge} (in {dataset.parent})"
    assert refused.exit_code == 2 and refused.stderr == (
        f"error: old.jsonl's manifest names the dataset {dataset}, whose judges would run: {command}. "
        "rescore runs judges only from a dataset you name\n"
        f"hint: check it, then pass --dataset {dataset}\n"
    )
    assert not Path("new.jsonl").exists()
    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--out", "new.jsonl", "--workers", "2")
    assert result.exit_code == 1, result.output
    assert "; no target calls; 2 workers)" in result.stderr
    assert f"  runs {command}" in result.stderr.splitlines()  # said before it runs
    assert calls(counted) == 2
    assert sorted((row["eval_id"], row["score"], row["candidate_answer"]) for row in rows("new.jsonl")) == [
        ("c1", 0.25, "one\n"),
        ("c2", 0.25, "two\n"),
    ]


KEY = "sk-rescore-SECRET-123456"


@pytest.fixture
def model_target(ws, chat_server, monkeypatch):
    """An openai target on a local chat server; with no judge_target it judges its own answers."""
    monkeypatch.setenv("RS_KEY", KEY)
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: answer-model
            base_url: {chat_server.base_url}
            api_key: ${{{{ RS_KEY }}}}
            max_retries: 0
    """)
    ws.dataset("""
        execution:
          target: model
        evalcases:
          - {id: greet, expected_outcome: Greets the user., input: Say hello., expected_output: Hello!}
    """)
    return chat_server


def test_llm_judges_run_again_with_the_judge_the_run_used(ws, model_target):
    from tests.chat_server import text

    model_target.reply(text("Hello there!"), text(json.dumps({"score": 0.9, "reasoning": "ok"})))
    assert invoke("eval", "dataset.yaml", "--out", "old.jsonl").exit_code == 0
    model_target.reply(text(json.dumps({"score": 0.2, "reasoning": "stricter"})))
    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--out", "new.jsonl")
    assert result.exit_code == 1, result.output
    assert len(model_target.requests) == 3  # the answer, the run's judge call, one judge call now
    judge = model_target.requests[2].body
    assert judge["model"] == "answer-model" and "[Candidate output]\nHello there!\n" in judge["messages"][1]["content"]
    [row] = rows("new.jsonl")
    assert (row["score"], row["candidate_answer"]) == (0.2, "Hello there!")
    assert row["evaluator_results"][0]["details"]["judge"]["target"] == "model"
    assert row["trace"]["judge_duration_ms"] >= 0 and row["trace"]["model"] == "answer-model"
    assert KEY not in Path("new.jsonl").read_text() + Path("new.jsonl.meta.json").read_text() + result.output


def test_without_the_run_s_manifest_an_llm_judge_needs_a_judge_target(ws, model_target):
    from tests.chat_server import text

    model_target.reply(text("Hello there!"), text(json.dumps({"score": 0.9, "reasoning": "ok"})))
    assert invoke("eval", "dataset.yaml", "--out", "old.jsonl").exit_code == 0
    Path("old.jsonl.meta.json").unlink()
    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--out", "new.jsonl")
    assert result.exit_code == 2
    assert "(agentv rescore runs no eval target, so none judges)" in result.stderr
    assert "with --dry-run" not in result.stderr
    assert result.stderr.endswith("hint: pass --judge-target NAME\n")
    model_target.reply(text(json.dumps({"score": 1, "reasoning": "ok"})))
    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--judge-target", "model", "--out", "n.jsonl")
    assert result.exit_code == 0, result.output
    assert len(model_target.requests) == 3


def test_with_the_cache_unchanged_judges_cost_nothing_on_a_rescore(ws, model_target):
    """The judge cache (docs/incremental.md): the eval with --cache stores the judge's reply; a
    rescore with --cache whose judge prompt is unchanged asks the judge nothing."""
    from tests.chat_server import text

    model_target.reply(text("Hello there!"), text(json.dumps({"score": 0.9, "reasoning": "ok"})))
    assert invoke("eval", "dataset.yaml", "--cache", "--out", "old.jsonl").exit_code == 0
    asked = len(model_target.requests)
    result = invoke("rescore", "old.jsonl", "--dataset", "dataset.yaml", "--cache", "--out", "new.jsonl")
    assert result.exit_code == 0, result.output
    assert len(model_target.requests) == asked  # no judge call: the reply came from the cache
    [row] = rows("new.jsonl")
    assert row["score"] == 0.9 and row["evaluator_results"][0]["details"]["judge"]["cached"] is True
