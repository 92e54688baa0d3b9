"""ANLS and ANLS* (docs/metrics.md, "Metrics from the literature").

- **ANLS** (Biten et al. 2019, "Scene Text Visual Question Answering", ICCV; the DocVQA metric):
  a prediction's normalised Levenshtein similarity to the ground truth, 1 - d(a, b) / max(|a|,
  |b|), both texts trimmed, lower-cased and their whitespace collapsed; a similarity below the
  threshold (0.5) counts 0. With several accepted answers, the best.
- **ANLS*** (Peer et al. 2024, "ANLS* -- A Universal Document Processing Metric for Generative
  Large Language Models", arXiv:2402.03848) extends it to whole structured answers: a dict scores
  each key of either side (a key missing or invented scores 0, an invented key whose value is
  empty excepted), a list pairs its items by an optimal assignment (missing and extra items score
  0), None matches only an empty answer, a type mismatch scores 0; the score is the sum of the
  leaves' similarities over the number of leaves compared. Ported from the paper's reference code
  (the `anls-star` package, which the tests compare against on hundreds of generated pairs):
  its lengths, its tie-breaking toward exact matches, its ST-VQA compatibility (a list of strings
  against a string is a set of accepted answers).

Pure: no I/O; the assignment is `scoring.assignment.linear_sum_assignment`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.scoring.assignment import linear_sum_assignment
from agentv_py.scoring.jsontext import OutOfRangeNumber
from agentv_py.scoring.match import MatchResult, json_type, type_mismatch

THRESHOLD = 0.5  # the literature's cut-off


def _levenshtein(a: str, b: str) -> int:
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # pragma: no cover - rapidfuzz is a base dependency
        previous = list(range(len(b) + 1))
        for i, ca in enumerate(a, start=1):
            current = [i]
            for j, cb in enumerate(b, start=1):
                current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
            previous = current
        return previous[-1]
    return int(Levenshtein.distance(a, b))


def normalised(value: Any) -> str:
    """A leaf as ANLS compares it: its text trimmed, lower-cased, whitespace collapsed."""
    return " ".join(_text(value).strip().lower().split())


def _text(value: Any) -> str:
    if isinstance(value, bool):  # as Python's str() writes them: the reference's reading
        return "True" if value else "False"
    return str(value)


def nls(expected: Any, answer: Any, threshold: float = THRESHOLD) -> float:
    """One leaf's normalised Levenshtein similarity, 0 below `threshold`."""
    a, b = normalised(expected), normalised(answer)
    longest = max(len(a), len(b))
    value = 1.0 - (_levenshtein(a, b) / longest if longest else 0.0)
    return 0.0 if value < threshold else value


def anls(answers: Sequence[Any], answer: Any, threshold: float = THRESHOLD) -> float:
    """ANLS of one answer against its accepted answers: the best similarity."""
    return max((nls(expected, answer, threshold) for expected in answers), default=0.0)


def match_anls(candidate: Any, expected: Any, threshold: float = 0.5) -> MatchResult:
    """`match: anls` (DocVQA's ANLS, `scoring.anls`): the normalised Levenshtein similarity of the
    texts (trimmed, lower-cased, whitespace collapsed), 0 below `threshold` (default 0.5); the
    field's score is the similarity, a hit at `threshold` or above. A list of texts expected is a
    set of accepted answers (the best counts). Numbers are read as their text."""
    accepted = expected if isinstance(expected, list) else [expected]
    if not accepted or not all(_anls_leaf(value) for value in accepted):
        what = "an empty list" if not accepted else json_type(expected)
        return MatchResult(
            False, 0.0, f"anls match needs a text or a list of texts, expected value is {what}", bad_expected=True
        )
    if not _anls_leaf(candidate) or isinstance(candidate, OutOfRangeNumber):
        return MatchResult(False, 0.0, type_mismatch(candidate, expected))
    scores = [nls(value, candidate, threshold) for value in accepted]
    best = max(range(len(scores)), key=lambda i: scores[i])
    info = {"similarity": round(scores[best], 6), "threshold": threshold}
    if len(accepted) > 1:
        info["accepted"] = best
    if scores[best] > 0 or (threshold <= 0 and scores[best] >= 0):
        return MatchResult(True, scores[best], info=info)
    return MatchResult(False, 0.0, f"ANLS similarity below {threshold:.2f}", info)


def _anls_leaf(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


# ----------------------------------------------------------------------------- ANLS*


class _Options(tuple[Any, ...]):
    """Several accepted ground truths (the reference's tuple): the best one counts."""


@dataclass(frozen=True)
class _Scored:
    values: list[float]
    chosen: Any  # the ground truth as it best matches (options chosen, lists reordered)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (dict, list, str)) and not value and not isinstance(value, _Options))


def _size(value: Any) -> int:
    """The leaves a value holds (the reference's `len`)."""
    if isinstance(value, _Options):
        return max(_size(v) for v in value)
    if isinstance(value, list):
        return sum(_size(v) for v in value)
    if isinstance(value, dict):
        return sum(_size(v) for v in value.values())
    return 1


class _Star:
    """One comparison of a ground truth tree with an answer tree, at `threshold`."""

    def __init__(self, threshold: float) -> None:
        """Each pair is scored, measured and (lists) paired once per comparison: the reference
        computes them again at every level (a list's length pairs its items anew), quadratic in
        the nesting; kept by the pair's identity, the values live as long as the comparison."""
        self.threshold = threshold
        self._scored: dict[tuple[int, int], _Scored] = {}
        self._lengths: dict[tuple[int, int], int] = {}
        self._paired: dict[tuple[int, int], tuple[list[tuple[int, int]], list[list[_Scored]]]] = {}

    def score(self, expected: Any, answer: Any) -> float:
        scored = self.scored(expected, answer)
        length = self.length(expected, answer)
        return math.fsum(scored.values) / length if length > 0 else 1.0

    def length(self, expected: Any, answer: Any) -> int:
        """How many leaves the pair compares (the reference's `pairwise_len`)."""
        key = (id(expected), id(answer))
        found = self._lengths.get(key)
        if found is None:
            found = self._lengths[key] = self._length(expected, answer)
        return found

    def _length(self, expected: Any, answer: Any) -> int:
        if isinstance(expected, _Options):
            return self._best_option(expected, answer)[1]
        if isinstance(expected, list) and isinstance(answer, list):
            pairs = self._pairs(expected, answer)[0]
            taken_rows, taken_columns = {i for i, _ in pairs}, {j for _, j in pairs}
            total = sum(self.length(expected[i], answer[j]) for i, j in pairs)
            total += sum(_size(expected[i]) for i in range(len(expected)) if i not in taken_rows)
            return total + sum(_size(answer[j]) for j in range(len(answer)) if j not in taken_columns)
        if isinstance(expected, dict) and isinstance(answer, dict):
            keys = [*expected, *(k for k in answer if k not in expected)]
            return sum(self.length(expected.get(k), answer.get(k)) for k in keys)
        return max(_size(expected), _size(answer))

    def scored(self, expected: Any, answer: Any) -> _Scored:
        key = (id(expected), id(answer))
        found = self._scored.get(key)
        if found is None:
            found = self._scored[key] = self._score(expected, answer)
        return found

    def _score(self, expected: Any, answer: Any) -> _Scored:
        if isinstance(expected, _Options):
            return self._best_option(expected, answer)[0]
        if isinstance(expected, list):
            return self._list(expected, answer)
        if isinstance(expected, dict):
            return self._dict(expected, answer)
        if expected is None:
            return _Scored([1.0], answer) if _empty(answer) else _Scored([0.0], None)
        if isinstance(answer, (list, dict)) or answer is None:
            return _Scored([0.0], expected)
        return _Scored([nls(expected, answer, self.threshold)], expected)

    def _best_option(self, options: _Options, answer: Any) -> tuple[_Scored, int]:
        best: tuple[tuple[float, int], _Scored, int] | None = None
        for option in options:
            scored, length = self.scored(option, answer), self.length(option, answer)
            average = math.fsum(scored.values) / length if length > 0 else 1.0
            key = (average, 1 if scored.chosen == answer else 0)
            if best is None or key > best[0]:
                best = (key, scored, length)
        assert best is not None  # options are never empty
        return best[1], best[2]

    def _pairs(self, expected: list[Any], answer: list[Any]) -> tuple[list[tuple[int, int]], list[list[_Scored]]]:
        """The optimal pairing of the items (the highest total average similarity, an exact match
        favoured in a tie), and every pair's scores."""
        key = (id(expected), id(answer))
        found = self._paired.get(key)
        if found is None:
            found = self._paired[key] = self._pair(expected, answer)
        return found

    def _pair(self, expected: list[Any], answer: list[Any]) -> tuple[list[tuple[int, int]], list[list[_Scored]]]:
        if not expected or not answer:
            return [], []
        grid: list[list[_Scored]] = []
        averages: list[list[float]] = []
        for item in expected:
            row, row_averages = [], []
            for other in answer:
                scored = self.scored(item, other)
                length = self.length(item, other)
                average = math.fsum(scored.values) / length if length > 0 else 1.0
                if other == scored.chosen:
                    average = math.nextafter(average, math.inf)
                row.append(scored)
                row_averages.append(average)
            grid.append(row)
            averages.append(row_averages)
        return linear_sum_assignment(averages, maximize=True), grid

    def _list(self, expected: list[Any], answer: Any) -> _Scored:
        if not isinstance(answer, list):
            return _Scored([0.0], expected)
        pairs, grid = self._pairs(expected, answer)
        values = [v for i, j in pairs for v in grid[i][j].values]
        chosen = [grid[i][j].chosen for i, j in sorted(pairs, key=lambda pair: pair[1])]
        taken = {i for i, _ in pairs}
        chosen += [expected[i] for i in range(len(expected)) if i not in taken]
        return _Scored(values, chosen)

    def _dict(self, expected: dict[Any, Any], answer: Any) -> _Scored:
        if not isinstance(answer, dict):
            return _Scored([0.0], expected)
        values: list[float] = []
        chosen: dict[Any, Any] = {}
        for key in [*expected, *(k for k in answer if k not in expected)]:
            if key not in expected and _empty(answer[key]):
                continue  # an invented key with nothing in it: not counted
            scored = self.scored(expected.get(key), answer.get(key))
            values += scored.values
            if not (_empty(scored.chosen) and key not in answer):
                chosen[key] = scored.chosen
        return _Scored(values, chosen)


def options(*accepted: Any) -> _Options:
    """Several accepted ground truths for `anls_star` (the reference's tuple)."""
    if not accepted:
        raise ValueError("at least one accepted ground truth")
    return _Options(accepted)


def anls_star(expected: Any, answer: Any, threshold: float = THRESHOLD) -> float:
    """ANLS* of a whole answer against its ground truth (see the module). Expected values are JSON
    (dicts, lists, strings, numbers, booleans, None); `options(...)` marks accepted alternatives.
    A list of strings against a string answer is a set of accepted answers (ST-VQA's convention)."""
    if isinstance(expected, list) and isinstance(answer, str) and all(isinstance(x, str) for x in expected):
        expected = options(*expected) if expected else expected
    return _Star(threshold).score(expected, answer)
