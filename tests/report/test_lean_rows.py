"""The lean reader of `agentv metrics` and `agentv compare` (report/lean_rows.py) against the one
reader it stands in for (`jsonl.read_rows` with the row models, `row_field_counts`,
`row_taxonomy`, `walk_fields`): line by line, the same row or the same error text, the same counts
in the same order, the same taxonomy and the same field statuses, over rows with every field
of the models mutated to hostile values, and over hypothesis-generated rows."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentv_py.report.compare_store import ABSENT, OTHER, STATUS
from agentv_py.report.jsonl import read_rows
from agentv_py.report.lean_kinds import row_kinds
from agentv_py.report.lean_rows import field_counts as lean_counts
from agentv_py.report.lean_rows import read_lean_rows, statuses_and_counts
from agentv_py.report.lean_sums import WIDTH, Slots, Sums, case_fields, case_fields_merged, pack, unpack
from agentv_py.scoring.metrics import row_field_counts, walk_fields
from agentv_py.scoring.taxonomy import row_taxonomy


def field(path: str, status: str, expected: Any, actual: Any = "absent", **more: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path, "match": "exact", "expected": expected}
    if actual != "absent":
        entry["actual"] = actual
    entry.update(weight=1.0, status=status, score=1.0 if status == "hit" else 0.0, **more)
    return entry


ITEMS = {
    "path": "line_items",
    "match": "items",
    "expected": [{"d": "a"}, {"d": "b"}],
    "actual": [{"d": "a"}],
    "status": "miss",
    "items": {"expected": 2, "actual": 1, "matched": 1, "correct": 1, "wrong": 0, "missing": 1, "extra": 0},
    "alignment": {"pairs": [{"expected": 0, "actual": 0, "similarity": 1.0, "status": "hit"}], "missing": [1]},
}


def row(**more: Any) -> dict[str, Any]:
    """A valid row: field_accuracy (hits, misses, empties), a judge's metrics, a composite with a
    nested member, a judge's nested dict results and an iou_score."""
    fields = [
        field("invoice_number", "hit", "INV-1", "INV-1"),
        field("currency", "miss", "USD", "usd", reason="values differ"),
        field("total", "miss", 12, 12.0, reason="values differ", diff=0.0, tolerance=0.01, relative=False),
        field("po", "not scored", "PO-1"),
        field("note", "not scored", None, "x"),
        field("date", "miss", "2025-01-02", "02/01/2025", match_="date", parsed="2025-01-02"),
        field("blank", "hit", " ", None),
        field("gone", "could not score", "x", "y"),
        ITEMS,
    ]
    nested_judge = {"name": "inner", "type": "field_accuracy", "details": {"fields": [field("x", "miss", "a", "b")]}}
    data: dict[str, Any] = {
        "timestamp": "2026-11-21T00:00:00.000Z",
        "eval_id": "case-1",
        "dataset": "d",
        "conversation_id": None,
        "target": "t",
        "status": "ok",
        "score": 0.5,
        "verdict": "partial",
        "hits": ["invoice_number"],
        "misses": ["currency (values differ)"],
        "reasoning": "",
        "candidate_answer": "{}",
        "evaluator_results": [
            {
                "name": "fields",
                "type": "field_accuracy",
                "status": "processed",
                "score": 0.5,
                "passed": False,
                "verdict": "partial",
                "weight": 1.0,
                "hits": [],
                "misses": [],
                "reasoning": "",
                "details": {"fields": fields, "aggregation": "weighted_average"},
            },
            {
                "name": "judge",
                "type": "code_judge",
                "status": "processed",
                "score": 1,
                "passed": True,
                "verdict": "pass",
                "details": {
                    "metrics": {"a": {"tp": 1, "tn": 0, "fp": 0, "fn": 1}, "b": {"tp": -1}, "c": [1]},
                    "evaluator_results": [nested_judge, "junk", {"name": "no details"}],
                },
            },
            {
                "name": "all",
                "type": "composite",
                "status": "processed",
                "score": None,
                "passed": True,
                "verdict": None,
                "evaluator_results": [
                    {
                        "name": "member",
                        "type": "field_accuracy",
                        "status": "processed",
                        "score": 1.0,
                        "passed": True,
                        "verdict": "pass",
                        "details": {"fields": [field("invoice_number", "hit", "INV-1", "INV-1")]},
                    }
                ],
            },
            {
                "name": "box",
                "type": "iou_score",
                "status": "processed",
                "score": 1.0,
                "passed": True,
                "verdict": "pass",
                "details": {"iou": 0.8, "threshold": 0.5},
            },
        ],
        "attempts": 1,
        "duration_ms": 3.1,
        "trace": {"duration_ms": 2.9, "judge_token_usage": {"input": 3}, "cache": "hit"},
    }
    data.update(more)
    return data


HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    2**63,
    2**64 + 1,
    "x",
    "",
    " ",
    [],
    ["x", 1],
    {},
    {"a": 1},
    "pass",
    "hit",
    "processed",
    "ok",
]


def _mutations() -> list[tuple[str, Any]]:
    """(id, row) for every key of the row, its trace, an evaluator result and a field entry set
    to each hostile value, or removed."""
    out: list[tuple[str, Any]] = [("valid", row())]
    base = row()
    targets: list[tuple[str, Any]] = [
        ("row", lambda r: r),
        ("trace", lambda r: r["trace"]),
        ("result", lambda r: r["evaluator_results"][0]),
        ("member", lambda r: r["evaluator_results"][2]["evaluator_results"][0]),
        ("field", lambda r: r["evaluator_results"][0]["details"]["fields"][1]),
        ("items-field", lambda r: r["evaluator_results"][0]["details"]["fields"][8]),
        ("metrics", lambda r: r["evaluator_results"][1]["details"]["metrics"]["a"]),
    ]
    extra_keys = {"field": ["weight", "critical", "relative", "count", "items", "alignment", "values", "matcher"]}
    for where, pick in targets:
        keys = list(pick(base)) + extra_keys.get(where, [])
        for key in keys:
            removed = copy.deepcopy(base)
            pick(removed).pop(key, None)
            out.append((f"{where}-{key}-removed", removed))
            for i, value in enumerate(HOSTILE):
                mutated = copy.deepcopy(base)
                pick(mutated)[key] = copy.deepcopy(value)
                out.append((f"{where}-{key}-{i}", mutated))
    out.append(("not-an-object", [1, 2]))
    out.append(("score-huge-int", row(score=2**60 + 1)))
    wide = row()
    wide["evaluator_results"][1]["details"]["metrics"]["a"] = {"tp": 300, "tn": 0, "fp": 2**40, "fn": 1}
    out.append(("counts-over-a-byte", wide))  # compare's record marshalled, not bytes
    return out


def _lines(rows: list[Any]) -> bytes:
    return b"".join(json.dumps(value).encode() + b"\n" for value in rows)


RAW_LINES = [
    b"not json",
    b'{"score": 1' + b"2" * 25 + b"}",
    row_text := json.dumps(row(attempts=10**20)).encode(),
    row_text.replace(b'"tp": 1', b'"tp": 12345678901234567890123'),
    b"[" * 300 + b"]" * 300,
    b"{" + b'"a":{' * 100 + b"}" * 101,
    b"   ",
]


def _summary(counts: Any) -> list[tuple[Any, tuple[int, ...]]]:
    return [(key, value.as_tuple()) for key, value in counts.items()]


def assert_same_reading(path: Path) -> int:
    """Every line read alike by both readers; returns the rows compared."""
    old, new = list(read_rows(path)), list(read_lean_rows(path))
    assert [line for line, _ in old] == [line for line, _ in new]
    for (line, model), (_, lean) in zip(old, new, strict=True):
        if isinstance(model, str):
            assert lean == model, line
            continue
        assert not isinstance(lean, str), (line, lean)
        assert (lean.eval_id, lean.status, lean.score, lean.verdict) == (
            model.eval_id,
            model.status,
            model.score,
            model.verdict,
        )
        assert bool(lean.results) == bool(model.evaluator_results)
        old_problems: list[str] = []
        new_problems: list[str] = []
        expected_counts = row_field_counts(model.evaluator_results, old_problems)
        assert _summary(lean_counts(lean, new_problems)) == _summary(expected_counts), line
        assert new_problems == old_problems
        assert row_kinds(lean) == row_taxonomy(model.evaluator_results)
        statuses, counts = statuses_and_counts(lean, STATUS, OTHER)
        assert statuses == {
            (name, e.path): STATUS.get(e.status, OTHER) for name, e in walk_fields(model.evaluator_results)
        }
        assert counts == dict(_summary(row_field_counts(model.evaluator_results)))
        summed: dict[Any, Any] = {}
        sum_problems: list[str] = []
        assert Sums(summed).add_row(lean, sum_problems) == bool(expected_counts)
        assert _summary(summed) == _summary(expected_counts) and sum_problems == old_problems
        assert _records(lean) == {
            key: (statuses.get(key, ABSENT), *counts.get(key, (0, 0, 0, 0))) for key in {**statuses, **counts}
        }
    return len(old)


def _records(lean: Any) -> dict[Any, tuple[int, ...]]:
    """compare's stored record of a row (`case_fields`, else `case_fields_merged`), by field."""
    slots = Slots(STATUS, OTHER, ABSENT)
    flat = case_fields(lean, slots)
    if flat is None:
        flat = case_fields_merged(lean, slots)
    back = unpack(pack(flat))
    assert list(back) == flat
    key_of = {slot: key for key, slot in slots.of.items()}
    records = {key_of[back[at]]: tuple(back[at + 1 : at + WIDTH]) for at in range(0, len(back), WIDTH)}
    assert len(records) * WIDTH == len(back)  # each field once
    return records


@pytest.mark.parametrize(("label", "value"), _mutations(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_mutated_row_is_read_as_the_row_models_read_it(tmp_path: Path, label: str, value: Any) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(_lines([value, _without_nesting(value)]))
    assert assert_same_reading(path) == 2


def _without_nesting(value: Any) -> Any:
    """The row without its composite and its judge's nested results (compare reads a row of no
    nested result without walking it: `lean_sums.case_fields`), when it has them."""
    flat = copy.deepcopy(value)
    try:
        results = flat["evaluator_results"]
        del results[2]  # the composite
        results[1]["details"].pop("evaluator_results")
    except (TypeError, KeyError, IndexError, AttributeError):
        pass
    return flat


def test_lines_the_fast_path_does_not_take_are_read_by_the_one_reader(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join(RAW_LINES) + b"\n")
    assert assert_same_reading(path) == len(RAW_LINES) - 1  # the blank line is no row


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
ROW_KEYS = st.sampled_from(
    ["score", "status", "verdict", "hits", "eval_id", "trace", "evaluator_results", "attempts", "expected", "actual"]
    + ["path", "weight", "details", "fields", "metrics", "name", "type", "passed", "match", "tp", "items", "reason"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 5), ROW_KEYS, JSON_VALUES), max_size=4))
def test_generated_rows_are_read_as_the_row_models_read_them(tmp_path: Path, edits: list[Any]) -> None:
    value = row()
    places = [
        value,
        value["trace"],
        value["evaluator_results"][0],
        value["evaluator_results"][0]["details"]["fields"][0],
        value["evaluator_results"][1]["details"]["metrics"]["a"],
        value["evaluator_results"][2]["evaluator_results"][0],
    ]
    for where, key, item in edits:
        places[where][key] = item
    path = tmp_path / "generated.jsonl"
    path.write_bytes(_lines([value]))
    assert assert_same_reading(path) == 1


def test_a_valid_row_is_read_without_the_row_models(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(_lines([row(), row(attempts=10**20)]))
    (_, fast), (_, slow) = read_lean_rows(path)
    assert not isinstance(fast, str) and fast.model is None  # read from orjson's dict
    assert not isinstance(slow, str) and slow.model is not None  # a 20-digit run: the one reader
