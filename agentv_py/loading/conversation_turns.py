"""A conversation case's turns as the engine runs them (`PreparedTurn`): each turn's evaluators
(its own list with prompt templates read, else the default) and its expected answer read as
ground truth, with the problems of expected answers no evaluator could use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.evaluator_lists import turn_evaluators
from agentv_py.loading.ground_truth import GroundTruthError, read_ground_truth
from agentv_py.loading.source import Source
from agentv_py.models.dataset import Dataset, EvalCase
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.prepared import PreparedTurn


def turn_ground_truths(source: Source, model: Dataset) -> tuple[dict[tuple[int, int], Any], list[Problem]]:
    """Each turn's expected answer, by (case index, turn index); problems located at the turn."""
    truths: dict[tuple[int, int], Any] = {}
    problems: list[Problem] = []
    for i, case in enumerate(model.evalcases):
        if case.conversation is None:
            continue
        for t, turn in enumerate(case.conversation.turns):
            value = turn.expected_value
            if value is None:
                continue
            try:
                truths[(i, t)] = read_ground_truth(value)
            except GroundTruthError as exc:
                where: list[str | int] = ["evalcases", i, "conversation", "turns", t, "expected_messages"]
                problems.append(source.problem(where, str(exc)))
    return truths, problems


def prepared_turns(
    case: EvalCase,
    index: int,
    lists: Mapping[tuple[str | int, ...], list[EvaluatorConfig]],
    truths: Mapping[tuple[int, int], Any],
) -> list[PreparedTurn]:
    """The turns of case `index` (of its chunk): [] for a case that is not a conversation."""
    return [
        PreparedTurn(lists.get(("evalcases", index, "turns", t), default), truths.get((index, t)))
        for t, default in enumerate(turn_evaluators(case))
    ]
