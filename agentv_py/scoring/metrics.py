"""Dataset-level extraction metrics (SPEC §5): per-field TP/TN/FP/FN, P/R/F1, per-item counts
of aligned line items (the alignment itself: `scoring.alignment`).

Classification of one attribute, with `empty` = missing, null, a whitespace-only string, an empty
list or an empty object (`scoring.paths.is_empty`, the one definition the case score and the
failure taxonomy use too):

    expected   parsed      equal?   counts
    non-empty  non-empty   yes      TP
    empty      empty       -        TN
    non-empty  non-empty   no       FP and FN (a wrong value is both)
    empty      non-empty   -        FP (hallucinated)
    non-empty  empty       -        FN (missed)

Precision, recall and F1 are None when their denominator is 0: "undefined" is never shown as 0
or 1. Pure functions, standard library only (scipy is imported lazily for optimal assignment).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentv_py.scoring.alignment import Alignment
from agentv_py.scoring.paths import is_empty, resolve
from agentv_py.scoring.thresholds import at_least

if TYPE_CHECKING:  # imported where used: judges import this module without pydantic
    from agentv_py.models.field_results import FieldOutcome

COUNT_KEYS = ("tp", "tn", "fp", "fn")


def _equal(a: Any, b: Any) -> bool:
    from agentv_py.scoring.match import json_equal

    return json_equal(a, b)


class Counts:
    """TP/TN/FP/FN for one field (or summed over fields), with the rates derived from them."""

    __slots__ = COUNT_KEYS

    def __init__(self, tp: int = 0, tn: int = 0, fp: int = 0, fn: int = 0) -> None:
        self.tp, self.tn, self.fp, self.fn = tp, tn, fp, fn

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.tn + other.tn, self.fp + other.fp, self.fn + other.fn)

    def __iadd__(self, other: Counts) -> Counts:
        self.tp += other.tp
        self.tn += other.tn
        self.fp += other.fp
        self.fn += other.fn
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Counts) and self.as_tuple() == other.as_tuple()

    def __repr__(self) -> str:
        return f"Counts(tp={self.tp}, tn={self.tn}, fp={self.fp}, fn={self.fn})"

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.tp, self.tn, self.fp, self.fn)

    @property
    def support(self) -> int:
        """How many times the field had a (non-empty) expected value."""
        return self.tp + self.fn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        """2TP / (2TP + FP + FN): 2PR/(P+R) wherever that is defined, and 0 for a field expected or
        answered that is never right (P or R undefined, or both 0): a collapsed field is a 0, not a
        blank. Undefined only when nothing was expected and nothing answered (TP + FP + FN = 0)."""
        errors = self.fp + self.fn
        return 2 * self.tp / (2 * self.tp + errors) if self.tp or errors else None

    def to_dict(self) -> dict[str, Any]:
        """`{tp, tn, fp, fn, precision, recall, f1}` (None for undefined), as judges emit it."""
        return {
            "tp": self.tp,
            "tn": self.tn,
            "fp": self.fp,
            "fn": self.fn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Counts:
        """Counts from a `details.metrics` entry; raises ValueError if a count is not an int >= 0."""
        get = data.get
        tp, tn, fp, fn = get("tp", 0), get("tn", 0), get("fp", 0), get("fn", 0)
        if type(tp) is type(tn) is type(fp) is type(fn) is int and min(tp, tn, fp, fn) >= 0:  # the common case, fast
            return cls(tp, tn, fp, fn)
        values = []
        for key in COUNT_KEYS:
            value = data.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"'{key}' must be a whole number >= 0, got {value!r}")
            values.append(value)
        return cls(*values)


def classify(expected: Any, parsed: Any) -> Counts:
    """Counts for one attribute of one document (see the module docstring)."""
    expected_empty, parsed_empty = is_empty(expected), is_empty(parsed)
    if expected_empty and parsed_empty:
        return Counts(tn=1)
    if expected_empty:
        return Counts(fp=1)
    if parsed_empty:
        return Counts(fn=1)
    if _equal(expected, parsed):
        return Counts(tp=1)
    return Counts(fp=1, fn=1)


def field_counts(expected: Any, parsed: Any, fields: Iterable[str]) -> dict[str, Counts]:
    """Per-field counts for one document, fields given as paths (`supplier.name`)."""
    return {path: classify(resolve(expected, path), resolve(parsed, path)) for path in fields}


def macro_f1(per_field: Mapping[str, Counts]) -> float | None:
    """Mean F1 over the fields whose F1 is defined (a field never right counts 0). Fields with
    nothing to report (only TN) are left out; None when no field qualifies."""
    scores = [f1 for f1 in (counts.f1 for counts in per_field.values()) if f1 is not None]
    return sum(scores) / len(scores) if scores else None


def total(per_field: Mapping[str, Counts]) -> Counts:
    """Summed counts (micro P/R/F1 are its precision/recall/f1)."""
    summed = Counts()
    for counts in per_field.values():
        summed += counts
    return summed


# ----------------------------------------------------------------------------- line items


def line_item_counts(
    expected: Sequence[Any], parsed: Sequence[Any], alignment: Alignment, score_fields: Sequence[str]
) -> dict[str, Counts]:
    """Per-field counts over aligned items: matched pairs are classified field by field; each
    unmatched expected item counts FN, each unmatched parsed item FP, for every non-empty field."""
    per_field = {path: Counts() for path in score_fields}
    for i, j, _ in alignment.pairs:
        for path in score_fields:
            per_field[path] += classify(resolve(expected[i], path), resolve(parsed[j], path))
    for i in alignment.unmatched_expected:
        for path in score_fields:
            if not is_empty(resolve(expected[i], path)):
                per_field[path].fn += 1
    for j in alignment.unmatched_parsed:
        for path in score_fields:
            if not is_empty(resolve(parsed[j], path)):
                per_field[path].fp += 1
    return per_field


# ----------------------------------------------------------------------------- counts from results

FieldKey = tuple[str, str]  # (evaluator name, field): two evaluators naming one field stay apart
SCORED = ("hit", "miss", "not scored")  # field_accuracy statuses that count ("could not score" does not)


def field_accuracy_counts(details: Mapping[str, Any]) -> dict[str, Counts]:
    """Per-field counts from one `field_accuracy` result's `details.fields` (SPEC §5): both empty
    TN; only the answer empty FN; only the expectation empty FP; both non-empty: a hit TP (the
    field's matcher decided, so a value within tolerance counts as equal), a miss FP and FN.
    A field whose ground truth could not be used counts nothing; malformed entries are ignored
    (`read_fields`). A `match: items` field counts per item (`_items_counts`)."""
    from agentv_py.models.field_results import read_fields

    per_field: dict[str, Counts] = {}
    for entry in read_fields(details):
        counts = field_counts_of(entry)
        if counts is None:
            continue
        if entry.path in per_field:
            per_field[entry.path] += counts
        else:
            per_field[entry.path] = counts  # fresh: kept, not copied
    return per_field


def field_counts_of(entry: FieldOutcome) -> Counts | None:
    """One field's counts (`field_accuracy_counts`); None when it counts nothing."""
    if entry.status not in SCORED:
        return None
    expected_empty, actual_empty = is_empty(entry.expected), is_empty(entry.actual)
    if expected_empty and actual_empty:
        return Counts(tn=1)
    counts = _items_counts(entry)
    if counts is not None:
        return counts
    if expected_empty or actual_empty:
        return classify(None if expected_empty else 1, None if actual_empty else 1)
    if entry.status == "hit":
        return Counts(tp=1)
    if entry.status == "miss":
        return Counts(fp=1, fn=1)
    return None  # both non-empty yet not scored: nothing was decided


def _items_counts(entry: FieldOutcome) -> Counts | None:
    """A `match: items` field counted per item: TP per matched item whose sub-fields all hit, FP
    per extra item, FN per missing item, FP and FN per matched item with a wrong sub-field; two
    empty lists TN. An answer missing or null misses every expected item. None: not an items
    field with a list of expected items (counted as a plain field)."""
    if not entry.is_items:
        return None
    items = entry.items
    if items is not None:
        counts = Counts(tp=items.correct, fp=items.extra + items.wrong, fn=items.missing + items.wrong)
    else:  # the answer had no list here (missing, null): every expected item is missed
        counts = Counts(fn=sum(1 for item in entry.expected if not is_empty(item)))
    return counts if counts.tp or counts.fp or counts.fn else Counts(tn=1)


def iou_counts(details: Mapping[str, Any]) -> Counts | None:
    """Detection counts from one `iou_score` result: lists carry `tp`/`fp`/`fn` (pairs at or over
    the threshold are TP, unmatched or under-threshold boxes FP/FN); a single box is TP at or over
    the threshold, else FP and FN (a box in the wrong place). None when the details say neither."""
    from agentv_py.models.field_results import read_detection

    found = read_detection(details)
    if found is None:
        return None
    if found.tp is not None and found.fp is not None and found.fn is not None:
        return Counts(tp=found.tp, fp=found.fp, fn=found.fn)
    if found.iou is not None and found.threshold is not None:
        return Counts(tp=1) if at_least(found.iou, found.threshold) else Counts(fp=1, fn=1)
    return None


def walk_results(results: Iterable[Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(name, type, details) for every evaluator result, nested ones included: a composite's
    members (`evaluator_results`), and dicts a code judge nests in `details.evaluator_results`."""
    for name, kind, details, _ in _walk(results):
        yield name, kind, details


def _walk(results: Iterable[Any]) -> Iterable[tuple[str, str, dict[str, Any], Any]]:
    """`walk_results`, with each result as it came (a model or a dict)."""
    from agentv_py.models.results import EvaluatorResult  # here: judges import this module without pydantic

    for result in results:
        if isinstance(result, EvaluatorResult):
            name, kind, details = result.name, result.type, result.details
        elif isinstance(result, dict) and isinstance(result.get("details"), dict):
            name, kind, details = str(result.get("name", "")), str(result.get("type", "")), result["details"]
        else:
            continue
        yield name, kind, details, result
        if isinstance(result, EvaluatorResult):
            yield from _walk(result.evaluator_results)
        nested = details.get("evaluator_results")
        if isinstance(nested, list):
            yield from _walk(nested)


def _fields(result: Any, details: dict[str, Any]) -> list[FieldOutcome]:
    """A `field_accuracy` result's fields: read once per result model (`field_outcomes`), or
    from a result a judge nested as a dict."""
    if isinstance(result, dict):
        from agentv_py.models.field_results import read_fields

        return read_fields(details)
    fields: list[FieldOutcome] = result.field_outcomes()
    return fields


def walk_fields(results: Iterable[Any]) -> Iterable[tuple[str, FieldOutcome]]:
    """(evaluator name, field outcome) for every field of every `field_accuracy` result, nested
    ones included: the one reader of fields that metrics, the taxonomy, the reports, explain and
    compare share (`models.field_results.read_fields`)."""
    for name, kind, details, result in _walk(results):
        if kind == "field_accuracy":
            for entry in _fields(result, details):
                yield name, entry


def row_field_counts(results: Iterable[Any], problems: list[str] | None = None) -> dict[FieldKey, Counts]:
    """Per-field counts for one result row, keyed by (evaluator name, field), from every source:
    a judge's `details.metrics` (`{field: {tp, tn, fp, fn}}`), a `field_accuracy` result's fields,
    and an `iou_score` result (field = the evaluator's name). A `details.metrics` entry that is not
    an object of whole counts is left out, described in `problems` (`name: details.metrics.f: why`)."""
    per_field: dict[FieldKey, Counts] = {}

    def add(key: FieldKey, counts: Counts) -> None:  # `counts` is fresh: kept, not copied
        if key in per_field:
            per_field[key] += counts
        else:
            per_field[key] = counts

    for name, kind, details, result in _walk(results):
        metrics = details.get("metrics")
        if isinstance(metrics, dict):
            for field_name, raw in metrics.items():
                try:
                    if not isinstance(raw, dict):
                        raise ValueError(f"expected an object of counts, got {json.dumps(raw, default=str)[:40]}")
                    add((name, str(field_name)), Counts.from_mapping(raw))
                except ValueError as exc:
                    if problems is not None:
                        problems.append(f"{name}: details.metrics.{field_name}: {exc}")
        elif kind == "field_accuracy":
            for entry in _fields(result, details):
                counts = field_counts_of(entry)
                if counts is not None:
                    add((name, entry.path), counts)
        elif kind == "iou_score":
            found = iou_counts(details)
            if found is not None:
                add((name, name), found)
    return per_field


def field_labels(keys: Iterable[FieldKey]) -> dict[FieldKey, str]:
    """A display name per key: the bare field when one evaluator names it, `evaluator/field` when
    several do (a judge's `total` and field_accuracy's `total` are different measurements)."""
    keys = list(keys)
    owners: dict[str, set[str]] = {}
    for evaluator, field_name in keys:
        owners.setdefault(field_name, set()).add(evaluator)
    return {
        (evaluator, field_name): field_name if len(owners[field_name]) == 1 else f"{evaluator}/{field_name}"
        for evaluator, field_name in keys
    }
