"""`match: items` pairs on the whole item: between equal keys (duplicate descriptions) the pairing
whose sub-fields agree wins, and an answer that differs only in item order scores exactly as the
ordered one (both algorithms; a hypothesis property over shuffles with duplicates)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.metrics import field_accuracy_counts


def config(algorithm: str = "optimal", fuzzy: bool = False) -> FieldAccuracyConfig:
    description = {"path": "description", "match": "fuzzy"} if fuzzy else {"path": "description"}
    fields = [description, {"path": "quantity", "match": "numeric_tolerance", "tolerance": 0}, {"path": "amount"}]
    items = {"path": "items", "match": "items", "algorithm": algorithm, "fields": fields}
    return FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [items]})


def outcome(cfg: FieldAccuracyConfig, answer: list[Any], expected: list[Any]) -> tuple[float | None, Any, Any]:
    result = run_evaluator(cfg, EvalContext("c1", "ds", Path("."), json.dumps({"items": answer}), {"items": expected}))
    (entry,) = result.details["fields"]
    counts = field_accuracy_counts(result.details)["items"].as_tuple()
    return result.score, entry.get("items"), counts


TWO_FEES = [{"description": "Fee", "quantity": 1, "amount": 10}, {"description": "Fee", "quantity": 2, "amount": 20}]


@pytest.mark.parametrize("algorithm", ["optimal", "greedy"])
def test_duplicate_descriptions_answered_in_reverse_order_score_as_in_order(algorithm):
    cfg = config(algorithm)
    assert outcome(cfg, TWO_FEES, TWO_FEES)[0] == 1.0
    score, items, counts = outcome(cfg, TWO_FEES[::-1], TWO_FEES)
    assert score == 1.0 and counts == (2, 0, 0, 0)
    assert items == {"expected": 2, "actual": 2, "matched": 2, "correct": 2, "wrong": 0, "missing": 0, "extra": 0}


@pytest.mark.parametrize("algorithm", ["optimal", "greedy"])
def test_between_equal_keys_the_pairing_whose_sub_fields_agree_wins(algorithm):
    truth = [*TWO_FEES, {"description": "Fee", "quantity": 3, "amount": 30}]
    answer = [{"description": "Fee", "quantity": 3, "amount": 31}, TWO_FEES[1], TWO_FEES[0]]
    score, items, counts = outcome(config(algorithm), answer, truth)
    assert items is not None and (items["correct"], items["wrong"]) == (2, 1)  # only the 31 is wrong
    assert counts == (2, 0, 1, 1)
    assert score == pytest.approx((1 + 1 + 2 / 3) / 3)


def test_a_better_key_still_beats_agreeing_sub_fields():
    truth = [
        {"description": "Widget", "quantity": 1, "amount": 5},
        {"description": "Gadget", "quantity": 2, "amount": 6},
    ]
    answer = [
        {"description": "Widget", "quantity": 2, "amount": 6},
        {"description": "Gadget", "quantity": 1, "amount": 5},
    ]
    _, items, _ = outcome(config(), answer, truth)
    assert items is not None and (items["matched"], items["wrong"]) == (2, 2)  # paired by description


descriptions = st.sampled_from(["Fee", "Fee", "Freight", "Freight charge", "Box", ""])
items_strategy = st.lists(
    st.fixed_dictionaries(
        {"description": descriptions, "quantity": st.integers(0, 3), "amount": st.sampled_from([1, 2, 2.5, "2", None])}
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    expected=items_strategy,
    answer=items_strategy,
    seed=st.integers(0, 2**32),
    algorithm=st.sampled_from(["optimal", "greedy"]),
    fuzzy=st.booleans(),
)
@example(expected=TWO_FEES, answer=TWO_FEES, seed=1, algorithm="greedy", fuzzy=False)
def test_an_answer_that_differs_only_in_order_scores_exactly_the_same(expected, answer, seed, algorithm, fuzzy):
    cfg = config(algorithm, fuzzy)
    shuffled = list(answer)
    random.Random(seed).shuffle(shuffled)
    assert outcome(cfg, shuffled, expected) == outcome(cfg, answer, expected)
    shuffled_truth = list(expected)
    random.Random(seed).shuffle(shuffled_truth)
    assert outcome(cfg, shuffled_truth, expected)[0] == 1.0  # the ground truth itself, in any order


@pytest.mark.parametrize("algorithm", ["optimal", "greedy"])
def test_past_the_agreement_budget_equal_items_still_pair_with_each_other(algorithm, monkeypatch):
    """Agreement is asked for tied pairs only, and not at all past its budget: 300 lines called
    `Fee` (90,000 tied pairs) still pair k-th with k-th in content order, so a shuffled copy of
    the ground truth scores 1.0 and one wrong amount costs one item."""
    from agentv_py.scoring import alignment

    asked: list[tuple[int, int]] = []
    monkeypatch.setattr(alignment, "AGREEMENT_PAIRS", 1_000)
    truth = [{"description": "Fee", "quantity": i % 3, "amount": i} for i in range(300)]
    answer = list(truth)
    random.Random(7).shuffle(answer)
    real = alignment._agreements
    monkeypatch.setattr(
        alignment, "_agreements", lambda m, t, a: real(m, t, a and (lambda i, j: asked.append((i, j)) or a(i, j)))
    )
    score, items, _ = outcome(config(algorithm), answer, truth)
    assert score == 1.0 and asked == []
    answer[0] = {**answer[0], "amount": -1}
    score, items, _ = outcome(config(algorithm), answer, truth)
    assert items is not None and (items["matched"], items["wrong"]) == (300, 1)
