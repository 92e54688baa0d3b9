"""A miss as people read it: `field_accuracy`'s miss text, exactly as SPEC §3.1 writes it
(`invoice.total (null value)`), followed by the values its field entry in `details.fields`
records (`expected 12, got nothing`). The JSONL row keeps the bare text; the summary, the
Markdown summary, the HTML report and JUnit show it with the values, read from the details."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentv_py.models.field_results import FieldOutcome
from agentv_py.scoring.match import shown
from agentv_py.scoring.metrics import walk_fields

__all__ = ["Miss", "field_values", "miss_parts", "misses_with_values"]

MIN_REASON_CHARS = 20  # a shortened miss keeps at least this much of its reason


@dataclass(frozen=True, slots=True)
class Miss:
    """A miss as people read it: `text` as the row has it (`path (reason)`, or a judge's words),
    and for a field miss the values its details entry records (`expected 12, got nothing`) and
    where its reason starts in `text` (after any `evaluator: ` prefix and `path (`)."""

    text: str
    values: str | None = None
    reason_at: int = 0

    def __str__(self) -> str:
        return self.text if self.values is None else f"{self.text[:-1]}; {self.values})"

    def short(self, chars: int) -> str:
        """The miss with its text in about `chars` characters: what is cut is the end of its
        reason (or of a judge's words), marked `…`; a field's path and its values are never cut
        (each value is at most about 40 characters already: `scoring.match.shown`)."""
        if self.values is None:
            return _cut(self.text, chars)
        head, reason = self.text[: self.reason_at], self.text[self.reason_at : -1]
        return f"{head}{_cut(reason, max(chars - len(head) - 1, MIN_REASON_CHARS))}; {self.values})"


def _cut(text: str, chars: int) -> str:
    """`text` in at most `chars` characters: cut at its end, after its last whole word that fits
    (unless that leaves less than half), marked `…`."""
    if len(text) <= chars:
        return text
    head = text[: chars - 1]
    space = head.rfind(" ")
    return (head[:space] if space >= chars // 2 else head).rstrip() + "…"


def field_values(entry: FieldOutcome) -> str:
    """`expected 'INV-1', got nothing` for a field (no `actual`: the answer had none). Values
    are data: shortened and escaped, one line whatever they hold."""
    got = shown(entry.actual) if entry.answered else "nothing"
    return f"expected {shown(entry.expected)}, got {got}"


def _values_by_miss(results: Iterable[Any]) -> dict[str, tuple[str, int]]:
    """Miss text -> its values and the length of its `path (`, for every field_accuracy miss of
    a row (composites' members too). An items field's miss states counts, and its lists would
    drown them: it has no values here, nor has a count's (its reason says both lengths)."""
    out: dict[str, tuple[str, int]] = {}
    for _, entry in walk_fields(results):
        if entry.status == "miss" and entry.match not in ("items", "count") and entry.reason is not None:
            out.setdefault(f"{entry.path} ({entry.reason})", (field_values(entry), len(entry.path) + 2))
    return out


def _with_values(miss: str, values: Mapping[str, tuple[str, int]]) -> Miss:
    """`miss` with its values, when it is a field's miss: as written, or after the `name: `
    prefixes a row gives the misses of its several evaluators."""
    start = 0
    while True:
        found = values.get(miss[start:])
        if found is not None:
            return Miss(miss, found[0], start + found[1])
        start = miss.find(": ", start) + 2
        if start == 1:
            return Miss(miss)


def miss_parts(misses: Sequence[str], results: Iterable[Any], limit: int | None = None) -> list[Miss]:
    """The first `limit` (default all) of a row's or an evaluator's `misses`, each field miss
    with the expected and actual values of its details entry."""
    chosen = misses[:limit]
    values = _values_by_miss(results) if chosen else {}
    return [_with_values(miss, values) for miss in chosen] if values else [Miss(miss) for miss in chosen]


def misses_with_values(misses: Sequence[str], results: Iterable[Any], limit: int | None = None) -> list[str]:
    """`misses` as text: each field miss with its values inside the parentheses."""
    return [str(miss) for miss in miss_parts(misses, results, limit)]
