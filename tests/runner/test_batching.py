"""`provider_batching`: the batch output's parsing (AgentV's error texts), one record read as an
answer, and `run_batch` against small real commands (hostile output included)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentv_py.models.dataset import EvalCase
from agentv_py.models.targets import CliTarget
from agentv_py.prepared import PreparedCase
from agentv_py.runner.batch import (
    MAX_BATCH_OUTPUT,
    BatchOutputError,
    batch_note,
    batch_output_cap,
    batch_values,
    duration_share,
    parse_batch_output,
    record_outcome,
    run_batch,
)
from agentv_py.runner.targets import CliRunner
from agentv_py.scoring.answer import NOT_JSON

MB = 1024 * 1024


def case(case_id: str, files: list[str] = ()) -> PreparedCase:
    return PreparedCase(EvalCase(id=case_id), 0, list(files), [], None, f"question of {case_id}", evaluators=[])


def cli(tmp_path: Path, command: str, output_cap: int = 10 * MB) -> CliRunner:
    config = CliTarget(name="t", provider="cli", command_template=command, provider_batching=True)
    return CliRunner(config, dataset_dir=tmp_path, work_dir=tmp_path, output_cap=output_cap)


def writer(tmp_path: Path, body: str) -> str:
    """A command whose Python `body` writes the batch output to `out` (the {OUTPUT_FILE} path)."""
    path = tmp_path / "batch.py"
    path.write_text("import sys\nout = sys.argv[1]\n" + body)
    return f"python3 {path} {{OUTPUT_FILE}}"


VALID = [
    pytest.param('{"id": "a", "text": "x"}\n', {"a": {"id": "a", "text": "x"}}, id="one-line"),
    pytest.param('{"id":"a","text":"x"}\r\n\r\n  \n{"id":"b","text":"y"}', {"a": ..., "b": ...}, id="crlf-blank-lines"),
    pytest.param('{"id": "a", "text": "x\u2028y"}', {"a": ...}, id="line-separator-inside-a-string"),
    pytest.param("", {}, id="empty"),
]


@pytest.mark.parametrize(("text", "expected"), VALID)
def test_valid_batch_output(text, expected):
    records = parse_batch_output(text, line_cap=MB)
    assert list(records) == list(expected)
    for case_id, record in expected.items():
        if record is not ...:
            assert records[case_id] == record


INVALID = [
    pytest.param(
        '{"id": "a"}\n{"id": "b",',
        # ours up to the line number; then the json module's words
        re.compile(re.escape("CLI batch output contains invalid JSONL line: line 2: ") + ".+"),
        id="not-json",
    ),
    pytest.param(
        '{"id": "a", "cost_usd": NaN}',
        "CLI batch output contains invalid JSONL line: line 1: NaN is not valid JSON",
        id="nan",
    ),
    pytest.param(
        "[" * 10_000 + "]" * 10_000,
        "CLI batch output contains invalid JSONL line: line 1: JSON nested too deeply",
        id="nested-10000-deep",
    ),
    pytest.param('["a"]', "CLI batch output JSONL line must be an object", id="array"),
    pytest.param('"a"', "CLI batch output JSONL line must be an object", id="string"),
    pytest.param('{"text": "x"}', "CLI batch output JSONL line missing required string field: id", id="no-id"),
    pytest.param('{"id": 7}', "CLI batch output JSONL line missing required string field: id", id="number-id"),
    pytest.param('{"id": ""}', "CLI batch output JSONL line missing required string field: id", id="empty-id"),
    pytest.param('{"id": "a"}\n{"id": "a"}', "CLI batch output contains duplicate id: a", id="duplicate"),
    pytest.param(
        json.dumps({"id": "x" * 300}) + "\n" + json.dumps({"id": "x" * 300}),
        "CLI batch output contains duplicate id: " + "x" * 200 + "...(300 characters)",
        id="duplicate-long-id-shortened",
    ),
    pytest.param(
        '{"id": "a"}\n' + json.dumps({"id": "b", "text": "x" * (2 * MB)}),
        "CLI batch output line 2 is longer than the 1 MB cap of one answer",
        id="line-over-the-answer-cap",
    ),
]


@pytest.mark.parametrize(("text", "message"), INVALID)
def test_invalid_batch_output(text, message):
    with pytest.raises(BatchOutputError) as caught:
        parse_batch_output(text, line_cap=MB)
    if isinstance(message, re.Pattern):
        assert message.fullmatch(str(caught.value)), str(caught.value)
    else:
        assert str(caught.value) == message


def test_only_kept_ids_are_returned_but_every_line_is_checked():
    text = '{"id": "a", "text": "1"}\n{"id": "other", "text": "2"}'
    assert list(parse_batch_output(text, line_cap=MB, keep={"a"})) == ["a"]
    with pytest.raises(BatchOutputError, match="^CLI batch output contains duplicate id: other$"):
        parse_batch_output(text + '\n{"id": "other"}', line_cap=MB, keep={"a"})


RECORDS = [
    pytest.param({"id": "a", "text": "hello", "cost_usd": 0.5}, "hello", NOT_JSON, {"cost_usd": 0.5}, id="text"),
    pytest.param(
        {"id": "a", "output_messages": [{"role": "assistant", "content": {"x": 1}}], "duration_ms": 9},
        '{"x":1}',
        {"x": 1},
        {"duration_ms": 9},
        id="output-messages",
    ),
    pytest.param({"id": "a", "text": {"x": 1}}, '{"x":1}', NOT_JSON, {}, id="non-string-text-as-json"),
    pytest.param({"id": "a", "invoice": 7}, '{"invoice":7}', {"invoice": 7}, {}, id="plain-object-is-the-answer"),
    pytest.param(
        {"id": "a", "token_usage": {"input": 1, "output": 2}, "text": "t"},
        "t",
        NOT_JSON,
        {"token_usage": {"input": 1, "output": 2}},
        id="token-usage",
    ),
]


@pytest.mark.parametrize(("record", "answer", "parsed", "trace"), RECORDS)
def test_a_record_reads_like_a_single_answer(record, answer, parsed, trace):
    outcome = record_outcome(record, "t")
    assert (outcome.answer, outcome.error, outcome.trace) == (answer, None, trace)
    assert outcome.parsed == parsed if parsed is not NOT_JSON else outcome.parsed is NOT_JSON


def test_a_record_with_only_an_id_is_an_empty_answer():
    outcome = record_outcome({"id": "a"}, "t")
    assert (outcome.answer, outcome.error) == (
        None,
        "target 't' returned an empty answer (its batch line has only an id)",
    )


@pytest.mark.parametrize(
    ("total", "cases", "share"),
    [(10.0, 4, 3.0), (5.0, 2, 3.0), (1.0, 3, 0.0), (99.4, 1, 99.0), (7.0, 0, 7.0)],
    ids=["2.5-rounds-up", "2.5-again", "below-half", "one-case", "no-cases"],
)
def test_duration_share_rounds_half_up(total, cases, share):
    assert duration_share(total, cases) == share


@pytest.mark.parametrize(
    ("answer_cap", "cases", "cap"),
    [(10 * MB, 3, 30 * MB), (10 * MB, 1000, MAX_BATCH_OUTPUT), (MB, 0, MB)],
    ids=["per-case", "bounded", "no-cases"],
)
def test_batch_output_cap(answer_cap, cases, cap):
    assert batch_output_cap(answer_cap, cases) == cap


def test_batch_values_hold_every_case_file_once():
    cases = [case("a", ["/d/1.json", "/d/shared.txt"]), case("b", ["/d/2.json", "/d/shared.txt"])]
    assert batch_values(cases, "--file {path}") == {
        "PROMPT": [""],
        "GUIDELINES": [""],
        "EVAL_ID": ["batch"],
        "ATTEMPT": ["0"],
        "FILES": ["--file", "/d/1.json", "--file", "/d/shared.txt", "--file", "/d/2.json"],
        "IMAGES": [],
    }


def test_run_batch_splits_the_output_file_per_case(tmp_path):
    body = (
        "import json\n"
        "lines = [{'id': 'a', 'text': 'A'}, {'id': 'b', 'text': 'B', 'duration_ms': 5}, {'id': 'x', 'text': 'X'}]\n"
        "open(out, 'w').write('\\n'.join(json.dumps(l) for l in lines))\n"
    )
    result = run_batch(cli(tmp_path, writer(tmp_path, body)), [case("a"), case("b"), case("c")])
    assert result.failure is None
    assert {k: (o.answer, o.error) for k, o in result.outcomes.items()} == {
        "a": ("A", None),
        "b": ("B", None),
        "c": (None, "target 't' failed: Batch output missing id 'c'"),
    }
    assert result.missing == {"c"}
    assert result.outcomes["b"].trace == {"duration_ms": 5}
    assert not any(o.retryable for o in result.outcomes.values())
    assert [batch_note(result, k) for k in ("a", "c", "not-in-batch")] == [
        "answered by the batch call",
        "not in the batch call's output",
        None,
    ]
    assert list(tmp_path.glob("*.jsonl")) == []  # the batch's output file is removed


def test_run_batch_reads_stdout_without_output_file(tmp_path):
    command = 'printf \'{"id":"a","text":"A"}\\n{"id":"b","text":"B"}\\n\''
    result = run_batch(cli(tmp_path, command), [case("a"), case("b")])
    assert {k: o.answer for k, o in result.outcomes.items()} == {"a": "A", "b": "B"}


def test_the_batch_command_gets_batch_placeholders(tmp_path):
    """{EVAL_ID} is `batch`, {PROMPT} is empty, {FILES} every case's files, {OUTPUT_FILE} a .jsonl."""
    body = (
        "import json\n"
        "args = sys.argv[2:]\n"
        "open(out, 'w').write(json.dumps({'id': 'a', 'text': json.dumps([out.endswith('.jsonl'), *args])}))\n"
    )
    command = writer(tmp_path, body) + " {EVAL_ID} {PROMPT} {FILES}"
    result = run_batch(cli(tmp_path, command), [case("a", ["/f/1"]), case("b", ["/f/2"])])
    assert json.loads(result.outcomes["a"].answer or "") == [True, "batch", "", "/f/1", "/f/2"]


FAILURES = [
    pytest.param(
        "print('batch is broken', file=sys.stderr); sys.exit(3)",
        "target 't' failed: exit code 3: batch is broken",
        id="non-zero-exit",
    ),
    pytest.param(
        'open(out, \'wb\').write(b\'{"id": "a", "text": "\\xff"}\')',
        "target 't' answer (the output file) is not valid UTF-8 (byte 0xff at offset 21)",
        id="not-utf8",
    ),
    pytest.param(
        "open(out, 'w').write('{\"id\": \"a\", \"text\": \"' + 'x' * (100 * 1024 * 1024) + '\"}')",
        "target 't' wrote more than the 2 MB cap",
        id="a-100-MB-line",
    ),
    pytest.param(
        "open(out, 'w').write('{\"id\": \"a\"}\\n' + '[' * 10000 + ']' * 10000)",
        "CLI batch output contains invalid JSONL line: line 2: JSON nested too deeply",
        id="nested-10000-deep",
    ),
    pytest.param(
        'open(out, \'w\').write(\'{"id": "a"}\\n{"id": "a"}\')',
        "CLI batch output contains duplicate id: a",
        id="duplicate-id",
    ),
    pytest.param("open(out, 'w').write('  \\n')", "target 't' returned an empty answer (the output file)", id="empty"),
]


@pytest.mark.parametrize(("body", "failure"), FAILURES)
def test_a_failed_batch_is_one_failure_and_no_outcomes(tmp_path, body, failure):
    result = run_batch(cli(tmp_path, writer(tmp_path, body), output_cap=MB), [case("a"), case("b")])
    assert (result.failure, result.outcomes) == (failure, {})
    assert batch_note(result, "a") == f"the batch call failed, so this case ran on its own: {failure}"


def test_a_batch_that_times_out_fails(tmp_path):
    config = CliTarget(
        name="t", provider="cli", command_template="sleep 30", provider_batching=True, timeout_seconds=0.2
    )
    result = run_batch(CliRunner(config, dataset_dir=tmp_path, work_dir=tmp_path), [case("a")])
    assert result.failure is not None and result.failure.startswith("target 't' failed: timed out after 0.2")
