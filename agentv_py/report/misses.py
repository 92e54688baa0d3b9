"""A miss as people read it: `field_accuracy`'s miss text, exactly as SPEC §3.1 writes it
(`invoice.total (null value)`), followed by the values its field entry in `details.fields`
records (`expected 12, got nothing`). The JSONL row keeps the bare text; the summary, the
Markdown summary, the HTML report and JUnit show it with the values, read from the details."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentv_py.models.field_results import FieldOutcome
from agentv_py.scoring.match import shown
from agentv_py.scoring.metrics import walk_fields

__all__ = ["field_values", "misses_with_values"]


def field_values(entry: FieldOutcome) -> str:
    """`expected 'INV-1', got nothing` for a field (no `actual`: the answer had none). Values
    are data: shortened and escaped, one line whatever they hold."""
    got = shown(entry.actual) if entry.answered else "nothing"
    return f"expected {shown(entry.expected)}, got {got}"


def _values_by_miss(results: Iterable[Any]) -> dict[str, str]:
    """Miss text -> its values, for every field_accuracy miss of a row (composites' members too).
    An items field's miss states counts, and its lists would drown them: it has no values here."""
    out: dict[str, str] = {}
    for _, entry in walk_fields(results):
        if entry.status == "miss" and entry.match != "items" and entry.reason is not None:
            out.setdefault(f"{entry.path} ({entry.reason})", field_values(entry))
    return out


def _with_values(miss: str, values: Mapping[str, str]) -> str:
    """`miss` with its values inside the parentheses, when it is a field's miss: as written, or
    after the `name: ` prefixes a row gives the misses of its several evaluators."""
    start = 0
    while True:
        text = values.get(miss[start:])
        if text is not None:
            return f"{miss[:-1]}; {text})"
        start = miss.find(": ", start) + 2
        if start == 1:
            return miss


def misses_with_values(misses: Sequence[str], results: Iterable[Any], limit: int | None = None) -> list[str]:
    """The first `limit` (default all) of a row's or an evaluator's `misses`, each field miss
    with the expected and actual values of its details entry."""
    chosen = misses[:limit]
    values = _values_by_miss(results) if chosen else {}
    return [_with_values(miss, values) for miss in chosen] if values else list(chosen)
