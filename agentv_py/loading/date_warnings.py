"""A warning for each `match: date` field whose ground truth holds a date that reads two ways
(`03/08/2014`: March 8 or August 3) while the field says neither `formats` nor `date_order`: at
scoring such a date is read month first, and a right answer written day first would miss."""

from __future__ import annotations

from collections.abc import Sequence

from agentv_py.errors import Problem
from agentv_py.loading.evaluator_lists import walk_config
from agentv_py.loading.source import Source
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
from agentv_py.scoring.paths import resolve


def ambiguous_truth_dates(
    source: Source, model: Dataset, truths: Sequence[object], suite: Sequence[EvaluatorConfig], warned: set[str]
) -> list[Problem]:
    """One warning per unsettled date field (at the field's line) with the first ambiguous
    expected date and how many cases have one; `warned`: fields already warned about (the suite's
    fields, across chunks of a big dataset)."""
    found: dict[str, tuple[list[str | int], list[str]]] = {}  # field location -> (location, notes)
    shared = _unsettled(["execution", "evaluators"], suite)  # walked once, not per case
    if not shared and all(case.case_evaluators is None for case in model.evalcases):
        return []  # no unsettled date field: the date scorer (and its fuzzy matcher) is not even imported
    from agentv_py.scoring.dates import ambiguous_date

    for i, case in enumerate(model.evalcases):
        own = case.case_evaluators
        fields = shared if own is None else _unsettled(["evalcases", i, case.own_key], own)
        for location, spec in fields:
            note = ambiguous_date(resolve(truths[i], spec.path), spec.date_formats)
            if note is not None:
                found.setdefault(".".join(map(str, location)), (location, []))[1].append(note)
    warnings = []
    for key, (location, notes) in found.items():
        if key in warned:
            continue
        warned.add(key)
        more = f" (and {len(notes) - 1} more expected dates like it)" if len(notes) > 1 else ""
        warnings.append(source.problem(location, f"{notes[0]}{more}"))
    return warnings


def _unsettled(base: list[str | int], configs: Sequence[EvaluatorConfig]) -> list[tuple[list[str | int], FieldSpec]]:
    """The `match: date` fields of these evaluators (composite members too) that say neither
    `date_order` nor `formats`, with their locations."""
    return [
        ([*where, "fields", k], spec)
        for e, config in enumerate(configs)
        for where, member in walk_config([*base, e], config)
        if isinstance(member, FieldAccuracyConfig)
        for k, spec in enumerate(member.fields)
        if spec.match == "date" and spec.date_unsettled
    ]
