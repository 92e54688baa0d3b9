"""Order-insensitive list matching for `field_accuracy` fields with `match: items` (SPEC §5 line items).

Pure: pairs expected items with the answer's items (the similarity and the assignment are
`metrics.align_items`, shared with `agentv metrics`), checks the ground truth's shape, and states
the field's score and miss text. Scoring the matched pairs' sub-fields is the evaluator's job.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.scoring.alignment import Assignment, align_items, item_similarity
from agentv_py.scoring.match import json_type
from agentv_py.scoring.paths import MISSING, resolve
from agentv_py.scoring.thresholds import at_least

LISTED = 100  # at most this many pairs / missing / extra indices are listed in details (counts stay exact)


@dataclass(frozen=True)
class ItemAlignment:
    """Matched (expected index, actual index, similarity) pairs, sorted by expected index; expected
    indices left unmatched (`missing`); actual indices left unmatched (`extra`, junk included);
    and the actual indices that are not objects (`junk`, never matched)."""

    pairs: list[tuple[int, int, float]]
    missing: list[int]
    extra: list[int]
    junk: list[int]


def expected_items_problem(value: Any) -> str | None:
    """Why a ground-truth value cannot be scored as items (not a list, or an item that is not an
    object), or None when it can."""
    if not isinstance(value, list):
        return f"expected value for match 'items' is {json_type(value)}, not a list of objects"
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            return f"expected item {index} is {json_type(item)}, not an object"
    return None


def _content(item: Any) -> str:
    """An item's canonical JSON (keys sorted): its place in the order the aligner sees."""
    try:
        return json.dumps(item, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return "\uffff"  # unwritable (nested too deeply): after every other item, in answer order


def _key_of(item: dict[str, Any], key: Sequence[str]) -> str:
    """An item's key values, as canonical JSON (absent as null)."""
    return _content([None if (value := resolve(item, path)) is MISSING else value for path in key])


def _shared_keys(expected: Sequence[dict[str, Any]], answer: Sequence[dict[str, Any]], key: Sequence[str]) -> set[str]:
    """The key values two or more items of one side share."""
    shared: set[str] = set()
    for side in (expected, answer):
        seen: set[str] = set()
        for item in side:
            value = _key_of(item, key)
            (shared if value in seen else seen).add(value)
    return shared


def align(
    expected: Sequence[dict[str, Any]],
    actual: Sequence[Any],
    key: Sequence[str],
    threshold: float,
    algorithm: Assignment,
    agreement: Callable[[int, int], float] | None = None,
) -> ItemAlignment:
    """Pair items by the similarity of their `key` sub-paths; between equal keys, by
    `agreement(expected index, actual index)`: how well the rest of the items agree. Entries of
    `actual` that are not objects (null, strings, numbers, lists) are never paired, whatever the
    threshold: they are extra items.

    Where a key is shared (two lines called `Fee`), the key cannot tell items apart: an answer
    item equal in content to an expected item with such a key (as JSON, key order aside) pairs
    with it first, one to one. Everything else is aligned in the order of its content, not of the
    files. So the pairing depends on what the answer holds and never on its order: an answer that
    differs only in item order pairs the same contents and scores exactly the same, even among
    many items with one key (past `alignment.AGREEMENT_PAIRS`, where agreement is not asked)."""
    content = {j: _content(item) for j, item in enumerate(actual) if isinstance(item, dict)}
    shared = _shared_keys(expected, [actual[j] for j in content], key)
    junk = [j for j in range(len(actual)) if j not in content]
    waiting: dict[str, list[int]] = {}  # content -> answer indices not paired yet, in content order
    for j in sorted(content, key=lambda j: (content[j], j)):
        waiting.setdefault(content[j], []).append(j)
    pairs: list[tuple[int, int, float]] = []
    rest: list[int] = []
    texts = [_content(item) for item in expected]
    for i in sorted(range(len(expected)), key=lambda i: (texts[i], i)):
        same = waiting.get(texts[i]) if _key_of(expected[i], key) in shared else None
        similarity = item_similarity(expected[i], actual[same[0]], tuple(key)) if same else 0.0
        if same and at_least(similarity, threshold):  # not so only for values unequal to themselves (NaN)
            pairs.append((i, same.pop(0), similarity))
        else:
            rest.append(i)
    objects = [j for text in sorted(waiting) for j in waiting[text]]
    agree = None if agreement is None else lambda e, k: agreement(rest[e], objects[k])
    alignment = align_items(
        [expected[i] for i in rest], [actual[j] for j in objects], tuple(key), threshold, algorithm, agree
    )
    pairs = sorted(pairs + [(rest[i], objects[j], float(s)) for i, j, s in alignment.pairs])
    matched = {j for _, j, _ in pairs}
    return ItemAlignment(
        pairs=pairs,
        missing=sorted(rest[i] for i in alignment.unmatched_expected),
        extra=[j for j in range(len(actual)) if j not in matched],
        junk=junk,
    )


def items_score(pair_scores: Sequence[float], n_expected: int, n_actual: int) -> float:
    """The field's score: the matched pairs' scores summed over max(expected, actual) items, so a
    missing and an extra item each cost one item's worth; two empty lists score 1."""
    denominator = max(n_expected, n_actual)
    return 1.0 if denominator == 0 else sum(pair_scores) / denominator


def items_summary(matched: int, n_expected: int, missing: int, extra: int, wrong: int) -> str:
    """`2 of 3 items matched; 1 missing, 1 extra` (`, 1 with wrong fields` when some matched
    pairs' sub-fields missed)."""
    text = f"{matched} of {n_expected} items matched; {missing} missing, {extra} extra"
    return text + (f", {wrong} with wrong fields" if wrong else "")
