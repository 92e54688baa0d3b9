"""field_accuracy miss texts: SPEC §3.1's `<path> (<reason>)` exactly in the row, and as the
summary, Markdown, HTML and JUnit show them, the expected and actual values read from the field's
details entry (shortened, escaped: a value is data and never forges a line)."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_py.evaluators.field_accuracy import score_fields
from agentv_py.models.field_results import to_details
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.report.misses import misses_with_values
from agentv_py.scoring.match import formats_tried, shown
from agentv_py.scoring.paths import MISSING

DEFAULT_FORMATS = "ISO 8601, YYYY-MM-DD, DD-MMM-YYYY, MM/DD/YYYY, DD/MM/YYYY"

# (id, field options, expected, answer, the miss)
MISSES = [
    (
        "numeric-outside-tolerance",
        {"match": "numeric_tolerance", "tolerance": 0.1},
        12,
        12.5,
        "f (outside tolerance: diff=0.50, tolerance=0.1; expected 12, got 12.5)",
    ),
    (
        "numeric-not-a-number",
        {"match": "numeric_tolerance", "tolerance": 0},
        5,
        "lots",
        "f (non-numeric value; expected 5, got 'lots')",
    ),
    (
        "numeric-nan",
        {"match": "numeric_tolerance", "tolerance": 0},
        5,
        "NaN",
        "f (invalid numeric value; expected 5, got 'NaN')",
    ),
    ("exact-value-mismatch", {}, "INV-1", "INV-2", "f (value mismatch; expected 'INV-1', got 'INV-2')"),
    ("exact-is-case-sensitive", {}, "usd", "USD", "f (value mismatch; expected 'usd', got 'USD')"),
    (
        "exact-string-is-not-a-number",
        {},
        100,
        "100",
        "f (type mismatch: got string, expected number; expected 100, got '100')",
    ),
    ("exact-true-is-not-1", {}, 1, True, "f (type mismatch: got boolean, expected number; expected 1, got true)"),
    ("required-missing", {}, "INV-1", MISSING, "f (required, missing; expected 'INV-1', got nothing)"),
    ("null-answer", {}, "INV-1", None, "f (null value; expected 'INV-1', got null)"),
    (
        "object-value-as-json",
        {},
        {"a": [1, 2]},
        {"a": [1]},
        'f (value mismatch; expected {"a": [1, 2]}, got {"a": [1]})',
    ),
    (
        "fuzzy-below-threshold",
        {"match": "fuzzy", "threshold": 0.9},
        "Acme GmbH",
        "Zenith AG",
        "f (similarity 0.00 < 0.90; expected 'Acme GmbH', got 'Zenith AG')",
    ),
    (
        "date-mismatch",
        {"match": "date"},
        "2025-01-15",
        "16-Jan-2025",
        "f (date mismatch: got 2025-01-16, expected 2025-01-15; expected '2025-01-15', got '16-Jan-2025')",
    ),
    (
        "date-unparseable-default-formats",
        {"match": "date"},
        "2025-01-15",
        "15/13/2025",
        "f (unparseable date; expected '2025-01-15', got '15/13/2025')",
    ),
    (
        "date-formats-replace-the-default-list",
        {"match": "date", "formats": ["DD.MM.YYYY"]},
        "2025-01-15",
        "01/15/2025",
        "f (unparseable date; expected '2025-01-15', got '01/15/2025')",
    ),
    (
        "long-value-shortened",
        {},
        "x",
        "y" * 500,
        "f (value mismatch; expected 'x', got '" + "y" * 36 + "...)",
    ),
    (
        "control-characters-escaped",
        {},
        "x",
        "a\nf (value mismatch)\x1b[2J\u2028",
        "f (value mismatch; expected 'x', got 'a\\nf (value mismatch)\\x1b[2J\\u2028')",
    ),
]


def outcome(options: dict[str, Any], expected: Any, answer: Any) -> dict[str, Any]:
    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [{"path": "f", **options}]})
    as_doc = lambda v: {} if v is MISSING else {"f": v}  # noqa: E731
    return score_fields(config, as_doc(answer), as_doc(expected))


def as_result(scored: dict[str, Any], name: str = "f") -> EvaluatorResult:
    return EvaluatorResult(
        name=name,
        type="field_accuracy",
        status="processed",
        score=scored["score"],
        passed=False,
        verdict="fail",
        misses=scored["misses"],
        details={"fields": scored["fields"]},
    )


def miss(options: dict[str, Any], expected: Any, answer: Any) -> list[str]:
    """The misses as shown: the row's texts with the values of their details entries."""
    scored = outcome(options, expected, answer)
    result = as_result(scored)
    return misses_with_values(result.misses, [result])


@pytest.mark.parametrize("options, expected, answer, text", [c[1:] for c in MISSES], ids=[c[0] for c in MISSES])
def test_miss_text(options, expected, answer, text):
    bare = text.split("; expected ")[0] + ")"  # the row holds SPEC's text, no values
    assert outcome(options, expected, answer)["misses"] == [bare]
    assert miss(options, expected, answer) == [text]


def test_the_seed_texts_hold_exactly():
    """SPEC §3.1 rules 2 and 3, the texts of the seed dataset."""
    config = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "fields": [{"path": "invoice.number"}, {"path": "invoice.total"}]}
    )
    expected = {"invoice": {"number": "INV-001", "total": 12.5}}
    scored = score_fields(config, {"invoice": {"total": None}}, expected)
    assert scored["misses"] == ["invoice.number (required, missing)", "invoice.total (null value)"]
    number, total = (to_details(field) for field in scored["fields"])  # as the row writes them
    assert "actual" not in number and number["expected"] == "INV-001"
    assert total["actual"] is None and total["expected"] == 12.5


def test_values_follow_an_evaluator_name_prefix_and_skip_other_texts():
    scored = outcome({}, "INV-1", "INV-2")
    result = as_result(scored, "fa")
    row_misses = ["fa: f (value mismatch)", "judge: f (value mismatch) but not a field", "other"]
    assert misses_with_values(row_misses, [result]) == [
        "fa: f (value mismatch; expected 'INV-1', got 'INV-2')",
        "judge: f (value mismatch) but not a field",
        "other",
    ]
    assert misses_with_values(row_misses, [result], limit=1) == [
        "fa: f (value mismatch; expected 'INV-1', got 'INV-2')"
    ]


def test_an_unparseable_date_names_the_formats_tried_in_its_details():
    (entry,) = outcome({"match": "date", "formats": ["DD.MM.YYYY"]}, "2025-01-15", "01/15/2025")["fields"]
    assert entry.formats_tried == "ISO 8601, DD.MM.YYYY"
    (entry,) = outcome({"match": "date"}, "2025-01-15", "15/13/2025")["fields"]
    assert entry.formats_tried == DEFAULT_FORMATS


def test_a_miss_is_one_printable_line_whatever_the_value():
    hostile = ["\n\r\x00\x1b]8;;http://x\x07", "\u2028\u2029\x85", {"k\n": "v\x1b"}, ["\t"] * 100]
    for value in hostile:
        (text,) = miss({}, "x", value)
        assert text.isprintable() and len(text) < 120, text


def test_formats_tried_names_at_most_eight():
    formats = tuple(f"F{i}" for i in range(11))
    assert formats_tried(formats) == "ISO 8601, F0, F1, F2, F3, F4, F5, F6, F7, and 3 more"
    assert formats_tried(("DD\nMM",)) == "ISO 8601, DD\\nMM"


@pytest.mark.parametrize(
    "value, text",
    [(None, "null"), (False, "false"), (12.5, "12.5"), ("it's", '"it\'s"'), ([1, "a"], '[1, "a"]')],
    ids=["null", "boolean", "number", "string-with-quote", "array"],
)
def test_shown(value, text):
    assert shown(value) == text
