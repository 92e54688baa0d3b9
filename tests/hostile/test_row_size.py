"""A row's size is bounded (issue 25, point 8): a row agentv writes is at most MAX_LINE_BYTES,
its free-form values cut (each saying so) while scores, verdicts and statuses stay; every reader
skips a longer line from elsewhere with its reason, holding no more of it than the cap. Peak
memory is measured in child processes; the big files are written in pieces."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import orjson
import pytest

from agentv_py.evaluators.base import processed_result
from agentv_py.report.bounds import MAX_LINE_BYTES, bound_size, cut_value
from agentv_py.report.jsonl import JsonlWriter, dumps_row, read_rows
from tests.conftest import REPO_ROOT, make_row

MIB = 1 << 20


def fields_row(eval_id: str, count: int, answer: str = "{}") -> dict:
    fields = [
        {"path": f"f{i}", "status": "miss", "score": 0.0, "expected": "e" * 10, "actual": "a" * 10, "match": "exact"}
        for i in range(count)
    ]
    result = processed_result(name="fa", type="field_accuracy", score=0.25, details={"fields": fields})
    return make_row(
        eval_id=eval_id, score=0.25, verdict="fail", candidate_answer=answer, evaluator_results=[result]
    ).to_json_dict()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("abcdef", "abc [cut: 6 characters]"),
        ("abc", "abc"),
        ([1, 2, 3, 4], [1, 2, 3, "[cut: 1 more items]"]),
        ({"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 1, "b": 2, "c": 3, "[cut]": "1 more keys"}),
        ({"abcdef": ["xyzxyz"]}, {"abc [cut: 6 characters]": ["xyz [cut: 6 characters]"]}),
        (12345678, 12345678),
    ],
    ids=["long-string", "short-string", "long-list", "many-keys", "nested-and-key", "number"],
)
def test_cut_value(value, expected):
    assert cut_value(value, 3, 3) == expected


def test_a_row_that_fits_is_written_as_it_is():
    row = fields_row("c1", 3)
    assert bound_size(row, orjson.dumps, limit=64 * 1024) == orjson.dumps(row)


def test_the_details_are_cut_before_the_answer_and_the_verdict_stays():
    answer = json.dumps({"total": "12.00", "note": "n" * 3000})
    row = fields_row("c1", 5_000, answer)
    line = bound_size(row, orjson.dumps, limit=64 * 1024)
    assert len(line) <= 64 * 1024
    back = orjson.loads(line)
    assert (back["score"], back["verdict"], back["status"]) == (0.25, "fail", "ok")
    assert back["candidate_answer"] == answer  # the answer whole: the details made room
    result = back["evaluator_results"][0]
    before = row["evaluator_results"][0]
    assert (result["score"], result["verdict"], result["status"]) == (0.25, "fail", before["status"])
    assert result["details"]["fields"][-1].startswith("[cut: ") and result["details"]["fields"][-1].endswith(
        " more items]"
    )


def test_the_answer_stays_whole_while_cutting_the_rest_can_make_room():
    details = {"items": [{"n": i, "text": "t" * 90} for i in range(1000)]}  # ~110 KB of judge details
    result = processed_result(name="j", type="code_judge", score=1.0, details=details)
    answer = "a" * (40 * 1024)
    row = make_row(eval_id="c1", candidate_answer=answer, evaluator_results=[result]).to_json_dict()
    line = bound_size(row, orjson.dumps, limit=64 * 1024)
    back = orjson.loads(line)
    assert len(line) <= 64 * 1024 and back["candidate_answer"] == answer
    assert back["evaluator_results"][0]["details"]["items"][-1].endswith(" more items]")


def test_a_huge_answer_is_cut_last_and_says_so():
    row = make_row(eval_id="c1", candidate_answer="x" * (200 * 1024)).to_json_dict()
    line = bound_size(row, orjson.dumps, limit=64 * 1024)
    answer = orjson.loads(line)["candidate_answer"]
    assert len(line) <= 64 * 1024 and answer == "x" * 4096 + f" [cut: {200 * 1024} characters]"


def test_thousands_of_results_keep_what_each_decided():
    details = {f"k{j}": j for j in range(50)}
    results = [processed_result(name=f"e{i}", type="code_judge", score=1.0, details=details) for i in range(2000)]
    row = make_row(eval_id="c1", evaluator_results=results).to_json_dict()
    line = bound_size(row, orjson.dumps, limit=320 * 1024)
    back = orjson.loads(line)
    assert len(line) <= 320 * 1024 and len(back["evaluator_results"]) == 2000
    assert {(r["name"], r["score"], r["reasoning"]) for r in back["evaluator_results"]} == {
        (f"e{i}", 1.0, "[cut: row size]") for i in range(2000)
    }


def test_the_writer_never_writes_a_row_over_the_cap_and_every_row_reads_back(tmp_path):
    """A 20 MiB answer and 300,000 field entries (a row of ~40 MiB): written within the cap."""
    path = tmp_path / "run.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(make_row(eval_id="big-answer", candidate_answer="x" * (20 * MIB)))
        writer.write(make_row(**{**fields_row("many-fields", 300_000), "eval_id": "many-fields"}))
        writer.write(make_row(eval_id="small"))
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3 and max(map(len, lines)) <= MAX_LINE_BYTES
    found = [row for _, row in read_rows(path)]
    assert [row.eval_id for row in found] == ["big-answer", "many-fields", "small"]
    assert found[0].candidate_answer.endswith(f" [cut: {20 * MIB} characters]")
    assert (found[1].score, found[1].verdict) == (0.25, "fail")
    assert dumps_row(fields_row("c", 3)) == orjson.dumps(fields_row("c", 3))


READERS = {
    "metrics": ["metrics", "{path}"],
    "report": ["report", "{path}", "-o", "{out}"],
    "explain": ["explain", "{path}", "c1"],
    "compare": ["compare", "{path}", "{other}"],
}


def write_pieces(path, pieces) -> None:
    with open(path, "wb") as handle:
        for piece in pieces:
            handle.write(piece)


def run_reader(tmp_path, name: str, path) -> tuple[int, str, int]:
    """`agentv <reader>` in a child: exit code, stderr, peak RSS in MiB."""
    other = tmp_path / "other.jsonl"
    other.write_bytes(dumps_row(make_row(eval_id="c1").to_json_dict()) + b"\n")
    argv = [part.format(path=path, out=tmp_path / "r.html", other=other) for part in READERS[name]]
    code = (
        "import sys\n"
        "from agentv_py.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
        # VmHWM: this process's own peak (ru_maxrss would carry the forking test's across exec)
        "peak = [line for line in open('/proc/self/status') if line.startswith('VmHWM')][0].split()[1]\n"
        "print(int(peak) // 1024, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"},
    )
    *said, peak = result.stderr.splitlines()
    return result.returncode, "\n".join(said), int(peak)


@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_holds_a_row_at_the_cap_and_skips_a_longer_line(tmp_path, reader):
    """The costliest row to read: ~15 MiB, a 4 MB answer and a judge's details of 400,000 small
    objects (what is shown per field, a table per field, grows with the fields a dataset names,
    not with a row's size)."""
    details = {"items": [{"a": "xxxxxxxxxx", "b": i} for i in range(400_000)]}
    result = processed_result(name="j", type="code_judge", score=0.5, details=details)
    at_cap = make_row(
        eval_id="c1", score=0.5, verdict="fail", candidate_answer="y" * 4_000_000, evaluator_results=[result]
    )
    line = dumps_row(at_cap.to_json_dict())
    assert 15 * MIB < len(line) <= MAX_LINE_BYTES
    path = tmp_path / "at-cap.jsonl"
    write_pieces(path, [line, b"\n"])
    code, said, peak = run_reader(tmp_path, reader, path)
    assert code in (0, 1), said  # read: compare says whether it regressed, the others exit 0
    assert peak < 400, (reader, peak)  # measured ~230 MiB; a 54 MB row took 1.7-1.9 GB before the cap

    over = tmp_path / "over.jsonl"
    write_pieces(over, [b'{"eval_id": "c1", "candidate_answer": "', *(b"x" * MIB for _ in range(40)), b'"}\n'])
    code, said, peak = run_reader(tmp_path, reader, over)
    assert "line longer than 16 MiB: not read" in said, said
    assert "Traceback" not in said and code in (0, 1, 2), said  # 3 would be an internal error
    assert peak < 150, (reader, peak)  # never the 40 MiB line
