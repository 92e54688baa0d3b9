"""field_accuracy (SPEC §3.1): rules, aggregation, details, and the worked examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.fields import FieldAccuracyConfig


def config(fields: list[dict[str, Any]], **extra: Any) -> FieldAccuracyConfig:
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": fields, **extra})


def run(cfg: FieldAccuracyConfig, answer: str, expected: Any):
    return run_evaluator(cfg, EvalContext("case-1", "ds", Path("."), answer, expected))


def test_worked_example_weights():
    """SPEC: weights [1.0, 0.5, 0.8], field scores [1, 0, 1] -> 1.8/2.3 ~ 0.783, partial."""
    cfg = config([{"path": "a", "weight": 1.0}, {"path": "b", "weight": 0.5}, {"path": "c", "weight": 0.8}])
    result = run(cfg, '{"a": 1, "b": 0, "c": 3}', {"a": 1, "b": 2, "c": 3})
    assert result.score == pytest.approx(1.8 / 2.3)
    assert round(result.score, 3) == 0.783
    assert result.verdict == "partial" and result.passed is False
    assert result.hits == ["a", "c"] and result.misses == ["b (value mismatch)"]


def test_worked_example_three_of_four():
    """SPEC: 4 fields with 3 matches -> 0.75, partial, `3/4 fields matched`."""
    cfg = config([{"path": p} for p in "abcd"])
    result = run(cfg, '{"a": 1, "b": 2, "c": 3, "d": 0}', {"a": 1, "b": 2, "c": 3, "d": 4})
    assert (result.score, result.verdict, result.reasoning) == (0.75, "partial", "3/4 fields matched")


def test_required_missing_and_null_are_misses():
    cfg = config([{"path": "invoice_number"}, {"path": "currency"}])
    result = run(cfg, '{"currency": null}', {"invoice_number": "INV-1", "currency": "USD"})
    assert result.misses == [
        "invoice_number (required, missing)",
        "currency (null value)",
    ]
    assert result.score == 0.0


def test_optional_missing_or_null_is_not_scored():
    cfg = config([{"path": "a"}, {"path": "b", "required": False}, {"path": "c", "required": False}])
    result = run(cfg, '{"a": 1, "c": null}', {"a": 1, "b": 2, "c": 3})
    assert result.score == 1.0 and result.misses == []
    assert result.reasoning == "1/1 fields matched (2 not scored)"
    statuses = {f["path"]: (f["status"], f.get("reason")) for f in result.details["fields"]}
    assert statuses == {
        "a": ("hit", None),
        "b": ("not scored", "optional, missing"),
        "c": ("not scored", "optional, null value"),
    }


def test_expected_absent_field_is_not_scored():
    cfg = config([{"path": "a"}, {"path": "po_number"}])
    result = run(cfg, '{"a": 1, "po_number": "X"}', {"a": 1})
    assert result.score == 1.0
    assert result.details["fields"][1]["reason"] == "no expected value"


def test_null_expected_and_null_candidate_match():
    result = run(config([{"path": "a"}]), '{"a": null}', {"a": None})
    assert result.score == 1.0 and result.hits == ["a"]


def test_all_or_nothing():
    cfg = config([{"path": "a"}, {"path": "b"}], aggregation="all_or_nothing")
    assert run(cfg, '{"a": 1, "b": 2}', {"a": 1, "b": 2}).score == 1.0
    assert run(cfg, '{"a": 1, "b": 3}', {"a": 1, "b": 2}).score == 0.0


def test_fuzzy_field_scores_its_similarity():
    cfg = config([{"path": "supplier.name", "match": "fuzzy"}])
    result = run(cfg, '{"supplier": {"name": "Acme - Shipping"}}', {"supplier": {"name": "Acme Shipping"}})
    assert result.score == pytest.approx(0.8667, abs=1e-4)
    assert result.details["fields"][0]["similarity"] == pytest.approx(0.866667)


def test_details_carry_the_rule_numbers():
    cfg = config(
        [
            {"path": "total", "match": "numeric_tolerance", "tolerance": 1},
            {"path": "date", "match": "date", "formats": ["DD-MMM-YYYY"]},
        ]
    )
    result = run(cfg, '{"total": 1889.5, "date": "15-JAN-2025"}', {"total": 1889, "date": "2025-01-15"})
    total, date = result.details["fields"]
    assert total == {
        "path": "total",
        "match": "numeric_tolerance",
        "expected": 1889,
        "actual": 1889.5,
        "weight": 1.0,
        "diff": 0.5,
        "tolerance": 1.0,
        "relative": False,
        "status": "hit",
        "score": 1.0,
    }
    assert (date["parsed"], date["expected_date"], date["status"]) == ("2025-01-15", "2025-01-15", "hit")


def test_indexed_paths():
    cfg = config([{"path": "line_items[0].description"}, {"path": "line_items[1].amount"}])
    result = run(
        cfg, '{"line_items": [{"description": "Freight"}]}', {"line_items": [{"description": "Freight"}, {"amount": 5}]}
    )
    assert result.misses == ["line_items[1].amount (required, missing)"]


def test_unparseable_answer_scores_zero_with_a_miss():
    result = run(config([{"path": "a"}]), "I could not read the invoice.", {"a": 1})
    assert (result.status, result.score, result.misses) == (
        "processed",
        0.0,
        ["Failed to parse candidate answer as JSON"],
    )


def test_fenced_answer_is_accepted():
    result = run(config([{"path": "a"}]), 'Sure:\n```json\n{"a": 1}\n```', {"a": 1})
    assert result.score == 1.0


def test_no_expected_value_is_skipped_not_scored():
    result = run(config([{"path": "a"}]), '{"a": 1}', None)
    assert (result.status, result.score, result.verdict) == ("skipped", None, None)


def test_no_scored_field_is_skipped():
    result = run(config([{"path": "a", "required": False}]), "{}", {"a": 1})
    assert result.status == "skipped"
    assert result.reasoning == "no field was scored (0/1 had an expected value and an answer)"


def test_malformed_path_is_missing_not_an_exception():
    result = run(config([{"path": "a..b"}]), '{"a": {"b": 1}}', {"a": {"b": 1}})
    assert result.status == "skipped"  # the path resolves to nothing on either side


def test_zero_weight_fields_give_zero_not_a_crash():
    result = run(config([{"path": "a", "weight": 0}]), '{"a": 1}', {"a": 1})
    assert result.status == "processed" and result.score == 0.0


KEPT_CASES = {
    "hits and misses": (
        [{"path": "a"}, {"path": "b", "match": "numeric_tolerance", "tolerance": 1}],
        '{"a": 1, "b": 2.5}',
    ),
    "optional and missing": ([{"path": "a"}, {"path": "b", "required": False}], '{"c": null}'),
    "fuzzy and date": (
        [{"path": "n", "match": "fuzzy"}, {"path": "d", "match": "date", "formats": ["DD-MMM-YYYY"]}],
        '{"n": "Acme Shiping", "d": "02-Feb-2025", "extra": [1, {"x": null}]}',
    ),
    "items": ([{"path": "rows", "match": "items", "fields": [{"path": "q"}]}], '{"rows": [{"q": 1}, {"q": 3}]}'),
}
KEPT_TRUTH = {"a": 1, "b": 2, "n": "Acme Shipping", "d": "2025-02-02", "rows": [{"q": 1}, {"q": 2}]}


@pytest.mark.parametrize("fields, answer", KEPT_CASES.values(), ids=KEPT_CASES.keys())
def test_kept_field_outcomes_are_what_the_details_read_back(fields, answer):
    """The evaluator keeps the typed outcomes its details were dumped from (`keep_fields`), so the
    summary and metrics do not read them back: they must be exactly what reading back gives, and
    a result read back from its row must still equal it."""
    from agentv_py.models.field_results import read_fields
    from agentv_py.models.results import EvaluatorResult

    result = run(config(fields), answer, KEPT_TRUTH)
    assert result.field_outcomes() == read_fields(result.details)
    assert [f.model_fields_set for f in result.field_outcomes()] == [
        f.model_fields_set for f in read_fields(result.details)
    ]
    again = EvaluatorResult.model_validate_json(result.model_dump_json())
    assert again == result and result == again  # the cache is not part of equality
    assert again.field_outcomes() == result.field_outcomes()
