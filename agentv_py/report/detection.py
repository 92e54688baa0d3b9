"""COCO detection AP over a results file (docs/metrics.md#detection-ap): each labelled
`iou_score` result carries its image's record (`details.ap`: true boxes per class, detections with
their match bits, `scoring.coco.match_image`); `agentv metrics` and the HTML report average them
per evaluator (`scoring.coco.average_precision`), images in the order of their case ids (then run
and scoring), so a file's AP does not depend on the order its rows finished in."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

from agentv_py.report.lean_rows import LeanRow, walk_row
from agentv_py.report.text import visible
from agentv_py.scoring.coco import THRESHOLDS, Detection, DetectionAP, ranked_precision

_BITS = (1 << len(THRESHOLDS)) - 1


def read_record(record: Any) -> tuple[dict[str, int], list[Detection]] | str:
    """A row's `details.ap`, checked (results files are data), or why it cannot be used."""
    if not isinstance(record, dict):
        return "details.ap is not an object"
    truths, detections = record.get("truths"), record.get("detections")
    if not isinstance(truths, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in truths.items()
    ):
        return "details.ap.truths is not an object of counts"
    if not isinstance(detections, list):
        return "details.ap.detections is not a list"
    read: list[Detection] = []
    for entry in detections:
        if not (isinstance(entry, list) and len(entry) == 3):
            return "details.ap.detections holds an entry that is not [class, score, bits]"
        label, score, bits = entry
        if (
            not isinstance(label, str)
            or isinstance(score, bool)
            or not isinstance(score, (int, float))
            or not math.isfinite(score)
            or isinstance(bits, bool)
            or not isinstance(bits, int)
            or not 0 <= bits <= _BITS
        ):
            return "details.ap.detections holds an entry that is not [class, score, bits]"
        read.append((label, float(score), bits))
    return truths, read


@dataclass
class _Images:
    """One evaluator's images: each image's sort key, and per class its true boxes and its
    detections (score, match bits, image), 14 bytes a detection."""

    keys: list[tuple[str, int, int]] = field(default_factory=list)
    truths: dict[str, int] = field(default_factory=dict)
    scores: dict[str, array[float]] = field(default_factory=dict)
    bits: dict[str, array[int]] = field(default_factory=dict)
    image: dict[str, array[int]] = field(default_factory=dict)

    def add(self, key: tuple[str, int, int], truths: dict[str, int], detections: list[Detection]) -> None:
        index = len(self.keys)
        self.keys.append(key)
        for label, count in truths.items():
            self.truths[label] = self.truths.get(label, 0) + count
        for label, score, matched in detections:
            if label not in self.scores:
                self.scores[label], self.bits[label], self.image[label] = array("d"), array("H"), array("I")
            self.scores[label].append(score)
            self.bits[label].append(matched)
            self.image[label].append(index)

    def ap(self) -> DetectionAP:
        import numpy as np

        rank = np.empty(len(self.keys), dtype=np.int64)
        rank[sorted(range(len(self.keys)), key=self.keys.__getitem__)] = np.arange(len(self.keys))
        classes = {}
        for label, n in self.truths.items():
            bits = np.frombuffer(self.bits.get(label, array("H")), dtype=np.uint16).astype(np.int64)
            if len(bits):  # by score; a tie in image order, then in the image's own order
                scores = np.frombuffer(self.scores[label], dtype=float)
                images = rank[np.frombuffer(self.image[label], dtype=np.uint32)]
                bits = bits[np.lexsort((np.arange(len(scores)), images, -scores))]
            classes[label] = (n, bits)
        return ranked_precision(classes)


@dataclass
class DetectionTally:
    """Per labelled `iou_score` evaluator, each row's image."""

    images: dict[str, _Images] = field(default_factory=dict)

    def add(self, row: LeanRow, evaluator: str | None = None) -> list[str]:
        """The row's records (of `evaluator` only, when given); the problems of those unusable."""
        problems = []
        for name, kind, details in walk_row(row):
            if kind != "iou_score" or "ap" not in details or (evaluator is not None and name != evaluator):
                continue
            problem = self.add_record(name, (row.eval_id, row.repeat or 0, row.rejudge or 0), details["ap"])
            if problem is not None:
                problems.append(f"{name}: {problem}")
        return problems

    def add_record(self, name: str, key: tuple[str, int, int], record: Any) -> str | None:
        """One image's record of evaluator `name`; why it cannot be used, or None."""
        found = read_record(record)
        if isinstance(found, str):
            return found
        images = self.images.get(name)
        if images is None:
            images = self.images[name] = _Images()
        images.add(key, *found)
        return None

    def results(self) -> dict[str, DetectionAP]:
        return {name: images.ap() for name, images in sorted(self.images.items())}

    def to_json(self) -> dict[str, Any]:
        return {name: {"images": len(self.images[name].keys), **ap.to_json()} for name, ap in self.results().items()}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table_rows(name: str, ap: DetectionAP) -> list[list[str]]:
    """[evaluator or class, AP@[.5:.95], AP50, AP75, true boxes, detections]: the evaluator, then
    each class."""
    rows = [
        [
            name,
            _num(ap.at()),
            _num(ap.at(0.5)),
            _num(ap.at(0.75)),
            str(sum(c.truths for c in ap.classes.values())),
            str(sum(c.detections for c in ap.classes.values())),
        ]
    ]
    for label, c in ap.classes.items():
        rows.append(
            [
                f"  {label}",
                _num(c.ap),
                _num(c.by_threshold[0]),
                _num(c.by_threshold[5]),
                str(c.truths),
                str(c.detections),
            ]
        )
    return rows


def render(console: Any, tally: DetectionTally) -> None:
    """The table `agentv metrics` prints under its own (class names are data: shown as text)."""
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table

    found = tally.results()
    if not found:
        return
    columns = [Column("evaluator / class"), *(Column(n, justify="right") for n in ("AP", "AP50", "AP75"))]
    columns += [Column("true boxes", justify="right"), Column("detections", justify="right")]
    rows: list[list[Text | str]] = []
    for name, ap in found.items():
        for row in table_rows(name, ap):
            rows.append([Text(visible(row[0])), *row[1:]])
    print_table(console, "Detection AP (COCO: AP over IoU 0.50:0.95, AP50, AP75; 101 recall points)", columns, rows)
