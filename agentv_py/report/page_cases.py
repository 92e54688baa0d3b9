"""What the report's page holds of each case, made as its row is read: its entry in the case
table (id, score, verdict: xfail or xpass for a case the dataset marks `xfail:`, evaluators,
fields missed and scored, dataset), its details (cut to `VALUE_CHARS` per value, `LIST_ITEMS`
per list) and what it adds to the page's totals; and the totals themselves, summed over the
cases in their order once every row is read (the last row of a case is the one counted).

The details say what the page folds behind a case's "show all": `field_accuracy`'s fields that
were not scored (`folded_fields`, apart from the scored `fields`) and a line-item table's columns
that are null on both sides in every row (`folded_columns`, apart from `columns`)."""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentv_py.models.field_results import FieldOutcome, ItemAlignment, read_detection, to_details
from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.detection import DetectionTally
from agentv_py.report.lean_sums import keep_row, signature
from agentv_py.report.misses import misses_with_values
from agentv_py.report.slices import NONE, slice_label
from agentv_py.scoring.metrics import Counts, FieldKey, row_field_counts, walk_fields, walk_results
from agentv_py.scoring.taxonomy import add_taxonomy, row_taxonomy

VALUE_CHARS = 2_000  # a value longer than this is cut in the embedded details
LIST_ITEMS = 200  # hits, misses, items listed per evaluator in the details
GEOMETRY = ("iou_score", "coordinate_distance")
FOLDED_STATUSES = ("not scored",)  # field statuses the page folds behind a case's "show all"


@dataclass
class Interned:
    """Names the case table refers to by number: evaluators, field paths, datasets."""

    names: dict[str, int] = field(default_factory=dict)
    fields: dict[str, int] = field(default_factory=dict)
    datasets: dict[str, int] = field(default_factory=dict)


def _intern(table: dict[str, int], key: str) -> int:
    return table.setdefault(key, len(table))


@dataclass(frozen=True)
class CaseParts:
    entry: bytes  # the case table's row (JSON)
    details: bytes  # the details shown when the case is opened (JSON for a script element)
    totals: bytes  # what the case adds to the page's totals (`Totals.add`)
    geometry: bool  # the details hold shapes to draw


def case_parts(row: ResultRow, interned: Interned) -> CaseParts:
    """One row as the page holds it."""
    results = row.evaluator_results
    evaluators = sorted({_intern(interned.names, result.name) for result in results})
    missed = [_intern(interned.fields, path) for path in _missed_fields(results)]
    scored = [_intern(interned.fields, path) for path in _scored_fields(results)]
    verdict = "error" if row.status == "error" else row.verdict
    shown = row.expected_outcome or verdict  # an `xfail:` case reads xfail or xpass in the table, not fail or pass
    entry = [row.run_label, row.score, shown, evaluators, missed, scored, _intern(interned.datasets, row.dataset)]
    geometry = any(result.type in GEOMETRY for result in results)
    details = {
        "id": row.run_label,
        "dataset": row.dataset,
        "target": row.target,
        "status": row.status,
        "verdict": row.verdict,
        "score": row.score,
        "duration_ms": row.duration_ms,
        "attempts": row.attempts,
        "error": cut(row.error),
        "answer": cut(row.candidate_answer),
        "stderr": cut(row.trace.stderr),
        "evaluators": [_evaluator_details(result) for result in results],
        "geometry": geometry,
    }
    totals = {
        "score": row.score,
        "verdict": verdict,
        "evaluators": [[result.name, result.status, result.score] for result in results],
        "counts": [[*key, *counts.as_tuple()] for key, counts in row_field_counts(results).items()],
        "taxonomy": [[*key, kinds] for key, kinds in row_taxonomy(results).items()],
        "key": [row.eval_id, row.repeat or 0, row.rejudge or 0],  # the order of images for detection AP
        "ap": [
            [name, details["ap"]]
            for name, kind, details in walk_results(results)
            if kind == "iou_score" and "ap" in details
        ],
        "metadata": row.metadata,
    }
    return CaseParts(
        json_for_script(entry).encode("utf-8"),
        json_for_script(details).encode("utf-8"),
        _dumps(totals),
        geometry,
    )


@dataclass
class Totals:
    """The page's totals, summed case by case in the cases' order (`add` each case's totals)."""

    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("pass", "partial", "fail", "error"), 0))
    scores: array[float] = field(default_factory=lambda: array("d"))  # 8 bytes a case
    evaluator_scores: dict[str, array[float]] = field(default_factory=dict)  # in the order first listed
    counts: dict[FieldKey, Counts] = field(default_factory=dict)
    taxonomy: dict[FieldKey, dict[str, int]] = field(default_factory=dict)
    # each distinct case's own counts and how many cases have them (report/metrics.signature): the
    # document bootstrap of the field table's intervals
    signatures: Counter[bytes] = field(default_factory=Counter)
    _positions: dict[int, int] = field(default_factory=dict)
    detection: DetectionTally = field(default_factory=DetectionTally)  # labelled iou_score: COCO AP
    unreadable_ap: int = 0  # AP records that are not what `iou_score` writes (said on the page)
    by: str | None = None  # `agentv report --by KEY`: a Totals per value of the cases' metadata KEY
    slices: dict[str, Totals] = field(default_factory=dict)

    @property
    def cases(self) -> int:
        return len(self.scores)

    def add(self, data: bytes) -> None:
        totals = _loads(data)
        self.scores.append(totals["score"])
        self.verdicts[totals["verdict"]] = self.verdicts.get(totals["verdict"], 0) + 1
        for name, status, score in totals["evaluators"]:
            listed = self.evaluator_scores.setdefault(name, array("d"))
            if status != "skipped" and score is not None:
                listed.append(score)
        kept: dict[int, list[int]] = {}
        for name, path, *numbers in totals["counts"]:
            known = self.counts.setdefault((name, path), Counts())
            known += Counts(*numbers)
            tp, _, fp, fn = numbers
            keep_row(kept, known, tp, fp, fn)
        if kept:
            self.signatures[signature(kept, self._positions, self.counts)] += 1
        add_taxonomy(self.taxonomy, {(name, path): kinds for name, path, kinds in totals["taxonomy"]})
        key = tuple(totals["key"])
        for name, record in totals["ap"]:
            self.unreadable_ap += self.detection.add_record(name, key, record) is not None
        if self.by is not None:
            metadata = totals["metadata"] or {}
            label = slice_label(metadata[self.by]) if self.by in metadata else NONE
            self.slices.setdefault(label, Totals()).add(data)

    @property
    def mean(self) -> float | None:
        return math.fsum(self.scores) / len(self.scores) if self.scores else None

    def evaluator_means(self) -> dict[str, float]:
        """Mean score per evaluator, in the order the cases first list them."""
        return {name: math.fsum(found) / len(found) for name, found in self.evaluator_scores.items() if found}


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # a lone surrogate (a file's `\\ud800` escape): the standard library escapes it
        return json.dumps(value).encode("ascii")


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except ValueError:
        return json.loads(data)


def json_for_script(value: Any) -> str:
    """JSON that can sit inside `<script type="application/json">`: nothing in it can close the
    element or start markup (`<`, `>`, `&` escaped), and no line separator breaks it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(raw, escaped)
    return text.replace("\u2029", "\\u2029")


def cut(value: Any) -> Any:
    """A value for the embedded details: strings over VALUE_CHARS cut (with their length said),
    containers walked (at most LIST_ITEMS entries each), numbers that JSON cannot hold as text."""
    if isinstance(value, str):
        if len(value) <= VALUE_CHARS:
            return value
        return {"$cut": value[:VALUE_CHARS], "$length": len(value)}
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {str(k): cut(v) for k, v in items[:LIST_ITEMS]}
        if len(items) > LIST_ITEMS:
            out["$more"] = len(items) - LIST_ITEMS
        return out
    if isinstance(value, (list, tuple)):
        shown = [cut(v) for v in value[:LIST_ITEMS]]
        if len(value) > LIST_ITEMS:
            shown.append({"$more": len(value) - LIST_ITEMS})
        return shown
    return cut(str(value))


def _evaluator_details(result: EvaluatorResult) -> dict[str, Any]:
    """One evaluator's part of a case's details: score and texts, field_accuracy's fields (with
    line-item alignments), geometry's shapes, a judge's other details, nested results."""
    details = dict(result.details)
    out: dict[str, Any] = {
        "name": result.name,
        "type": result.type,
        "status": result.status,
        "score": result.score,
        "weight": result.weight,
        "verdict": result.verdict,
        "reasoning": cut(result.reasoning),
        "hits": cut(result.hits),
        "misses": cut(misses_with_values(result.misses, [result])),
    }
    if result.type == "field_accuracy" and "fields" in details:
        outcomes = result.field_outcomes()  # those that fit the model
        out["fields"] = cut([_field_details(entry) for entry in outcomes if not folded(entry)])
        out["folded_fields"] = cut([_field_details(entry) for entry in outcomes if folded(entry)])
        del details["fields"]
    detection = read_detection(details) if result.type in GEOMETRY else None
    if detection is not None and detection.drawn is not None:
        out["drawn"] = cut(detection.drawn)
        details.pop("drawn")
    nested = details.pop("evaluator_results", None)
    if details:
        out["details"] = cut(details)
    children = [_evaluator_details(child) for child in result.evaluator_results]
    if isinstance(nested, list):
        children += [
            _evaluator_details(EvaluatorResult.model_validate(child))
            for child in nested
            if isinstance(child, dict) and _valid_result(child)
        ]
    if children:
        out["children"] = children
    return out


def folded(outcome: FieldOutcome) -> bool:
    """A field the page folds behind its case's "show all": one that was not scored (no expected
    value, or optional and absent). "could not score" (unusable ground truth) stays in view."""
    return outcome.status in FOLDED_STATUSES


def item_columns(alignment: ItemAlignment) -> tuple[list[str], list[str]]:
    """The sub-field columns of a line-item table (in the order the pairs first name them): those
    shown, and those folded behind "show all" (null or absent on both sides in every pair, and
    never a miss)."""
    columns: dict[str, bool] = {}  # path -> some pair has a value on either side
    for pair in alignment.pairs:
        for sub in pair.fields:
            seen = columns.get(sub.path, False)
            columns[sub.path] = seen or sub.expected is not None or sub.actual is not None or sub.status == "miss"
    shown = [path for path, valued in columns.items() if valued]
    return shown, [path for path, valued in columns.items() if not valued]


def _field_details(outcome: FieldOutcome) -> dict[str, Any]:
    out = to_details(outcome)
    if outcome.alignment is not None:
        out["columns"], out["folded_columns"] = item_columns(outcome.alignment)
    return out


def _valid_result(data: dict[str, Any]) -> bool:
    try:
        EvaluatorResult.model_validate(data)
    except ValueError:
        return False
    return True


def _missed_fields(results: Iterable[Any]) -> list[str]:
    """Field paths a field_accuracy result (nested ones included) scored as a miss."""
    missed: dict[str, None] = {}
    for _, entry in walk_fields(results):
        if entry.status == "miss":
            missed.setdefault(entry.path, None)
    return list(missed)


def _scored_fields(results: Iterable[Any]) -> list[str]:
    found: dict[str, None] = {}
    for _, entry in walk_fields(results):
        found.setdefault(entry.path, None)
    return list(found)
