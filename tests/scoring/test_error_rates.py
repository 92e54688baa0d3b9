"""CER and WER (scoring/error_rates.py) against `jiwer`, whose default transformations they follow:
a table of OCR-like pairs and 500 generated ones (substitutions, insertions, deletions, doubled
spaces, case)."""

from __future__ import annotations

import random

import pytest

from agentv_py.scoring.error_rates import cer, match_error_rate, wer

jiwer = pytest.importorskip("jiwer")

PAIRS = [
    ("INVOICE NO 12345", "INVOICE NO 12345"),
    ("INVOICE NO 12345", "INV0ICE NO 12345"),
    ("INVOICE NO 12345", "INVOICE N0 1234"),
    ("Total due: 1,234.50 EUR", "Total  due 1.234,50 EUR"),
    ("Acme Shipping Ltd", "acme shipping ltd"),
    ("the quick brown fox", "quick brown the fox"),
    ("a", "abc def ghi"),
    ("  padded text ", "padded text"),
    ("Straße 5", "Strasse 5"),
]


@pytest.mark.parametrize(("reference", "hypothesis"), PAIRS, ids=[f"pair-{i}" for i in range(len(PAIRS))])
def test_cer_and_wer_match_jiwer(reference, hypothesis):
    assert cer(reference, hypothesis) == pytest.approx(jiwer.cer(reference, hypothesis), abs=1e-12)
    assert wer(reference, hypothesis) == pytest.approx(jiwer.wer(reference, hypothesis), abs=1e-12)


def _noisy(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(0, 4)):
        edit = rng.random()
        at = rng.randrange(len(chars) + 1)
        if edit < 0.3 and chars:
            del chars[min(at, len(chars) - 1)]
        elif edit < 0.6:
            chars.insert(at, rng.choice("abcxyz01 "))
        elif chars:
            chars[min(at, len(chars) - 1)] = rng.choice("ABCxyz89")
    return "".join(chars)


@pytest.mark.parametrize("seed", range(5), ids=lambda s: f"batch-{s}")
def test_generated_pairs_match_jiwer(seed):
    rng = random.Random(seed)
    words = ["invoice", "total", "Acme", "ltd", "12.50", "EUR", "due", "date", "2025-01-31", "Straße"]
    for _ in range(100):
        reference = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        hypothesis = _noisy(reference, rng)
        if not hypothesis.strip():
            continue  # jiwer refuses an empty hypothesis after its transformations
        assert cer(reference, hypothesis) == pytest.approx(jiwer.cer(reference, hypothesis), abs=1e-12)
        assert wer(reference, hypothesis) == pytest.approx(jiwer.wer(reference, hypothesis), abs=1e-12)


@pytest.mark.parametrize(
    ("kind", "expected", "answer", "threshold", "passed", "score"),
    [
        ("cer", "INVOICE NO 12345", "INV0ICE NO 12345", 0.9, True, 1 - 1 / 16),
        ("cer", "INVOICE NO 12345", "INV0ICE N0 1234", 0.9, False, 0.0),
        ("wer", "the quick brown fox", "the quick brown fax", 0.7, True, 0.75),
        ("wer", "a", "abc def ghi", 0.0, True, 0.0),  # a rate over 1 scores 0
        ("cer", "", "", 0.9, True, 1.0),
    ],
    ids=["cer-hit", "cer-miss", "wer-hit", "wer-over-one", "empty"],
)
def test_the_matcher_scores_one_minus_the_rate(kind, expected, answer, threshold, passed, score):
    result = match_error_rate(kind, answer, expected, threshold)
    assert (result.passed, result.score) == (passed, pytest.approx(score))


def test_case_folding_is_an_option_and_a_non_text_truth_cannot_be_scored():
    assert match_error_rate("cer", "acme", "ACME").score == 0.0
    assert match_error_rate("cer", "acme", "ACME", case_sensitive=False).score == 1.0
    refused = match_error_rate("wer", "x", {"a": 1})
    assert refused.bad_expected and refused.reason == "wer match needs texts, expected value is object"
