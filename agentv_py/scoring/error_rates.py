"""Character and word error rates for OCR text fields (`match: cer`, `match: wer`; docs/metrics.md).

CER = (substitutions + deletions + insertions) / characters of the reference, the edit distance
between the character sequences; WER the same over words (Morris et al. 2004, "From WER and RIL to
MER and WIL"; the definitions `jiwer` implements, against which the tests check them). Before
counting, both texts are stripped, and for WER split on whitespace (jiwer's default
transformations); `case_sensitive: false` also folds case. The field's score is 1 - rate (0 when
the rate exceeds 1: more edits than reference); a hit at `threshold` (default 0.9) or above. An
empty reference scores 1 against an empty answer and 0 against any other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentv_py.scoring.jsontext import OutOfRangeNumber
from agentv_py.scoring.match import MatchResult, json_type, type_mismatch
from agentv_py.scoring.thresholds import at_least

DEFAULT_THRESHOLD = 0.9  # a hit at 10% errors or fewer


def _distance(reference: Sequence[Any], hypothesis: Sequence[Any]) -> int:
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(reference, hypothesis))


def _prepared(text: str, case_sensitive: bool) -> str:
    text = text.strip()
    return text if case_sensitive else text.casefold()


def cer(reference: str, hypothesis: str, case_sensitive: bool = True) -> float:
    """The character error rate of `hypothesis` against `reference`."""
    ref, hyp = _prepared(reference, case_sensitive), _prepared(hypothesis, case_sensitive)
    if not ref:
        return 0.0 if not hyp else 1.0
    return _distance(ref, hyp) / len(ref)


def wer(reference: str, hypothesis: str, case_sensitive: bool = True) -> float:
    """The word error rate of `hypothesis` against `reference` (words: split on whitespace)."""
    ref = _prepared(reference, case_sensitive).split()
    hyp = _prepared(hypothesis, case_sensitive).split()
    if not ref:
        return 0.0 if not hyp else 1.0
    return _distance(ref, hyp) / len(ref)


def match_error_rate(
    kind: str, candidate: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD, case_sensitive: bool = True
) -> MatchResult:
    """`match: cer` or `match: wer` on texts (see the module)."""
    if not isinstance(expected, str):
        return MatchResult(
            False, 0.0, f"{kind} match needs texts, expected value is {json_type(expected)}", bad_expected=True
        )
    if not isinstance(candidate, str) or isinstance(candidate, OutOfRangeNumber):
        return MatchResult(False, 0.0, type_mismatch(candidate, expected))
    rate = (cer if kind == "cer" else wer)(expected, candidate, case_sensitive)
    score = max(0.0, 1.0 - rate)
    info = {"similarity": round(score, 6), "threshold": threshold}  # 1 - rate, as the field records it
    if at_least(score, threshold):
        return MatchResult(True, score, info=info)
    return MatchResult(False, 0.0, f"{kind.upper()} {rate:.2f}: 1 - {kind.upper()} < {threshold:.2f}", info)
