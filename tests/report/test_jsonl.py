from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators.base import processed_result
from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.jsonl import JsonlWriter, default_results_path, dumps_row, read_rows
from tests.conftest import make_row


def test_rows_round_trip_and_bad_lines_are_reported(tmp_path):
    path = tmp_path / "out.jsonl"
    details = {"metrics": {"supplier.name": {"tp": 1, "fn": 0}}, "nested": [1, {"x": None}]}
    result = processed_result(name="judge", type="field_accuracy", score=0.5, details=details)
    row = make_row(eval_id="c1", target="x", score=0.5, verdict="fail", evaluator_results=[result])
    with JsonlWriter(path) as writer:
        writer.write(row)
    with open(path, "a") as handle:
        handle.write("{not json\n")
    read = list(read_rows(path))
    assert read[0] == (1, row)
    assert read[0][1].evaluator_results[0].details == details
    assert read[1][0] == 2 and read[1][1].startswith("not JSON")


def test_default_results_path():
    now = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)
    assert default_results_path("invoice extraction", now, Path("/w"), tag="123-abcd") == Path(
        "/w/.agentv/results/invoice_extraction_20260102T030405.678Z_123-abcd.jsonl"
    )
    # Two runs in the same millisecond (even in one process) get different names.
    names = {default_results_path("d", now, Path("/w")) for _ in range(50)}
    assert len(names) > 45  # 4 random hex digits: a repeat among 50 draws is rare, not impossible
    assert all(path.name.startswith(f"d_20260102T030405.678Z_{os.getpid()}-") for path in names)


def test_values_orjson_refuses_are_still_written_and_read_back(tmp_path):
    from agentv_py.evaluators.base import processed_result

    huge = 123456789012345678901234567890
    result = processed_result(name="j", type="code_judge", score=1.0, details={"id": huge, "text": "a\ud800b"})
    row = make_row(eval_id="c1", evaluator_results=[result])
    path = tmp_path / "out.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(row)
    [(number, back)] = list(read_rows(path))
    assert isinstance(back, ResultRow), back
    assert back.evaluator_results[0].details == {"id": huge, "text": "a\ufffdb"}


# -- a row written by pydantic's serialiser reads back as the dict path would write it ---------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    details=st.dictionaries(st.text(max_size=8), _json_values, max_size=4),
    error=st.none() | st.text(),
    output_messages=st.none() | st.lists(st.dictionaries(st.text(max_size=5), st.text(), max_size=2), max_size=2),
    nested=st.booleans(),
    duration=st.none() | st.floats(min_value=0, max_value=1e9),
)
def test_a_row_serialised_by_pydantic_reads_back_as_the_dict_path_writes_it(
    details, error, output_messages, nested, duration
):
    member = EvaluatorResult(
        name="m", type="x", status="processed", score=0.25, passed=False, verdict="fail", details=details
    )
    result = EvaluatorResult(
        name="c",
        type="composite" if nested else "field_accuracy",
        status="processed",
        score=0.5,
        passed=True,
        verdict="partial",
        details=details,
        evaluator_results=[member] if nested else [],
    )
    row = ResultRow(
        timestamp="t",
        eval_id="id",
        dataset="d",
        target="t",
        status="ok",
        score=0.5,
        verdict="partial",
        error=error,
        output_messages=output_messages,
        evaluator_results=[result],
    )
    row.trace.duration_ms = duration
    line = row.to_json_line()
    expected = dumps_row(row.to_json_dict())
    if line is None:  # pydantic refuses it (a lone surrogate): the dict path writes it
        return
    assert orjson.loads(line) == orjson.loads(expected)
    assert list(orjson.loads(line)) == list(orjson.loads(expected))  # the same keys, in the same order


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(2**63 - 1, id="19 digits, within 64 bits"),
        pytest.param(2**64 - 1, id="20 digits, the widest orjson reads"),
        pytest.param(2**64, id="20 digits, one past 64 bits"),
        pytest.param(10**40 + 7, id="41 digits"),
        pytest.param(-(10**25) - 3, id="negative, 26 digits"),
        pytest.param(123456789012345678, id="18 digits"),
        pytest.param(1.0e30, id="a float written with an exponent"),
        pytest.param(0.1234567890123456789, id="a float with 19 digits after the point"),
    ],
)
def test_numbers_in_a_row_are_read_back_exactly(tmp_path, value):
    path = tmp_path / "out.jsonl"
    details = {"n": value, "text": "id 12345678901234567890123 in a string"}
    result = processed_result(name="judge", type="field_accuracy", score=0.5, details=details)
    row = make_row(eval_id="c1", target="x", score=0.5, verdict="fail", evaluator_results=[result])
    with JsonlWriter(path) as writer:
        writer.write(row)
    [(_, back)] = list(read_rows(path))
    assert isinstance(back, ResultRow)
    read = back.evaluator_results[0].details["n"]
    assert read == value and type(read) is type(value)
