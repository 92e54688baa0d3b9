"""How big a stored row may be: its depth (MAX_DEPTH levels, orjson's own limit) and its size
(MAX_LINE_BYTES), for rows written and rows read. A value past either bound is cut, type kept,
with a marker that says so: a row is never lost to its size, and reading one never holds more
than MAX_LINE_BYTES of it (docs/security.md)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 254  # levels of nesting a stored row may have (orjson's own limit, row included)
CUT = f"[cut: nested deeper than {MAX_DEPTH} levels]"
MAX_LINE_BYTES = 16 * 1024 * 1024  # the longest row written or read (a longer line is skipped, said)
# (characters kept of a string, items kept of a list or mapping): tried in turn until the row fits
_STEPS = ((1 << 20, 100_000), (64 * 1024, 10_000), (4 * 1024, 1_000), (256, 100), (64, 10))
# What may be cut, in this order: what scored the answer before the answer itself.
_FREE = ("hits", "misses", "reasoning", "error", "output_messages")
_RESULT_FREE = ("hits", "misses", "reasoning", "details")


def bound_depth(value: Any, limit: int = MAX_DEPTH) -> Any:
    """A copy of `value` in which every object or array nested deeper than `limit` levels (the
    value itself is level 1) is replaced by the string CUT. Iterative: any depth, no recursion."""
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(holder, 0, value, 1)]  # (parent, key in it, node, its level)
    while stack:
        parent, key, node, level = stack.pop()
        if not isinstance(node, dict | list | tuple):
            parent[key] = node
        elif level > limit:
            parent[key] = CUT
        elif isinstance(node, dict):
            copy: dict[Any, Any] = dict.fromkeys(node)  # the keys in order; values filled below
            parent[key] = copy
            stack.extend((copy, k, v, level + 1) for k, v in node.items())
        else:
            items: list[Any] = [None] * len(node)
            parent[key] = items
            stack.extend((items, i, v, level + 1) for i, v in enumerate(node))
    return holder[0]


def bound_size(row: dict[str, Any], dumps: Callable[[dict[str, Any]], bytes], limit: int = MAX_LINE_BYTES) -> bytes:
    """`row` (a result row's JSON dict, depth already bounded) as a line of at most `limit` bytes:
    written as it is when it fits; else its free-form values are cut, a step at a time (`_STEPS`),
    the evaluators' details, hits, misses and reasonings and the row's own first, then the
    answer: a string keeps its start and says `[cut: N characters]`, a list or mapping its first
    items and says how many more. The scores, verdicts and statuses are never changed."""
    line = dumps(row)
    cut = row
    for chars, items in _STEPS:  # the rest first, a step at a time (each cut from the row as given)
        if len(line) <= limit:
            return line
        cut = _cut_row(row, chars, items)
        line = dumps(cut)
    for chars, items in _STEPS:  # then the answer, with the rest cut as far as it goes
        if len(line) <= limit:
            return line
        cut = {**cut, "candidate_answer": cut_value(row.get("candidate_answer"), chars, items)}
        line = dumps(cut)
    if len(line) > limit:  # thousands of evaluators or unbounded keys: only what each one decided stays
        cut = {**cut, "evaluator_results": [_bare(result) for result in row.get("evaluator_results") or []]}
        line = dumps(cut)
    return line


def _cut_row(row: dict[str, Any], chars: int, items: int) -> dict[str, Any]:
    out = dict(row)
    for key in _FREE:
        if out.get(key) is not None:
            out[key] = cut_value(out[key], chars, items)
    out["evaluator_results"] = [_cut_result(result, chars, items) for result in row.get("evaluator_results") or []]
    return out


def _cut_result(result: Any, chars: int, items: int) -> Any:
    if not isinstance(result, dict):
        return result
    out = dict(result)
    for key in _RESULT_FREE:
        if out.get(key) is not None:
            out[key] = cut_value(out[key], chars, items)
    if isinstance(out.get("evaluator_results"), list):
        out["evaluator_results"] = [_cut_result(child, chars, items) for child in out["evaluator_results"]]
    return out


def _bare(result: Any) -> Any:
    if not isinstance(result, dict):
        return result
    kept = {key: result[key] for key in ("name", "type", "status", "score", "weight", "verdict") if key in result}
    return {**kept, "reasoning": "[cut: row size]"}


def cut_value(value: Any, chars: int, items: int) -> Any:
    """`value` with strings over `chars` characters and lists or mappings over `items` entries cut
    (each saying what it lost), at any depth up to MAX_DEPTH (a bounded row: no deeper)."""
    if isinstance(value, str):
        return value if len(value) <= chars else f"{value[:chars]} [cut: {len(value)} characters]"
    if isinstance(value, list):
        kept = [cut_value(item, chars, items) for item in value[:items]]
        return kept + [f"[cut: {len(value) - items} more items]"] if len(value) > items else kept
    if isinstance(value, dict):
        out = {
            _cut_key(key, chars): cut_value(item, chars, items) for key, item in itertools.islice(value.items(), items)
        }
        if len(value) > items:
            out["[cut]"] = f"{len(value) - items} more keys"
        return out
    return value


def _cut_key(key: Any, chars: int) -> Any:
    return key if not isinstance(key, str) or len(key) <= chars else f"{key[:chars]} [cut: {len(key)} characters]"
