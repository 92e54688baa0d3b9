"""Labelled boxes on `iou_score` (`label_key`, `score_key`, `box_key`) and COCO AP in `agentv
metrics` and the HTML report (docs/geometry.md#detection-ap): pairs only within a class, a
ground-truth box without a class cannot be scored, an answer's box without one is a miss, and a
results file's hostile AP records are skipped, said, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import IouScoreConfig
from tests.cli.test_eval import invoke, rows

EVALUATOR = "{type: iou_score, name: layout, path: boxes, label_key: label, score_key: score}"


def _dataset(ws, cases: list[tuple[str, list, list]]) -> None:
    lines = [f"execution:\n  target: t\n  evaluators:\n    - {EVALUATOR}", "evalcases:"]
    for case_id, found, truths in cases:
        ws.file(f"fx/{case_id}.json", json.dumps({"boxes": found}))
        lines.append(
            f"  - id: {case_id}\n"
            f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}]}}]\n"
            f"    expected_messages: [{{role: assistant, content: {json.dumps({'boxes': truths})}}}]"
        )
    ws.file("dataset.yaml", "\n".join(lines) + "\n")


TABLE = {"label": "table", "bbox": [0, 0, 10, 10]}
FIGURE = {"label": "figure", "bbox": [20, 20, 30, 30]}


@pytest.fixture
def detected(ws):
    ws.cli_target("cat {FILES}")
    _dataset(
        ws,
        [
            ("p1", [{**TABLE, "score": 0.9}, {**FIGURE, "score": 0.8}], [TABLE, FIGURE]),
            ("p2", [{**TABLE, "bbox": [0, 0, 10, 6], "score": 0.7}, {**TABLE, "score": 0.3}], [TABLE]),
            ("p3", [{**FIGURE, "label": "table", "score": 0.95}], [FIGURE]),  # the right place, the wrong class
        ],
    )
    return ws


def test_metrics_prints_and_writes_coco_ap_per_evaluator_and_class(detected):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    by_id = {row["eval_id"]: row for row in rows("out.jsonl")}
    [p3] = by_id["p3"]["evaluator_results"]
    assert p3["details"]["tp"] == 0 and p3["details"]["fp"] == 1 and p3["details"]["fn"] == 1
    result = invoke("metrics", "out.jsonl", "--format", "json", "--no-intervals")
    detection = json.loads(result.stdout)["detection"]["layout"]
    # table: detections 0.95 (p3, false), 0.9 (p1, true), 0.7 (p2, IoU 0.6: true to 0.6), 0.3 (p2, true);
    # 2 true tables. figure: 0.8 (p1, true); 2 true figures, so recall stops at 0.5
    assert detection["images"] == 3
    assert detection["classes"]["figure"]["ap"] == pytest.approx(51 / 101)
    assert detection["classes"]["table"]["truths"] == 2 and detection["classes"]["table"]["detections"] == 4
    assert detection["ap50"] == pytest.approx((detection["classes"]["table"]["ap50"] + 51 / 101) / 2)
    table = invoke("metrics", "out.jsonl", "--no-intervals")
    assert "Detection AP (COCO" in table.stdout and "layout" in table.stdout and "figure" in table.stdout


def test_the_html_report_shows_the_ap_table(detected):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    result = invoke("report", "out.jsonl", "--out", "report.html")
    assert result.exit_code == 0
    page = Path("report.html").read_text(encoding="utf-8")
    assert 'id="detection"' in page and "AP@[.5:.95]" in page and "figure" in page


def run(answer, truth, **options):
    config = IouScoreConfig.model_validate({"type": "iou_score", "path": "boxes", "label_key": "label", **options})
    return run_evaluator(config, EvalContext("c1", "d", Path("."), json.dumps({"boxes": answer}), {"boxes": truth}))


def test_a_ground_truth_box_without_a_class_cannot_be_scored():
    result = run([TABLE], [TABLE, {"bbox": [0, 0, 1, 1]}])
    assert result.status == "error"
    assert "boxes[1]': cannot score: invalid expected labelled box: no class: 'label' is missing" in result.reasoning


def test_an_answer_box_without_a_class_or_score_is_a_miss_and_spurious():
    result = run([{"bbox": [0, 0, 10, 10]}, TABLE], [TABLE], score_key="score")
    assert result.misses[:2] == [
        "boxes[0] (invalid labelled box: no class: 'label' is missing)",
        "boxes[1] (invalid labelled box: the score at 'score' is missing)",
    ]
    assert result.details["fp"] == 2 and result.details["fn"] == 1


def test_box_key_names_where_the_shape_sits_and_polygons_may_be_boxed():
    found = [{"label": "t", "shape": [[0, 0], [10, 0], [10, 10], [0, 10]]}]
    result = run(
        found, [{"label": "t", "shape": [[0, 0], [10, 0], [10, 10], [0, 10]]}], box_key="shape", format="polygon"
    )
    assert result.score == 1.0 and result.details["ap"]["truths"] == {"t": 1}


def test_score_key_and_box_key_need_label_key(ws):
    ws.cli_target("cat {FILES}")
    ws.file(
        "dataset.yaml",
        "execution:\n  target: t\n  evaluators:\n    - {type: iou_score, score_key: score}\n"
        "evalcases:\n  - {id: c, input_messages: [{role: user, content: x}], expected_messages: "
        "[{role: assistant, content: {a: 1}}]}\n",
    )
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert "score_key goes with label_key: boxes are objects only when they carry a class" in result.stderr


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ("[]", "details.ap is not an object"),
        ('{"truths": {"a": -1}, "detections": []}', "details.ap.truths is not an object of counts"),
        ('{"truths": {"a": 1}, "detections": [["a", 0.5, 4096]]}', "is not [class, score, bits]"),
        ('{"truths": {"a": 1}, "detections": [["a", "NaN", 1]]}', "is not [class, score, bits]"),
        ('{"truths": {"a": 1}, "detections": {}}', "details.ap.detections is not a list"),
    ],
    ids=["not-object", "negative-count", "bits-too-wide", "text-score", "detections-not-list"],
)
def test_a_hostile_ap_record_in_a_results_file_is_skipped_and_said(detected, record, reason):
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    lines = []
    for row in rows("out.jsonl"):
        row["evaluator_results"][0]["details"]["ap"] = json.loads(record)
        lines.append(json.dumps(row))
    Path("bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke("metrics", "bad.jsonl", "--format", "json", "--no-intervals")
    assert result.exit_code == 0
    assert f"bad.jsonl:1: skipped: p1: layout: {reason}" in result.stderr or reason in result.stderr
    assert "detection" not in json.loads(result.stdout)
