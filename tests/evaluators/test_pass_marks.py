"""A case fails on what matters (issue 24, point 10): `critical: true` fields, `pass_threshold`
on the dataset and on an evaluator, and `weight: per_item` for a list of items. Worked through
the invoice2data regression: a document that loses its whole line-item table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.base import processed_result
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.case import case_verdict, is_hard_failure, with_pass_mark

SCALARS = [f"f{i}" for i in range(12)]
TRUTH: dict[str, Any] = {name: i for i, name in enumerate(SCALARS)}
TRUTH["line_items"] = [{"description": d, "amount": a} for d, a in [("A", 1), ("B", 2), ("C", 3), ("D", 4)]]
LOST_TABLE = {name: i for i, name in enumerate(SCALARS)}  # every scalar right, no line items


def config(items: dict[str, Any] | None = None, **options: Any) -> FieldAccuracyConfig:
    item_field = {"path": "line_items", "match": "items", "fields": [{"path": "amount"}], **(items or {})}
    fields = [{"path": name} for name in SCALARS] + [item_field]
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": fields, **options})


def run(cfg: FieldAccuracyConfig, answer: Any, mark: float = 0.8):
    context = EvalContext("c1", "ds", Path("."), json.dumps(answer), TRUTH, pass_threshold=mark)
    return run_evaluator(cfg, context)


def test_a_lost_line_item_table_passes_when_the_table_weighs_one_field():
    result = run(config(), LOST_TABLE)
    assert result.score == pytest.approx(12 / 13) and result.verdict == "pass"
    assert case_verdict([result]).verdict == "pass"


def test_weight_per_item_makes_each_expected_item_weigh_one_field():
    result = run(config({"weight": "per_item"}), LOST_TABLE)
    assert result.score == pytest.approx(12 / 16) and result.verdict == "partial"
    entry = result.details["fields"][-1]
    assert entry["weight"] == 4.0 and entry["status"] == "miss"
    whole = run(config({"weight": "per_item"}), TRUTH)
    assert whole.score == 1.0 and whole.details["fields"][-1]["weight"] == 4.0


def test_a_missed_critical_field_fails_the_case_whatever_the_score():
    result = run(config({"critical": True}), LOST_TABLE)
    assert result.score == pytest.approx(12 / 13)
    assert (result.verdict, result.passed) == ("fail", False)
    assert result.details["failed_critical"] == ["line_items"]
    assert result.reasoning == "12/13 fields matched; critical field missed: line_items"
    assert result.misses[0] == "critical field missed: line_items"  # first: why a 0.923 failed
    assert result.details["fields"][-1]["critical"] is True
    other = processed_result(name="other", type="code_judge", score=1.0, weight=9.0)
    verdict = case_verdict([result, other])
    assert verdict.score > 0.99 and verdict.verdict == "fail"


def test_a_critical_field_that_hits_changes_nothing():
    result = run(config({"critical": True}), TRUTH)
    assert (result.score, result.verdict, "failed_critical" in result.details) == (1.0, "pass", False)


def test_the_dataset_pass_mark_grades_every_evaluator_and_the_case():
    strict = run(config(), LOST_TABLE, mark=0.95)  # 0.923
    assert strict.verdict == "partial" and "pass_threshold" not in strict.details
    assert case_verdict([strict], 0.95).verdict == "partial"
    half = {name: (i if i < 7 else -1) for i, name in enumerate(SCALARS)} | {"line_items": TRUTH["line_items"]}
    lenient = run(config(), half, mark=0.5)  # 8 of 13 right: 0.615
    assert lenient.verdict == "pass" and case_verdict([lenient], 0.5).verdict == "pass"
    assert case_verdict([lenient]).verdict == "partial"


def test_an_evaluators_own_pass_mark_fails_its_case_below_it():
    own = run(config(pass_threshold=0.95), LOST_TABLE)
    assert (own.verdict, own.passed, own.details["pass_threshold"]) == ("fail", False, 0.95)
    assert own.misses[0] == "score 0.923 < its pass_threshold 0.95"
    assert own.reasoning.endswith("; score 0.923 < its pass_threshold 0.95")
    assert is_hard_failure(own)
    assert case_verdict([own]).verdict == "fail"  # case score 0.923 would pass
    over = run(config(pass_threshold=0.9), LOST_TABLE)
    assert (over.verdict, over.passed) == ("pass", True) and case_verdict([over]).verdict == "pass"
    assert not over.misses[0].startswith("score")


def test_a_hard_failure_survives_a_lenient_mark():
    """A required rubric item fails its evaluator whatever the score: a dataset mark of 0.5 does
    not turn its 0.55 into a pass."""
    rubric = processed_result(name="r", type="rubric", score=0.55, verdict="fail")
    graded = with_pass_mark(rubric, 0.5, explicit=False)
    assert graded.verdict == "fail" and is_hard_failure(graded, 0.5)
    assert case_verdict([graded], 0.5).verdict == "fail"
    plain = with_pass_mark(processed_result(name="p", type="code_judge", score=0.55), 0.5, explicit=False)
    assert plain.verdict == "pass" and not is_hard_failure(plain, 0.5)


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def test_eval_applies_the_dataset_mark_and_critical_fields(ws):
    ws.cli_target("cat {FILES}")
    ws.file("fx/c1.json", json.dumps({"number": "INV-1", "total": 10, "note": "x"}))
    ws.file("fx/c2.json", json.dumps({"number": "INV-2", "total": 99, "note": "y"}))
    ws.dataset(
        """
        pass_threshold: 0.6
        execution:
          target: t
          evaluators:
            - type: field_accuracy
              fields: [{path: number}, {path: total, critical: true}, {path: note}]
        evalcases:
          - id: c1
            input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]
            expected_output: {number: INV-1, total: 10, note: z}
          - id: c2
            input_messages: [{role: user, content: [{type: file, value: fx/c2.json}]}]
            expected_output: {number: INV-2, total: 10, note: y}
        """
    )
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 1, result.output
    rows = {row["eval_id"]: row for row in map(json.loads, Path("o.jsonl").read_text().splitlines())}
    assert (rows["c1"]["score"], rows["c1"]["verdict"]) == (pytest.approx(2 / 3), "pass")  # 0.667 >= 0.6
    assert (rows["c2"]["score"], rows["c2"]["verdict"]) == (pytest.approx(2 / 3), "fail")  # total is critical
    assert rows["c2"]["evaluator_results"][0]["details"]["failed_critical"] == ["total"]
    assert "gate failed: 1 of 2 cases did not pass" in result.stderr
    assert rows["c2"]["misses"][:2] == ["critical field missed: total", "total (value mismatch)"]
    assert "critical field missed: total" in result.stdout  # the summary table says why 0.667 failed


@pytest.mark.parametrize(
    "yaml, message",
    [
        (
            "pass_threshold: 1.5\n",
            "dataset.yaml:1: pass_threshold: pass_threshold must be between 0 and 1, got 1.5",
        ),
        (
            "",
            "dataset.yaml:4: execution.evaluators[0].pass_threshold: pass_threshold must be between 0 and 1, got -0.1",
        ),
    ],
    ids=["dataset", "evaluator"],
)
def test_a_pass_threshold_outside_0_1_is_refused(ws, yaml, message):
    mark = "-0.1" if not yaml else "0.8"
    ws.dataset(
        yaml + "execution:\n  evaluators:\n    - type: field_accuracy\n"
        f"      pass_threshold: {mark}\n      fields: [{{path: a}}]\n"
        "evalcases:\n  - {id: c1, input: hi, expected_output: {a: 1}}\n"
    )
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize(
    "field, message",
    [
        (
            "{path: a, critical: true, required: false}",
            "a critical field must be required: an optional field the answer leaves out is not scored, so it could "
            "never fail its case (drop 'required: false' or 'critical: true')",
        ),
        (
            "{path: a, weight: per_item}",
            "weight per_item applies to a match 'items' field (each expected item weighs one field), not to match "
            "'exact': give a number",
        ),
        (
            "{path: a, weight: heavy}",
            "weight must be a number >= 0, or per_item for a match 'items' field, got 'heavy'",
        ),
        (
            "{path: a, match: items, fields: [{path: b, critical: true}]}",
            "critical applies to a top-level field, not to the sub-field 'b': make the items field critical (it "
            "misses when any item is missing, extra or wrong)",
        ),
    ],
    ids=["critical-optional", "per-item-not-items", "weight-word", "critical-sub-field"],
)
def test_bad_field_options_are_refused(ws, field, message):
    ws.dataset(
        f"execution:\n  evaluators:\n    - {{type: field_accuracy, fields: [{field}]}}\n"
        "evalcases:\n  - {id: c1, input: hi, expected_output: {a: 1}}\n"
    )
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2, result.output
    assert "dataset.yaml:3: execution.evaluators[0].fields[0]" in result.output and message in result.output
