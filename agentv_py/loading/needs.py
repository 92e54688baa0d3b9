"""What a dataset needs installed beyond the base install: its evaluators' extras (the model
providers' are checked with the targets, `loading.targets`). Problems located at the evaluator."""

from __future__ import annotations

from agentv_py.errors import Problem
from agentv_py.extras import extra_problem
from agentv_py.loading.evaluator_lists import walk_evaluators
from agentv_py.models.evaluators import CoordinateDistanceConfig, EvaluatorConfig, IouScoreConfig
from agentv_py.prepared import LoadedDataset

# Evaluator config type -> the extra it needs.
_EVALUATOR_EXTRAS = ((IouScoreConfig, "geometry"), (CoordinateDistanceConfig, "geometry"))


def evaluator_extra_problems(dataset: LoadedDataset) -> list[Problem]:
    """Each extra that evaluators (composite members included) need and that is not installed: one problem
    at the first evaluator's line, naming it, how many more use it and the `pip install` command."""
    source = dataset.source
    assert source is not None
    first: dict[str, tuple[list[str | int], EvaluatorConfig]] = {}  # extra -> where it is first needed, and by what
    uses: dict[str, int] = {}
    for where, config in walk_evaluators(dataset.model):
        for kind, extra in _EVALUATOR_EXTRAS:
            if isinstance(config, kind):
                first.setdefault(extra, (where, config))
                uses[extra] = uses.get(extra, 0) + 1
    problems = []
    for extra, (where, config) in first.items():  # said once per extra, at its first use: not once per case
        of_case = f" (case '{dataset.cases[int(where[1])].case.id}')" if where[0] == "evalcases" else ""
        others = uses[extra] - 1
        more = f" (and {others} more evaluator{'s' if others > 1 else ''})" if others else ""
        problem = extra_problem(extra, f"{config.type} '{config.display_name}'{of_case}{more}")
        if problem is not None:
            problems.append(source.problem(where, problem))
    return problems
