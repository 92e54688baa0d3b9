"""COCO detection AP (scoring/coco.py) against pycocotools' COCOeval on generated datasets: boxes
of three classes jittered from the truth, wrong classes, spurious boxes, tied scores, images with
nothing true, a class with no true box, more than 100 detections of a class on one image. Each
image's boxes go through the `iou_score` evaluator (labelled), and `agentv metrics`' tally
averages them, as a run would."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import IouScoreConfig
from agentv_py.report.detection import DetectionTally, read_record
from agentv_py.report.lean_rows import LeanRow
from agentv_py.scoring.coco import THRESHOLDS, average_precision, match_image

pycocotools = pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402

CLASSES = ["table", "figure", "text", "stamp"]  # "stamp" is only ever detected, never true
CONFIG = IouScoreConfig.model_validate(
    {"type": "iou_score", "path": "boxes", "format": "xywh", "label_key": "label", "score_key": "score"}
)


def _dataset(seed: int, images: int = 40, crowded: bool = False) -> list[tuple[list[dict], list[dict]]]:
    rng = random.Random(seed)
    out = []
    for image in range(images):
        truths = []
        for _ in range(rng.randint(0, 120 if crowded and image == 0 else 8)):
            box = [rng.uniform(0, 500), rng.uniform(0, 500), rng.uniform(5, 100), rng.uniform(5, 100)]
            truths.append({"label": rng.choice(CLASSES[:3]), "bbox": box})
        found = []
        for truth in truths:
            if rng.random() < 0.8:
                x, y, w, h = truth["bbox"]
                box = [
                    x + rng.gauss(0, w * 0.1),
                    y + rng.gauss(0, h * 0.1),
                    w * rng.uniform(0.8, 1.2),
                    h * rng.uniform(0.8, 1.2),
                ]
                label = truth["label"] if rng.random() < 0.9 else rng.choice(CLASSES)
                found.append({"label": label, "bbox": box, "score": round(rng.random(), 1)})  # ties on purpose
        for _ in range(rng.randint(0, 3)):
            box = [rng.uniform(0, 500), rng.uniform(0, 500), rng.uniform(5, 100), rng.uniform(5, 100)]
            found.append({"label": rng.choice(CLASSES), "bbox": box, "score": round(rng.random(), 1)})
        out.append((truths, found))
    return out


def _cocoeval(dataset: list[tuple[list[dict], list[dict]]]) -> COCOeval:
    images, annotations, detections = [], [], []
    for image_id, (truths, found) in enumerate(dataset, start=1):
        images.append({"id": image_id, "width": 700, "height": 700})
        for truth in truths:
            w, h = truth["bbox"][2:]
            category = CLASSES.index(truth["label"]) + 1
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": image_id,
                    "category_id": category,
                    "bbox": truth["bbox"],
                    "area": w * h,
                    "iscrowd": 0,
                }
            )
        for box in found:
            detections.append(
                {
                    "image_id": image_id,
                    "category_id": CLASSES.index(box["label"]) + 1,
                    "bbox": box["bbox"],
                    "score": box["score"],
                }
            )
    with contextlib.redirect_stdout(io.StringIO()):
        truth = COCO()
        categories = [{"id": i + 1, "name": name} for i, name in enumerate(CLASSES)]
        truth.dataset = {"images": images, "annotations": annotations, "categories": categories}
        truth.createIndex()
        evaluation = COCOeval(truth, truth.loadRes(detections) if detections else COCO(), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    return evaluation


def _records(dataset: list[tuple[list[dict], list[dict]]]) -> list[dict]:
    out = []
    for truths, found in dataset:
        context = EvalContext("c", "d", Path("."), json.dumps({"boxes": found}), {"boxes": truths})
        out.append(run_evaluator(CONFIG, context).details["ap"])
    return out


def _ours(dataset: list[tuple[list[dict], list[dict]]]):
    records = []
    for truths, found in dataset:
        context = EvalContext("c", "d", Path("."), json.dumps({"boxes": found}), {"boxes": truths})
        result = run_evaluator(CONFIG, context)
        record = read_record(result.details["ap"])
        assert not isinstance(record, str)
        records.append(record)
    return average_precision(records)


def _class_ap(evaluation: COCOeval, index: int, threshold: int | None = None) -> float | None:
    precision = evaluation.eval["precision"][:, :, index, 0, 2]
    if threshold is not None:
        precision = precision[threshold]
    kept = precision[precision > -1]
    return float(kept.mean()) if kept.size else None


@pytest.mark.parametrize(("seed", "crowded"), [(3, False), (4, False), (5, True)], ids=["seed-3", "seed-4", "crowded"])
def test_ap_agrees_with_pycocotools(seed, crowded):
    dataset = _dataset(seed, crowded=crowded)
    expected = _cocoeval(dataset)
    ours = _ours(dataset)
    assert ours.at() == pytest.approx(expected.stats[0], abs=1e-9)  # AP@[.5:.95]
    assert ours.at(0.5) == pytest.approx(expected.stats[1], abs=1e-9)
    assert ours.at(0.75) == pytest.approx(expected.stats[2], abs=1e-9)
    for index, name in enumerate(CLASSES):
        if name == "stamp":
            assert name not in ours.classes  # no true box: left out, as COCO's -1
            continue
        assert ours.classes[name].ap == pytest.approx(_class_ap(expected, index), abs=1e-9)
        assert ours.classes[name].by_threshold[0] == pytest.approx(_class_ap(expected, index, 0), abs=1e-9)


def test_metrics_tally_orders_images_by_case_whatever_order_the_rows_came_in():
    """`agentv metrics` reads rows in the order they finished; its AP is COCO's over the images in
    case-id order, as if pycocotools had been given them so."""
    dataset = _dataset(6)
    expected = _cocoeval(dataset)  # image ids 1..40 in this order: case ids c000..c039 sort alike
    rows = [
        LeanRow(f"c{index:03d}", "ok", 1.0, "pass", [{"name": "layout", "type": "iou_score", "details": {"ap": ap}}])
        for index, ap in enumerate(_records(dataset))
    ]
    random.Random(1).shuffle(rows)
    tally = DetectionTally()
    for row in rows:
        assert tally.add(row) == []
    ours = tally.results()["layout"]
    assert (ours.at(), ours.at(0.5), ours.at(0.75)) == pytest.approx(tuple(expected.stats[:3]), abs=1e-9)


def test_more_than_100_detections_of_a_class_on_an_image_keep_the_100_best():
    truths = ["table"] * 150
    labels = ["table"] * 150
    scores = [i / 150 for i in range(150)]
    ious = [[1.0 if d == g else 0.0 for g in range(150)] for d in range(150)]
    counted, detections = match_image(truths, labels, scores, ious)
    assert counted == {"table": 150} and len(detections) == 100
    assert min(score for _, score, _ in detections) == pytest.approx(50 / 150)


def test_a_detection_takes_the_best_free_true_box_at_each_threshold():
    # the better-scored detection overlaps both true boxes (0.9 and 0.6) and takes the first; the
    # other overlaps only the second (0.7)
    counted, detections = match_image(["a", "a"], ["a", "a"], [0.9, 0.8], [[0.9, 0.6], [0.0, 0.7]])
    assert counted == {"a": 2}
    bits = {score: matched for _, score, matched in detections}
    assert bits[0.9] == sum(1 << t for t, threshold in enumerate(THRESHOLDS) if threshold <= 0.9)  # not at 0.95
    assert bits[0.8] == sum(1 << t for t, threshold in enumerate(THRESHOLDS) if threshold <= 0.7)
    # the same with the scores swapped: the 0.7 detection goes first and takes the second box
    _, swapped = match_image(["a", "a"], ["a", "a"], [0.8, 0.9], [[0.9, 0.6], [0.0, 0.7]])
    assert {score: matched for _, score, matched in swapped}[0.8] == bits[0.9]


def test_a_class_with_true_boxes_and_no_detection_scores_zero():
    ap = average_precision([({"a": 2, "b": 1}, [("a", 0.5, 1023), ("a", 0.4, 1023)])])
    assert ap.classes["b"].ap == 0.0 and ap.classes["a"].ap == 1.0
    assert ap.at() == 0.5
