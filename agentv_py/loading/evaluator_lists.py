"""A dataset's evaluators, where each is written: its evaluator lists (the suite's, each case's
own), every config in them (composite members too), and the evaluators AgentV gave a case
without a list naming them (a case's `rubrics:`, the default llm_judge)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentv_py.models.dataset import Dataset, EvalCase
from agentv_py.models.evaluators import CompositeConfig, EvaluatorConfig
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.prepared import CONVERSATION, OWN_EVALUATORS, RUBRICS, CaseModels

DEFAULT_JUDGE = LlmJudgeConfig(type="llm_judge", name="llm_judge")
"""AgentV's default evaluator for a case without any: an `llm_judge` with the default prompt."""


def added_evaluators(model: Dataset, *, turns: bool = True) -> Iterable[tuple[int, list[str | int], EvaluatorConfig]]:
    """Evaluators a case gets that no evaluator list names, as AgentV gave them, with the case
    index and where they come from: the case's `rubrics:` (a `rubric` evaluator, placed before its
    other evaluators) and, for a case left with no evaluator at all (none of its own, none in the
    suite, no rubrics), `DEFAULT_JUDGE` — except a conversation case, whose own evaluators judge
    only the whole transcript (AgentV's: none without a list). With `turns`, also `DEFAULT_JUDGE`
    for each conversation turn that has an expected answer and no evaluators (`turn_evaluators`)."""
    for i, case in cases_of(model, CONVERSATION | RUBRICS if model.execution.evaluators else None):
        rubric = case.rubric_evaluator()
        own = case.case_evaluators
        if rubric is not None:
            yield i, ["evalcases", i, "rubrics"], rubric
        elif case.conversation is None and not (own if own is not None else model.execution.evaluators):
            yield i, ["evalcases", i], DEFAULT_JUDGE
        if turns and case.conversation is not None:
            for t, turn in enumerate(case.conversation.turns):
                if turn.evaluators is None and turn.expected_messages:
                    yield i, ["evalcases", i, "conversation", "turns", t], DEFAULT_JUDGE


def turn_evaluators(case: EvalCase) -> list[list[EvaluatorConfig]]:
    """Each turn's evaluators of a conversation case: its own; else, with an expected answer,
    `DEFAULT_JUDGE` (AgentV's default grader); else none (the turn scores 1, as in AgentV)."""
    if case.conversation is None:
        return []
    return [
        turn.evaluators if turn.evaluators is not None else [DEFAULT_JUDGE] if turn.expected_messages else []
        for turn in case.conversation.turns
    ]


def evaluator_lists(model: Dataset) -> Iterable[tuple[list[str | int], Sequence[EvaluatorConfig]]]:
    """Each evaluator list of the dataset with its location: the suite's, then each case's own
    (and a conversation case's turns' own, after it)."""
    yield ["execution", "evaluators"], model.execution.evaluators
    for i, case in cases_of(model, OWN_EVALUATORS | CONVERSATION):
        if case.evaluators is not None:
            yield ["evalcases", i, case.own_key], case.evaluators
        elif case.execution is not None and case.execution.evaluators is not None:
            yield ["evalcases", i, "execution", "evaluators"], case.execution.evaluators
        for t, turn in enumerate(case.conversation.turns if case.conversation is not None else ()):
            if turn.evaluators is not None:
                yield ["evalcases", i, "conversation", "turns", t, "evaluators"], turn.evaluators


def walk_evaluators(model: Dataset) -> Iterable[tuple[list[str | int], EvaluatorConfig]]:
    """Every evaluator config in the dataset's evaluator lists with its location, composite
    members included (each after its composite, at `[..., e, "evaluators", m]`), so that checks
    reach them and their problems point at the member's line."""
    for base, evaluators in evaluator_lists(model):
        for e, config in enumerate(evaluators):
            yield from walk_config([*base, e], config)


def cases_of(model: Dataset, flag: int | None) -> Iterable[tuple[int, EvalCase]]:
    """The cases of `model` (with their indices) that may have any of the `flag` bits (None: all):
    of a loaded dataset, only those (its flags are kept, `CaseModels.where`), else all of them."""
    cases = model.evalcases
    if isinstance(cases, CaseModels) and flag is not None:
        return ((i, cases[i]) for i in cases.where(flag))
    return enumerate(cases)


def walk_config(where: list[str | int], config: EvaluatorConfig) -> Iterable[tuple[list[str | int], EvaluatorConfig]]:
    yield where, config
    if isinstance(config, CompositeConfig):
        for m, member in enumerate(config.evaluators):
            yield from walk_config([*where, "evaluators", m], member)


COMPARES_TO_TRUTH = frozenset({"field_accuracy", "iou_score", "coordinate_distance"})
"""Evaluator types that compare the answer with the case's expected value and do nothing else."""


def _root_field(evaluators: Sequence[EvaluatorConfig]) -> str | None:
    """The first `field_accuracy` field path that starts at the answer's root (`$`, `$[0]`, `[0]`)."""
    for config in evaluators:
        for _where, inner in walk_config([], config):
            if isinstance(inner, FieldAccuracyConfig):
                for spec in inner.fields:
                    if spec.path == "$" or spec.path.startswith(("$.", "$[", "[")):
                        return spec.path
    return None


def truth_only(config: EvaluatorConfig) -> bool:
    """Whether an evaluator can only compare with the ground truth (a composite: all its members)."""
    if isinstance(config, CompositeConfig):
        return all(truth_only(member) for member in config.evaluators)
    return config.type in COMPARES_TO_TRUTH


def nothing_to_compare(
    model: Dataset, truths: Sequence[object], suite: Sequence[EvaluatorConfig]
) -> list[tuple[int, str]]:
    """(case index, its load error) for each case with no expected value whose evaluators all
    compare with one (and that has no rubrics): it could never be scored."""
    found = []
    for i, case in enumerate(model.evalcases):
        own = case.case_evaluators
        evaluators = own if own is not None else suite
        if truths[i] is not None and not isinstance(truths[i], (dict, list)):
            rooted = _root_field(evaluators)
            if rooted is not None:
                kind = "a string" if isinstance(truths[i], str) else f"{type(truths[i]).__name__} {truths[i]!r}"
                found.append(
                    (
                        i,
                        f"case '{case.id}': field '{rooted}' addresses the whole answer as JSON, but the case's "
                        f"expected value is {kind}; field_accuracy compares JSON objects and arrays (give the "
                        "expected JSON, or judge a text answer with a code_judge or an llm_judge)",
                    )
                )
            continue
        if truths[i] is not None or case.expected_value is not None or case.rubrics:
            continue  # an expected value that could not be read has its own error
        if evaluators and all(truth_only(config) for config in evaluators):
            types = ", ".join(dict.fromkeys(config.type for config in evaluators))
            found.append(
                (
                    i,
                    f"case '{case.id}' has nothing to compare: no expected_messages or expected_output, and its "
                    f"evaluators ({types}) compare the answer with one; give the case its expected answer, or an "
                    "evaluator that works without one (a code_judge, an llm_judge)",
                )
            )
    return found
