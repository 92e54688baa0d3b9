"""`report.misses.Miss.short`: a miss shortened for the terminal loses the end of its reason,
never its field path or its values."""

from __future__ import annotations

import pytest

from agentv_py.evaluators.base import processed_result
from agentv_py.report.misses import Miss, miss_parts

DATE = {
    "path": "line_items[*].service_date",
    "match": "date",
    "expected": "2025-01-15",
    "actual": "16-Jan-2025",
    "status": "miss",
    "reason": "date mismatch: got 2025-01-16, expected 2025-01-15",
}
RESULT = processed_result(name="fa", type="field_accuracy", score=0.0, details={"fields": [DATE]})
DATE_MISS = "line_items[*].service_date (date mismatch: got 2025-01-16, expected 2025-01-15)"
VALUES = "expected '2025-01-15', got '16-Jan-2025')"


@pytest.mark.parametrize(
    ("miss", "chars", "shown"),
    [
        (DATE_MISS, 200, f"line_items[*].service_date (date mismatch: got 2025-01-16, expected 2025-01-15; {VALUES}"),
        (DATE_MISS, 60, f"line_items[*].service_date (date mismatch: got…; {VALUES}"),
        (DATE_MISS, 10, f"line_items[*].service_date (date mismatch: got…; {VALUES}"),  # 20 of its reason at least
        ("fa: " + DATE_MISS, 60, f"fa: line_items[*].service_date (date mismatch: got…; {VALUES}"),  # after the prefix
        ("a judge's words about the answer, at length", 30, "a judge's words about the…"),  # at a word's end
        ("averyveryveryverylongwordthatgoesonandon", 20, "averyveryveryverylo…"),
    ],
    ids=["room", "reason-cut", "least-reason", "evaluator-prefix", "judge-text", "one-word"],
)
def test_a_shortened_miss_keeps_its_path_and_values(miss, chars, shown):
    (found,) = miss_parts([miss], [RESULT])
    assert found.short(chars) == shown
    assert str(found) == str(found).strip() and found.short(10_000) == str(found)


def test_a_miss_without_values_is_its_text():
    assert str(Miss("other (value mismatch)")) == "other (value mismatch)"
    assert miss_parts(["x (value mismatch)"], []) == [Miss("x (value mismatch)")]
