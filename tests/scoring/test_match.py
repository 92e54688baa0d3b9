"""Matchers (SPEC §3.1), table-driven."""

from __future__ import annotations

import pytest

from agentv_py.models.fields import DEFAULT_DATE_FORMATS
from agentv_py.scoring.dates import match_date, parse_date
from agentv_py.scoring.match import json_equal, match_exact, match_fuzzy, match_numeric, normalize_text

EXACT = [
    ("same-string", "INV-1", "INV-1", True, None),
    ("int-equals-float", 1889, 1889.0, True, None),
    ("deep-object-key-order", {"a": [1, {"b": 2}], "c": None}, {"c": None, "a": [1.0, {"b": 2}]}, True, None),
    ("bool-is-not-one", True, 1, False, "type mismatch: got boolean, expected number"),
    ("string-is-not-number", "100", 100, False, "type mismatch: got string, expected number"),
    ("null-vs-string", None, "x", False, "type mismatch: got null, expected string"),
    ("array-vs-object", [1], {"a": 1}, False, "type mismatch: got array, expected object"),
    ("different-string", "INV-2", "INV-1", False, "value mismatch"),
    ("list-length-differs", [1, 2], [1], False, "value mismatch"),
    ("nested-bool-vs-int", {"a": [True]}, {"a": [1]}, False, "value mismatch"),
]


@pytest.mark.parametrize("candidate, expected, passed, reason", [c[1:] for c in EXACT], ids=[c[0] for c in EXACT])
def test_match_exact(candidate, expected, passed, reason):
    result = match_exact(candidate, expected)
    assert (result.passed, result.reason) == (passed, reason)
    assert result.score == (1.0 if passed else 0.0)


NUMERIC = [
    ("within-absolute", 1889.5, 1889, 1.0, False, True, None),
    ("epsilon-1.1-vs-1.0", 1.1, 1.0, 0.1, False, True, None),
    ("on-the-edge", 1890, 1889, 1.0, False, True, None),
    ("outside", 1894, 1889, 1.0, False, False, "outside tolerance: diff=5.00, tolerance=1"),
    ("numeric-string", "1889.40", 1889, 1.0, False, True, None),
    ("string-with-spaces", " 12 ", 12, 0, False, True, None),
    ("bool-is-not-number", True, 1, 1.0, False, False, "non-numeric value"),
    ("words", "about 12", 12, 1.0, False, False, "non-numeric value"),
    ("comma-thousands-not-a-number", "1,889", 1889, 1.0, False, False, "non-numeric value"),
    ("nan-string", "NaN", 12, 1.0, False, False, "invalid numeric value"),
    ("infinity-float", float("inf"), 12, 1.0, False, False, "invalid numeric value"),
    ("relative-within", 105, 100, 0.05, True, True, None),
    ("relative-outside", 106, 100, 0.05, True, False, "outside tolerance: relative diff=0.0600, tolerance=0.05"),
    ("relative-zero-expected-falls-back-to-absolute", 0.01, 0, 0.05, True, True, None),
    ("expected-not-numeric", 5, "n/a", 1.0, False, False, "expected value is not numeric: string 'n/a'"),
    ("zero-tolerance-exact", 7, 7.0, 0, False, True, None),
    # Integers and plain decimal strings are compared exactly, never through a float.
    ("big-ints-differ-by-one", 10**20 + 1, 10**20, 0, False, False, "outside tolerance: diff=1.00, tolerance=0"),
    ("past-2-53", 2**53 + 1, 2**53, 0, False, False, "outside tolerance: diff=1.00, tolerance=0"),
    ("big-ints-equal", 10**20, 10**20, 0, False, True, None),
    (
        "decimal-strings-differ",
        "100000000000000000001",
        "100000000000000000000",
        0.5,
        False,
        False,
        "outside tolerance: diff=1.00, tolerance=0.5",
    ),  # fmt: skip
    ("decimal-strings-exact-tolerance", "1.3", "1.0", 0.3, False, True, None),  # 0.3 is 3/10, not a double
    ("decimal-string-vs-int", "1889.50", 1889, 0.5, False, True, None),
    ("decimal-string-just-outside", "1889.51", 1889, 0.5, False, False, "outside tolerance: diff=0.51, tolerance=0.5"),
    ("relative-exact", 10**20 + 10**18, 10**20, 0.01, True, True, None),
    (
        "relative-exact-outside",
        10**20 + 10**18 + 1,
        10**20,
        0.01,
        True,
        False,
        "outside tolerance: relative diff=0.0100, tolerance=0.01",
    ),  # fmt: skip
    ("a-float-is-compared-as-a-float", 1e20, 10**20 + 1, 0, False, True, None),  # float noise allowed
]


@pytest.mark.parametrize(
    "candidate, expected, tolerance, relative, passed, reason", [c[1:] for c in NUMERIC], ids=[c[0] for c in NUMERIC]
)
def test_match_numeric(candidate, expected, tolerance, relative, passed, reason):
    result = match_numeric(candidate, expected, tolerance, relative)
    assert (result.passed, result.reason) == (passed, reason)


FUZZY = [
    ("acme-dash", "Acme - Shipping", "Acme Shipping", "levenshtein", 0.85, True, 0.867),
    ("casefold", "ACME CORP", "Acme Corp", "levenshtein", 0.85, True, 1.0),
    ("whitespace-collapsed", "  Acme \t  Corp ", "Acme Corp", "levenshtein", 0.85, True, 1.0),
    ("nfkc", "ＡＣＭＥ", "acme", "levenshtein", 0.85, True, 1.0),
    ("jaro-winkler-corp", "Microsoft Corp", "Microsoft Corporation", "jaro_winkler", 0.85, True, 0.933),
    ("below-threshold", "Acme", "Zenith Logistics", "levenshtein", 0.85, False, 0.0),
]


@pytest.mark.parametrize(
    "candidate, expected, algorithm, threshold, passed, score", [c[1:] for c in FUZZY], ids=[c[0] for c in FUZZY]
)
def test_match_fuzzy(candidate, expected, algorithm, threshold, passed, score):
    result = match_fuzzy(candidate, expected, threshold, algorithm)
    assert result.passed == passed
    assert result.score == pytest.approx(score, abs=1e-3)


def test_fuzzy_miss_reason_shows_similarity_and_threshold():
    # "acme inc" vs "acme shipping lines": Levenshtein distance 12 over 19 characters.
    result = match_fuzzy("Acme Inc", "Acme Shipping Lines", 0.85)
    assert result.reason == "similarity 0.37 < 0.85"


def test_fuzzy_case_sensitive_keeps_case():
    assert match_fuzzy("ACME CORP", "Acme Corp", 0.85, case_sensitive=True).passed is False


def test_fuzzy_needs_strings():
    assert match_fuzzy(12, "12", 0.85).reason == "type mismatch: got number, expected string"


def test_normalize_text():
    assert normalize_text("  Ａcme\u00a0 Corp  ") == "acme corp"


UNPARSEABLE = "unparseable date"
DATES = [
    ("iso-equal", "2025-01-15", "2025-01-15", (), True, None),
    ("dd-mmm-yyyy-upper", "15-JAN-2025", "2025-01-15", ("DD-MMM-YYYY",), True, None),
    ("iso-datetime-ignores-time-and-zone", "2025-01-15T23:30:00-08:00", "2025-01-15", (), True, None),
    ("month-name", "January 15, 2025", "2025-01-15", ("MMMM D, YYYY",), True, None),
    ("two-digit-year", "15/01/25", "2025-01-15", ("DD/MM/YY",), True, None),
    ("us-default-order", "01/15/2025", "2025-01-15", DEFAULT_DATE_FORMATS, True, None),
    ("mismatch", "2025-01-16", "2025-01-15", (), False, "date mismatch: got 2025-01-16, expected 2025-01-15"),
    ("unparseable", "next tuesday", "2025-01-15", (), False, UNPARSEABLE),
    ("impossible-date", "2025-02-30", "2025-01-15", (), False, UNPARSEABLE),
    ("not-a-string", 20250115, "2025-01-15", (), False, UNPARSEABLE),
    ("bad-expected", "2025-01-15", "soon", (), False, "unparseable expected date: 'soon'"),
]


@pytest.mark.parametrize(
    "candidate, expected, formats, passed, reason", [c[1:] for c in DATES], ids=[c[0] for c in DATES]
)
def test_match_date(candidate, expected, formats, passed, reason):
    result = match_date(candidate, expected, formats or DEFAULT_DATE_FORMATS)
    assert (result.passed, result.reason) == (passed, reason)


def test_parse_date_tries_formats_in_order():
    # 03/04/2025 is March 4 under MM/DD/YYYY (listed first), April 3 under DD/MM/YYYY.
    assert parse_date("03/04/2025", ("MM/DD/YYYY", "DD/MM/YYYY")).isoformat() == "2025-03-04"
    assert parse_date("03/04/2025", ("DD/MM/YYYY", "MM/DD/YYYY")).isoformat() == "2025-04-03"


def test_json_equal_is_symmetric_for_bool_and_int():
    assert not json_equal(1, True) and not json_equal(True, 1) and json_equal(False, False)
