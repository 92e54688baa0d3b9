"""Depth is bounded wherever a value is stored or shown (issue 25, point 3): an answer, a judge's
details or a results file nested 10^3, 10^4 and 10^5 levels deep never crashes a command or loses
a row; what lies past MAX_DEPTH (254, orjson's own limit) is cut to a marker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.report.bounds import CUT, MAX_DEPTH, bound_depth
from agentv_py.report.jsonl import dumps_row, read_rows
from tests.conftest import make_row

DEPTHS = [1_000, 10_000, 100_000]


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def readers_hold(results: str) -> None:
    """report, explain, metrics and compare read the file: an outcome, never an internal error."""
    for args in (
        ["report", results, "-o", "r.html"],
        ["explain", results, "c1"],
        ["metrics", results],
        ["compare", results, results],
    ):
        result = invoke(*args)
        assert result.exit_code in (0, 1, 2), (args, result.output)
        assert "Traceback" not in result.output and "internal error" not in result.output, args


@pytest.mark.parametrize("levels", DEPTHS, ids=[f"{n}-levels" for n in DEPTHS])
def test_a_deep_answer_loses_no_row(ws, levels):
    ws.cli_target("cat {FILES}")
    ws.file("fx/c1.json", '{"a": ' + nested(levels) + "}")
    ws.file("fx/c2.json", '{"a": 1}')
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\nevalcases:\n"
        + "".join(
            f"  - id: {c}\n    input_messages: [{{role: user, content: [{{type: file, value: fx/{c}.json}}]}}]\n"
            "    expected_output: {a: 1}\n"
            for c in ("c1", "c2")
        )
    )
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--workers", "1")
    assert result.exit_code == 1, result.output  # c1 fails; nothing crashed
    rows = [row for _, row in read_rows("o.jsonl")]
    assert [row.eval_id for row in rows if not isinstance(row, str)] == ["c1", "c2"]
    readers_hold("o.jsonl")


@pytest.mark.parametrize("levels", [600, 10_000], ids=["600-levels", "10000-levels"])
def test_a_judges_deep_details_lose_no_row(ws, levels):
    ws.cli_target("cat {FILES}")
    ws.file("fx/c1.json", '{"a": 1}')
    deep = nested(levels)
    ws.file("judge.py", f'print(\'{{"score": 1, "details": {{"deep": {deep}}}}}\')\n')
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n"
        f"    - {{type: code_judge, name: j, script: [{sys.executable}, judge.py]}}\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]\n"
        "    expected_output: {a: 1}\n"
    )
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code in (0, 4), result.output  # 600: scored, cut; 10,000: a judge error, said
    ((_, row),) = list(read_rows("o.jsonl"))
    assert not isinstance(row, str) and row.eval_id == "c1"
    readers_hold("o.jsonl")


@pytest.mark.parametrize("levels", DEPTHS, ids=[f"{n}-levels" for n in DEPTHS])
def test_a_hostile_results_file_is_read_without_crashing(ws, levels):
    good = make_row("c1", score=1.0, verdict="pass").to_json_dict()
    line = (
        json.dumps(good)[:-1]
        + ', "reasoning": "x", "output_messages": [{"role": "assistant", "content": '
        + nested(levels)
        + "}]}"
    )
    Path("run.jsonl").write_text(line + "\n" + json.dumps({**good, "eval_id": "c2"}) + "\n")
    read = list(read_rows("run.jsonl"))
    assert len(read) == 2 and not isinstance(read[1][1], str)
    if levels < 1024:  # what orjson can read is cut to what agentv writes
        assert not isinstance(read[0][1], str) and CUT in json.dumps(read[0][1].to_json_dict())
    else:  # deeper than any parser here reads: skipped, with why
        assert isinstance(read[0][1], str) and "depth" in read[0][1]
    readers_hold("run.jsonl")


def test_bound_depth_cuts_exactly_past_the_limit_and_keeps_order():
    value = {"b": 1, "a": [[[["deep"]]]], "c": "x"}
    assert bound_depth(value, limit=3) == {"b": 1, "a": [[CUT]], "c": "x"}
    assert list(bound_depth(value, limit=3)) == ["b", "a", "c"]
    assert bound_depth(value) == value
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    line = dumps_row({"v": deep})  # no recursion anywhere: written, cut at MAX_DEPTH
    assert CUT.encode() in line and line.count(b"[") - CUT.count("[") == MAX_DEPTH - 1  # under the root object
