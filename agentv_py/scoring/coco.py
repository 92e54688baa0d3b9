"""COCO-style detection average precision (Lin et al. 2014, "Microsoft COCO: Common objects in
context", ECCV; `pycocotools`' `COCOeval`, box IoU, area range "all", 100 detections per image).

Two steps, as COCOeval takes them:
- **per image** (`match_image`, in the `iou_score` evaluator): for each class, the image's
  detections of that class in order of score (ties in the answer's order; the first 100 kept) are
  matched greedily to its true boxes at each IoU threshold 0.50, 0.55, ..., 0.95 — a detection
  takes the unmatched true box of highest IoU at or above the threshold (the later box on a tie).
  Each detection is recorded as (class, score, a bit per threshold at which it matched).
- **over the dataset** (`average_precision`, in `agentv metrics`): per class, every image's
  detections in order of score (ties in image order), cumulative precision and recall; precision
  made non-increasing from the right, read at the 101 recall points 0, 0.01, ..., 1 (0 beyond the
  last recall reached). AP of a class at a threshold is the mean over the recall points; AP@[.5:.95]
  the mean over thresholds and classes; AP50 and AP75 at one threshold. A class with no true box is
  left out (COCO's -1), a class with true boxes and no detection scores 0.

The tests compare with pycocotools on generated datasets. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# COCOeval's np.linspace(.5, .95, 10), to the bit (its 0.9 is 0.8999999999999999)
THRESHOLDS: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.8999999999999999, 0.95)
MAX_DETECTIONS = 100  # per image and class (COCO's maxDets[-1])
RECALL_POINTS = 101
Detection = tuple[str, float, int]  # class, score, matched-at bits (bit t: THRESHOLDS[t])


def match_image(
    truth_labels: Sequence[str], labels: Sequence[str], scores: Sequence[float], ious: Any
) -> tuple[dict[str, int], list[Detection]]:
    """The true boxes per class and the detections with their match bits (see the module).
    `ious[d][g]`: IoU of detection d with true box g (any classes; only same-class pairs count)."""
    truths: dict[str, int] = {}
    for label in truth_labels:
        truths[label] = truths.get(label, 0) + 1
    recorded: list[Detection] = []
    for label in dict.fromkeys(labels):
        dets = sorted((d for d, own in enumerate(labels) if own == label), key=lambda d: -scores[d])
        dets = dets[:MAX_DETECTIONS]
        gts = [g for g, own in enumerate(truth_labels) if own == label]
        # each detection's candidates, in true-box order: only IoU >= 0.5 can ever match
        candidates = [[(k, float(ious[d][g])) for k, g in enumerate(gts) if ious[d][g] >= THRESHOLDS[0]] for d in dets]
        bits = [0] * len(dets)
        for t, threshold in enumerate(THRESHOLDS):
            taken = [False] * len(gts)
            for position, found in enumerate(candidates):
                best, match = min(threshold, 1 - 1e-10), -1
                for k, value in found:
                    if taken[k] or value < best:
                        continue
                    best, match = value, k
                if match >= 0:
                    taken[match] = True
                    bits[position] |= 1 << t
        recorded.extend((label, float(scores[d]), bits[position]) for position, d in enumerate(dets))
    return truths, recorded


@dataclass(frozen=True, slots=True)
class ClassAP:
    truths: int
    detections: int
    by_threshold: tuple[float, ...]  # AP at each of THRESHOLDS

    @property
    def ap(self) -> float:
        return sum(self.by_threshold) / len(self.by_threshold)


@dataclass(frozen=True, slots=True)
class DetectionAP:
    classes: dict[str, ClassAP]  # the classes with at least one true box, sorted

    def at(self, threshold: float | None = None) -> float | None:
        """AP averaged over classes: at one threshold (0.5, 0.75), or over all of them (None)."""
        if not self.classes:
            return None
        if threshold is None:
            return sum(c.ap for c in self.classes.values()) / len(self.classes)
        t = THRESHOLDS.index(threshold)
        return sum(c.by_threshold[t] for c in self.classes.values()) / len(self.classes)

    def to_json(self) -> dict[str, Any]:
        return {
            "ap": self.at(),
            "ap50": self.at(0.5),
            "ap75": self.at(0.75),
            "classes": {
                label: {
                    "ap": c.ap,
                    "ap50": c.by_threshold[0],
                    "ap75": c.by_threshold[THRESHOLDS.index(0.75)],
                    "truths": c.truths,
                    "detections": c.detections,
                }
                for label, c in self.classes.items()
            },
        }


def average_precision(images: Iterable[tuple[dict[str, int], Sequence[Detection]]]) -> DetectionAP:
    """COCO AP over the images, each (true boxes per class, its detections), in image order."""
    truths: dict[str, int] = {}
    scores: dict[str, list[float]] = {}
    bits: dict[str, list[int]] = {}
    for image_truths, detections in images:
        for label, count in image_truths.items():
            truths[label] = truths.get(label, 0) + count
        for label, score, matched in detections:
            scores.setdefault(label, []).append(score)
            bits.setdefault(label, []).append(matched)
    import numpy as np

    ranked = {}
    for label, n in truths.items():
        order = np.argsort(-np.asarray(scores.get(label, []), dtype=float), kind="mergesort")
        ranked[label] = (n, np.asarray(bits.get(label, []), dtype=np.int64)[order])
    return ranked_precision(ranked)


def ranked_precision(classes: Mapping[str, tuple[int, Any]]) -> DetectionAP:
    """COCO AP from each class's true-box count and its detections' match bits (an int array) in
    COCO's order: by score, a tie in image order, then in the image's own order."""
    import numpy as np

    recall_points = np.linspace(0.0, 1.0, RECALL_POINTS)
    found: dict[str, ClassAP] = {}
    for label in sorted(classes):
        n_true, ranked = classes[label]
        if n_true == 0:
            continue
        by_threshold = []
        for t in range(len(THRESHOLDS)):
            hits = (ranked >> t) & 1
            tp = np.cumsum(hits).astype(float)
            fp = np.cumsum(1 - hits).astype(float)
            recall = tp / n_true
            precision = (tp / (fp + tp + np.spacing(1))).tolist()
            for i in range(len(precision) - 1, 0, -1):
                if precision[i] > precision[i - 1]:
                    precision[i - 1] = precision[i]
            at = np.searchsorted(recall, recall_points, side="left")
            read = [precision[i] if i < len(precision) else 0.0 for i in at]
            by_threshold.append(float(np.mean(read)))
        found[label] = ClassAP(n_true, len(ranked), tuple(by_threshold))
    return DetectionAP(found)
