"""Typed outcomes of the built-in evaluators that score parts of an answer: `field_accuracy`'s
fields (a `match: items` field with its alignment) and the geometry evaluators' pairs and
detection counts.

The evaluators build these models and write them into `EvaluatorResult.details` (`to_details`:
the JSONL keys are the models' field names, as documented; a key not set is not written). Every
reader (metrics, taxonomy, gates, the HTML report, JUnit, explain, compare) reads them back
through `read_fields` and `read_detection`, the one place a row's details are checked: an entry
that does not fit (another version's, a hand-edited file's) is left out, never guessed at.
Renaming a field here breaks the type checker, not a chart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, NonNegativeInt, TypeAdapter, ValidationError

FieldStatus = Literal["hit", "miss", "not scored", "could not score"]


class _Outcome(BaseModel):
    # A key the model does not name (another version's note) is not read: what every reader sees
    # is the model's (and ignoring costs half of keeping: `agentv metrics` reads every field).
    # Built on first use (`defer_build`), as results are: `validate` scores nothing.
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ItemCounts(BaseModel):
    """A `match: items` field's exact counts (the alignment lists at most `LISTED` of each)."""

    model_config = ConfigDict(defer_build=True)

    expected: NonNegativeInt
    actual: NonNegativeInt
    matched: NonNegativeInt
    correct: NonNegativeInt
    wrong: NonNegativeInt
    missing: NonNegativeInt
    extra: NonNegativeInt


class ValueCounts(BaseModel):
    """A `match: set` field's counts: values expected, answered, and paired."""

    model_config = ConfigDict(defer_build=True)

    expected: NonNegativeInt
    actual: NonNegativeInt
    matched: NonNegativeInt


class ItemPair(_Outcome):
    """An expected item (`expected`: its index) paired with an answer item (`actual`)."""

    expected: int
    actual: int
    similarity: float
    status: Literal["hit", "miss"]
    score: float | None = None
    fields: list[FieldOutcome] = []


class ItemAlignment(_Outcome):
    """How the items were paired (`scoring.items.align`): at most `LISTED` pairs, missing and
    extra indices, `truncated` when there were more."""

    key: list[str] = ["description"]
    threshold: float | None = None
    algorithm: str | None = None
    pairs: list[ItemPair] = []
    missing: list[int] = []
    extra: list[int] = []
    junk: list[int] = []
    truncated: bool = False


class FieldOutcome(_Outcome):
    """One field of a `field_accuracy` result: its values, how it was matched and how it went."""

    path: str
    match: str = "exact"
    expected: Any = None
    actual: Any = None  # not set (not written): the answer has nothing at the path (`answered`)
    weight: float = 1.0
    critical: bool = False  # written only when true
    status: FieldStatus
    reason: str | None = None
    score: float | None = None
    # a matcher's notes: numeric_tolerance
    diff: float | None = None
    relative_diff: float | None = None
    tolerance: float | None = None
    relative: bool | None = None
    # fuzzy
    similarity: float | None = None
    threshold: float | None = None
    confidence: float | None = None  # the extractor's own, when `field_accuracy` reads one (`confidence:`)
    algorithm: str | None = None
    # date
    parsed: str | None = None
    expected_date: str | None = None
    formats_tried: str | None = None  # the formats listed, as the miss says them
    note: str | None = None  # something the score does not say (a date read one of two ways)
    # items
    items: ItemCounts | None = None
    alignment: ItemAlignment | None = None
    # set: how many values each side had, and how many paired
    values: ValueCounts | None = None
    # count: the answer's list length, and the expected list's (without min/max)
    count: int | None = None
    expected_count: int | None = None
    # any: the matcher that read the expected value
    matcher: str | None = None

    @property
    def answered(self) -> bool:
        """Did the answer hold anything at the path (null included)?"""
        return "actual" in self.model_fields_set

    @property
    def is_items(self) -> bool:
        """A `match: items` field with a list of expected items (counted per item)."""
        return self.match == "items" and isinstance(self.expected, list)


class FieldAccuracyDetails(_Outcome):
    fields: list[FieldOutcome]
    aggregation: str | None = None
    parse_error: bool = False  # the answer was not JSON: every expected field a miss
    failed_critical: list[str] | None = None


class GeometryPair(_Outcome):
    """An expected shape or point (`expected`) paired with the answer's (`candidate`)."""

    expected: int
    candidate: int
    iou: float | None = None
    distance: float | None = None


class DetectionDetails(_Outcome):
    """`iou_score` and `coordinate_distance`: one shape's IoU or one point's distance, or lists
    paired (`pairs`) and counted (`tp`, `fp`, `fn` with their rates; `within` for points)."""

    threshold: float | None = None
    iou: float | None = None
    distance: float | None = None
    tp: NonNegativeInt | None = None
    fp: NonNegativeInt | None = None
    fn: NonNegativeInt | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    within: NonNegativeInt | None = None
    mean_iou_matched: float | None = None
    pairs: list[GeometryPair] | None = None
    format: str | None = None
    expected_format: str | None = None
    metric: str | None = None
    matching: str | None = None
    drawn: dict[str, Any] | None = None  # the shapes or points the HTML report draws
    # labelled iou_score: {"truths": {class: n}, "detections": [[class, score, matched bits]]} (scoring/coco.py)
    ap: dict[str, Any] | None = None


def to_details(outcome: BaseModel) -> dict[str, Any]:
    """The model as an evaluator result's `details`: the keys that were set, by their names."""
    return outcome.model_dump(exclude_unset=True)


_FIELD_LIST = TypeAdapter(list[FieldOutcome], config=ConfigDict(defer_build=True))
DEFERRED_ROOTS: tuple[type[BaseModel], ...] = (_Outcome, ItemCounts, ValueCounts)  # and every subclass


def read_fields(details: Mapping[str, Any]) -> list[FieldOutcome]:
    """The field outcomes of a `field_accuracy` result's details; an entry that does not fit
    the model is left out (the others are read)."""
    entries = details.get("fields")
    if not isinstance(entries, list):
        return []
    try:
        return _FIELD_LIST.validate_python(entries)  # the usual case: every entry at once
    except (ValidationError, RecursionError):
        pass
    found = []
    for entry in entries:
        try:
            found.append(FieldOutcome.model_validate(entry))
        except (ValidationError, RecursionError):
            continue
    return found


def read_field(entry: Any) -> FieldOutcome | None:
    """One entry of `details.fields`, or None when it does not fit."""
    try:
        return FieldOutcome.model_validate(entry)
    except (ValidationError, RecursionError):
        return None


def read_detection(details: Mapping[str, Any]) -> DetectionDetails | None:
    """The details of an `iou_score` or `coordinate_distance` result; None when they do not fit
    (the AP record is read on its own, `report.detection`: a bad one does not lose the counts)."""
    try:
        return DetectionDetails.model_validate({key: value for key, value in details.items() if key != "ap"})
    except (ValidationError, RecursionError):
        return None
