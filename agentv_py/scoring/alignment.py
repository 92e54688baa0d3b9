"""Line-item alignment (SPEC §5): pair expected items with an answer's items, order-insensitively.

Item similarity is the mean over the match fields present on both sides of a value similarity
(normalised Levenshtein for strings, exact for numbers and dates); pairs under the threshold never
match; `greedy` takes the best pairs first, `optimal` maximises the total (the pairs scipy's
`linear_sum_assignment` gives); between equal keys, the pairs whose other fields agree. Shared by
`field_accuracy`'s `match: items` (`scoring.items`), `agentv metrics` and the judge SDK. Pure;
numpy and rapidfuzz vectorise the similarity matrix when they are importable.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agentv_py.scoring.assignment import greedy_pairs, linear_sum_assignment
from agentv_py.scoring.paths import MISSING, is_empty, resolve
from agentv_py.scoring.thresholds import lowest

Assignment = Literal["greedy", "optimal"]


def _as_date(value: Any) -> dt.date | None:
    if not isinstance(value, str):
        return None
    from agentv_py.scoring.dates import parse_date

    return parse_date(value, ("YYYY-MM-DD",))


def value_similarity(a: Any, b: Any) -> float:
    """Numbers and dates: exact (1 or 0); strings: normalised Levenshtein on trimmed, case-folded
    text; anything else: JSON equality."""
    from agentv_py.scoring.match import json_equal, similarity

    numeric = (int, float)
    if isinstance(a, numeric) and isinstance(b, numeric) and not isinstance(a, bool) and not isinstance(b, bool):
        return 1.0 if a == b else 0.0
    date_a, date_b = _as_date(a), _as_date(b)
    if date_a is not None and date_b is not None:
        return 1.0 if date_a == date_b else 0.0
    if isinstance(a, str) and isinstance(b, str):
        return similarity(a.strip().casefold(), b.strip().casefold())
    return 1.0 if json_equal(a, b) else 0.0


def item_similarity(expected: Any, parsed: Any, match_fields: Sequence[str]) -> float:
    """Mean value similarity over the match fields present (non-empty) on both sides. None such:
    1 when every match field is empty on both sides (nothing ≡ nothing: two items without a
    description pair by their other fields, `align_items`' agreement), else 0."""
    if not isinstance(expected, dict) or not isinstance(parsed, dict):
        return 0.0
    scores = []
    for path in match_fields:
        a, b = resolve(expected, path), resolve(parsed, path)
        if not is_empty(a) and not is_empty(b):
            scores.append(value_similarity(a, b))
    if scores:
        return sum(scores) / len(scores)
    return 1.0 if _keyless(expected, match_fields) and _keyless(parsed, match_fields) else 0.0


def _keyless(item: Any, match_fields: Sequence[str]) -> bool:
    """An object with every match field empty."""
    return isinstance(item, dict) and all(is_empty(resolve(item, path)) for path in match_fields)


class Alignment:
    """Matched (expected index, parsed index, similarity) pairs and what stayed unmatched."""

    __slots__ = ("pairs", "unmatched_expected", "unmatched_parsed")

    def __init__(self, pairs: list[tuple[int, int, float]], n_expected: int, n_parsed: int) -> None:
        self.pairs = sorted(pairs)
        used_e = {i for i, _, _ in pairs}
        used_p = {j for _, j, _ in pairs}
        self.unmatched_expected = [i for i in range(n_expected) if i not in used_e]
        self.unmatched_parsed = [j for j in range(n_parsed) if j not in used_p]

    def to_dict(self, limit: int = 100) -> dict[str, Any]:
        """JSON form, with at most `limit` pairs listed (the counts are always complete)."""
        return {
            "pairs": [{"expected": i, "parsed": j, "similarity": round(s, 4)} for i, j, s in self.pairs[:limit]],
            "pairs_total": len(self.pairs),
            "truncated": len(self.pairs) > limit,
            "unmatched_expected": self.unmatched_expected[:limit],
            "unmatched_parsed": self.unmatched_parsed[:limit],
        }


def similarity_matrix(expected: Sequence[Any], parsed: Sequence[Any], match_fields: Sequence[str]) -> list[list[float]]:
    """item_similarity for every (expected, parsed) pair: vectorised with numpy and rapidfuzz
    when they are importable (a 200 x 200 matrix in milliseconds), else pure Python."""
    try:
        rows: list[list[float]] = _similarity_matrix_vectorised(expected, parsed, match_fields).tolist()
        return rows
    except ImportError:
        return [[item_similarity(e, p, match_fields) for p in parsed] for e in expected]


def _similarity_matrix_vectorised(expected: Sequence[Any], parsed: Sequence[Any], match_fields: Sequence[str]) -> Any:
    import numpy as np
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    from agentv_py.scoring.match import json_equal

    def values(items: Sequence[Any], path: str) -> list[Any]:
        return [resolve(item, path) if isinstance(item, dict) else MISSING for item in items]

    def kind(value: Any) -> str | None:
        if is_empty(value):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return "other"
        return "num" if isinstance(value, (int, float)) else "str"

    shape = (len(expected), len(parsed))
    sums, counts = np.zeros(shape), np.zeros(shape)
    for path in match_fields:
        a, b = values(expected, path), values(parsed, path)
        ka, kb = [kind(v) for v in a], [kind(v) for v in b]
        counts += np.outer([k is not None for k in ka], [k is not None for k in kb])
        for which in ("str", "num"):
            rows = [i for i, k in enumerate(ka) if k == which]
            cols = [j for j, k in enumerate(kb) if k == which]
            if not rows or not cols:
                continue
            if which == "num":
                block = np.equal.outer(np.array([float(a[i]) for i in rows]), np.array([float(b[j]) for j in cols]))
            else:
                block = process.cdist(
                    [a[i].strip().casefold() for i in rows],
                    [b[j].strip().casefold() for j in cols],
                    scorer=Levenshtein.normalized_similarity,
                    dtype=np.float64,
                )
                # Two dates compare exactly, not as text.
                date_a = np.array([_date_ordinal(a[i]) for i in rows], dtype=float)
                date_b = np.array([_date_ordinal(b[j]) for j in cols], dtype=float)
                both = np.outer(~np.isnan(date_a), ~np.isnan(date_b))
                block = np.where(both, np.equal.outer(date_a, date_b), block)
            sums[np.ix_(rows, cols)] += block
        for i in (i for i, k in enumerate(ka) if k == "other"):
            for j in (j for j, k in enumerate(kb) if k == "other"):
                sums[i, j] += 1.0 if json_equal(a[i], b[j]) else 0.0
    keyless = np.outer([_keyless(e, match_fields) for e in expected], [_keyless(p, match_fields) for p in parsed])
    return np.divide(sums, counts, out=keyless.astype(np.float64), where=counts > 0)


AGREEMENT_PAIRS = 20_000  # tied pairs whose agreement is asked at most; more: none is (content order decides)
AGREEMENT_CELLS = 250_000  # and only in matrices up to this size (500 x 500 items)


def _agreements(
    matrix: Sequence[Sequence[float]], threshold: float, agreement: Callable[[int, int], float] | None
) -> dict[tuple[int, int], float]:
    """`agreement` of the tied pairs: eligible pairs (similarity at or over the threshold) whose
    similarity another eligible pair of their row or column has too, the only ones it can decide.
    {} without an agreement, past AGREEMENT_PAIRS tied pairs (a list of 150 identical keys) or
    AGREEMENT_CELLS cells: asking is quadratic in the items, and the pairing stays what the items
    hold either way (`scoring.items.align` aligns both lists in content order)."""
    if agreement is None or not matrix or len(matrix) * len(matrix[0]) > AGREEMENT_CELLS:
        return {}
    cut = lowest(threshold)
    rows = [Counter(s for s in row if s >= cut) for row in matrix]
    columns: list[Counter[float]] = [Counter() for _ in matrix[0]]
    for row in matrix:
        for j, s in enumerate(row):
            if s >= cut:
                columns[j][s] += 1
    tied: list[tuple[int, int]] = []
    for i, row in enumerate(matrix):
        for j, s in enumerate(row):
            if s >= cut and (rows[i][s] > 1 or columns[j][s] > 1):
                tied.append((i, j))
                if len(tied) > AGREEMENT_PAIRS:
                    return {}
    return {(i, j): agreement(i, j) for i, j in tied}


def _date_ordinal(value: str) -> float:
    date = _as_date(value)
    return float(date.toordinal()) if date is not None else float("nan")


def align_items(
    expected: Sequence[Any],
    parsed: Sequence[Any],
    match_fields: Sequence[str] = ("description",),
    threshold: float = 0.8,
    assignment: Assignment = "greedy",
    agreement: Callable[[int, int], float] | None = None,
) -> Alignment:
    """Pair expected items with parsed items, order-insensitively.

    greedy: every pair with similarity >= threshold, best first; ties broken by `agreement`
    (higher first), then by (expected index, parsed index).
    optimal: maximum total similarity over the pairs at or over the threshold
    (`scoring.assignment.linear_sum_assignment`, the pairs scipy's would give), and among equal
    totals the greatest total `agreement`.

    `agreement(i, j)` in [0, 1] says how well the rest of the two items agree (field_accuracy
    passes the pair's sub-field score): two items with the same key (duplicate descriptions) pair
    with the answer items whose other fields match them. It is asked for tied pairs only
    (`_agreements`).
    """
    if not expected or not parsed:
        return Alignment([], len(expected), len(parsed))
    matrix = similarity_matrix(expected, parsed, match_fields)
    agree = _agreements(matrix, threshold, agreement)
    if assignment == "optimal":
        # Pairs under the threshold weigh nothing: two 0.7 pairs must not displace one 0.9 pair.
        # Agreement weighs at most 1e-6 over all pairs: it only decides between equal keys.
        scale = 1e-6 / max(len(expected), len(parsed))
        cut = lowest(threshold)
        weights = [[s if s >= cut else 0.0 for s in row] for row in matrix]
        for (i, j), agreed in agree.items():
            weights[i][j] += scale * agreed
        optimal = linear_sum_assignment(weights, maximize=True)
        pairs = [(i, j, matrix[i][j]) for i, j in optimal if matrix[i][j] >= cut]
        return Alignment(pairs, len(expected), len(parsed))
    cut = lowest(threshold)
    candidates = sorted(
        ((s, i, j) for i, row in enumerate(matrix) for j, s in enumerate(row) if s >= cut),
        key=lambda c: (-c[0], -agree.get((c[1], c[2]), 0.0), c[1], c[2]),
    )
    return Alignment(greedy_pairs(candidates), len(expected), len(parsed))
