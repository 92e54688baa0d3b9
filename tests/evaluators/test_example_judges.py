"""The example metrics judges in evals/invoice-extraction/judges, run as real code judges."""

from __future__ import annotations

import json

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import CodeJudgeConfig
from tests.conftest import REPO_ROOT

JUDGES = REPO_ROOT / "evals" / "invoice-extraction" / "judges"
ITEMS = [
    {"description": "OCEAN FREIGHT", "quantity": 1, "line_total": 1800},
    {"description": "Documentation Fee", "quantity": 1, "line_total": 250},
]


def run(judge: str, answer: dict, expected: dict, **config):
    cfg = CodeJudgeConfig.model_validate(
        {"type": "code_judge", "name": "m", "script": ["python3", str(JUDGES / judge)], **config}
    )
    return run_evaluator(cfg, EvalContext("c1", "d", REPO_ROOT, json.dumps(answer), expected))


def test_line_items_missing_from_the_answer_are_all_false_negatives():
    result = run("line_item_matching.py", {"invoice_number": "X"}, {"line_items": ITEMS})
    assert result.status == "processed", result.misses
    metrics = result.details["metrics"]
    assert {k: (v["tp"], v["fp"], v["fn"]) for k, v in metrics.items()} == {
        "line_items[].description": (0, 0, 2),
        "line_items[].quantity": (0, 0, 2),
        "line_items[].line_total": (0, 0, 2),
    }
    assert result.score == 0.0 and result.details["unmatched_expected"] == [0, 1]


def test_line_items_only_in_the_answer_are_false_positives():
    result = run("line_item_matching.py", {"line_items": ITEMS}, {"invoice_number": "X"}, assignment="optimal")
    assert {k: (v["fp"], v["fn"]) for k, v in result.details["metrics"].items()} == {
        "line_items[].description": (2, 0),
        "line_items[].quantity": (2, 0),
        "line_items[].line_total": (2, 0),
    }


def test_line_items_that_are_not_lists_are_a_judge_error():
    result = run("line_item_matching.py", {"line_items": "none"}, {"line_items": ITEMS})
    assert result.status == "error" and "line_items must be a list on both sides" in result.misses[0]


def test_header_metrics_hallucinated_and_missing_fields():
    result = run(
        "header_confusion_metrics.py",
        {"currency": "USD", "po_number": "PO-1"},
        {"currency": "EUR", "invoice_number": "INV-1"},
        fields=["currency", "po_number", "invoice_number", "incoterm"],
    )
    counts = {k: (v["tp"], v["tn"], v["fp"], v["fn"]) for k, v in result.details["metrics"].items()}
    assert counts == {
        "currency": (0, 0, 1, 1),
        "po_number": (0, 0, 1, 0),
        "invoice_number": (0, 0, 0, 1),
        "incoterm": (0, 1, 0, 0),
    }
    assert result.misses == [
        "currency: wrong value (FP+FN)",
        "po_number: not in the document (FP)",
        "invoice_number: missing (FN)",
    ]
    assert result.details["metrics"]["incoterm"]["f1"] is None
