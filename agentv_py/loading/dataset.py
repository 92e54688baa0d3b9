"""Dataset loading (SPEC §1): validation, semantic checks (duplicate ids, code judges that cannot
run, prompt templates), warnings, and the prepared cases — with AgentV's defaults: a case's
`rubrics:` become a `rubric` evaluator placed first, and a case left without evaluators gets
AgentV's default `llm_judge`.

`load_dataset` is exactly what `agentv validate` runs: it collects every problem in the file
(structure, types, unknown keys, duplicate ids, missing files, evaluator config) before raising.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.case_files import raw_cases, resolve_case_files
from agentv_py.loading.config import load_guideline_config
from agentv_py.loading.ground_truth import (
    GroundTruthError,
    finite_problems,
    ground_truth_location,
    ground_truth_warnings,
    read_ground_truth,
)
from agentv_py.loading.jsonl import is_jsonl, read_jsonl
from agentv_py.loading.source import Source, read_yaml, validate
from agentv_py.locate import search_dirs, working_dir
from agentv_py.models.base import suggest
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import (
    CodeJudgeConfig,
    CompositeConfig,
    EvaluatorConfig,
    FieldAccuracyConfig,
    LlmJudgeConfig,
    aggregator_template_problem,
)
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.process.command import needs_shell, script_argv
from agentv_py.process.programs import program_problem
from agentv_py.prompts import read_prompt_template
from agentv_py.scoring.paths import path_problem


def load_dataset(path: str | Path) -> LoadedDataset:
    """Load and validate a dataset file (YAML, or JSONL with its sidecar); raise ConfigError
    listing every problem found."""
    dataset_path = Path(path).resolve() if Path(path).exists() else Path(path)
    # A YAML file, or a JSONL file (+ sidecar) read into the same structure: one set of checks.
    source, raw = read_jsonl(Path(path)) if is_jsonl(Path(path)) else read_yaml(Path(path))
    model, problems = validate(source, raw, Dataset)
    problems.extend(_semantic_problems(source, raw))
    # File resolution needs the raw case list even when the model failed, so every problem shows.
    guideline_config = load_guideline_config(Path(path).resolve().parent)  # `.agentv/config.yaml`
    resolved, file_problems = resolve_case_files(source, raw, Path(path).resolve().parent, guideline_config.config)
    problems.extend(file_problems)
    if problems or guideline_config.problems:
        raise ConfigError(guideline_config.problems + sorted(problems, key=lambda p: (p.line or 0, p.location)))
    assert model is not None
    truths, truth_problems = _ground_truths(source, raw, model)
    if truth_problems:
        raise ConfigError(truth_problems)
    judge_problems = _judge_problems(source, model, dataset_path.resolve().parent)
    evaluators, prompt_problems = _resolve_prompts(source, model, dataset_path.resolve().parent)
    judge_problems += prompt_problems
    if judge_problems:
        raise ConfigError(judge_problems)
    suite = evaluators[("execution",)]
    name = model.dataset or dataset_path.stem
    warnings = guideline_config.warnings + sorted(
        _path_warnings(source, model) + ground_truth_warnings(source, model, truths) + _ignored_keys(source, model),
        key=lambda p: (p.line or 0, p.location),
    )
    added: dict[int, list[EvaluatorConfig]] = {}  # the rubric evaluator first, or the default judge alone
    for i, _, config in added_evaluators(model):
        added.setdefault(i, []).append(config)
    cases = [
        PreparedCase(
            case=case,
            index=i,
            files=resolved.get((i, "file"), []),
            images=resolved.get((i, "image"), []),
            expected=truths[i],
            question=case.question,
            evaluators=[*added.get(i, []), *evaluators.get(("evalcases", i), suite)],
            guideline_files=resolved.get((i, "guideline"), []),
            guideline_items=frozenset(resolved.get((i, "guideline_item"), [])),
        )
        for i, case in enumerate(model.evalcases)
    ]
    gate_problems = _evaluator_gate_problems(source, model, cases)
    if gate_problems:
        raise ConfigError(gate_problems)
    return LoadedDataset(dataset_path.resolve(), name, model, cases, warnings, source)


def _evaluator_gate_problems(source: Source, model: Dataset, cases: list[PreparedCase]) -> list[Problem]:
    """A `gates.evaluators` entry must name an evaluator some case runs (its `name`, else its
    type, as results name it): else the gate could never pass."""
    if model.gates is None or not model.gates.evaluators:
        return []
    names = list(dict.fromkeys(config.display_name for prepared in cases for config in prepared.evaluators))
    problems = []
    for name in model.gates.evaluators:
        if name not in names:
            close = suggest(name, names)
            hint = f" (did you mean '{close}'?)" if close else ""
            problems.append(
                source.problem(
                    ["gates", "evaluators", name],
                    f"names evaluator '{name}', which no case runs{hint}; evaluators: {', '.join(names)}",
                )
            )
    return problems


def _ground_truths(source: Source, raw: Any, model: Dataset) -> tuple[list[Any], list[Problem]]:
    """Each case's expected value (JSON text parsed), and the problems of values no evaluator
    could use: NaN, infinities, JSON text that is too deep or holds an integer Python cannot."""
    cases = raw_cases(raw)
    truths: list[Any] = []
    problems: list[Problem] = []
    for i, case in enumerate(model.evalcases):
        try:
            truths.append(read_ground_truth(case.expected_value))
        except GroundTruthError as exc:
            truths.append(None)
            problems.append(source.problem(ground_truth_location(cases[i] if i < len(cases) else None, i), str(exc)))
    problems.extend(finite_problems(source, cases, truths))
    return truths, sorted(problems, key=lambda p: (p.line or 0, p.location))


def _semantic_problems(source: Source, raw: Any) -> list[Problem]:
    problems: list[Problem] = []
    first_seen: dict[str, int] = {}
    for i, case in enumerate(raw_cases(raw)):
        if not isinstance(case, dict):
            continue
        case_id = case.get("id")
        if isinstance(case_id, str):
            if case_id in first_seen:
                problems.append(
                    source.problem(
                        ["evalcases", i, "id"],
                        f"duplicate id '{case_id}' (first used by evalcases[{first_seen[case_id]}]); "
                        "ids must be unique",
                    )
                )
            else:
                first_seen[case_id] = i
    return problems


DEFAULT_JUDGE = LlmJudgeConfig(type="llm_judge", name="llm_judge")
"""AgentV's default evaluator for a case without any: an `llm_judge` with the default prompt."""


def added_evaluators(model: Dataset) -> Iterable[tuple[int, list[str | int], EvaluatorConfig]]:
    """Evaluators a case gets that no evaluator list names, as AgentV gave them, with the case
    index and where they come from: the case's `rubrics:` (a `rubric` evaluator, placed before its
    other evaluators) and, for a case left with no evaluator at all (none of its own, none in the
    suite, no rubrics), `DEFAULT_JUDGE`."""
    for i, case in enumerate(model.evalcases):
        rubric = case.rubric_evaluator()
        own = case.case_evaluators
        if rubric is not None:
            yield i, ["evalcases", i, "rubrics"], rubric
        elif not (own if own is not None else model.execution.evaluators):
            yield i, ["evalcases", i], DEFAULT_JUDGE


def _ignored_keys(source: Source, model: Dataset) -> list[Problem]:
    """Case keys AgentV accepted and ignored: accepted here too, with a warning saying so."""
    warnings: list[Problem] = []
    for i, case in enumerate(model.evalcases):
        if case.execution is not None and case.execution.target is not None:
            warnings.append(
                source.problem(
                    ["evalcases", i, "execution", "target"],
                    f"ignored: every case runs on the eval's one target (--target, else the dataset's "
                    f"execution.target), as in AgentV, which ignored a case's target too ('{case.execution.target}')",
                )
            )
        if "reference_answer" in case.model_fields_set:
            warnings.append(
                source.problem(
                    ["evalcases", i, "reference_answer"],
                    "ignored, as AgentV ignored it: judges get the last expected message as the reference "
                    "answer; give it as expected_output",
                )
            )
    return warnings


def evaluator_lists(model: Dataset) -> Iterable[tuple[list[str | int], Sequence[EvaluatorConfig]]]:
    """Each evaluator list of the dataset with its location: the suite's, then each case's own."""
    yield ["execution", "evaluators"], model.execution.evaluators
    for i, case in enumerate(model.evalcases):
        if case.evaluators is not None:
            yield ["evalcases", i, "evaluators"], case.evaluators
        elif case.execution is not None and case.execution.evaluators is not None:
            yield ["evalcases", i, "execution", "evaluators"], case.execution.evaluators


def walk_evaluators(model: Dataset) -> Iterable[tuple[list[str | int], EvaluatorConfig]]:
    """Every evaluator config in the dataset's evaluator lists with its location, composite
    members included (each after its composite, at `[..., e, "evaluators", m]`), so that checks
    reach them and their problems point at the member's line."""
    for base, evaluators in evaluator_lists(model):
        for e, config in enumerate(evaluators):
            yield from _walk([*base, e], config)


def _walk(where: list[str | int], config: EvaluatorConfig) -> Iterable[tuple[list[str | int], EvaluatorConfig]]:
    yield where, config
    if isinstance(config, CompositeConfig):
        for m, member in enumerate(config.evaluators):
            yield from _walk([*where, "evaluators", m], member)


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".php", ".r", ".jl", ".lua")


def _judge_problems(source: Source, model: Dataset, dataset_dir: Path) -> list[Problem]:
    """Code judges and llm_judge prompt scripts that cannot possibly run: caught when the dataset
    loads, not mid-run."""

    problems: list[Problem] = []
    for where, config in walk_evaluators(model):
        script_key = "script"
        if isinstance(config, CodeJudgeConfig):
            script, cwd_value = config.script, config.cwd
        elif isinstance(config, LlmJudgeConfig) and config.prompt_script is not None:
            where, script, cwd_value = [*where, "prompt"], config.prompt_script.script, config.prompt_script.cwd
        elif isinstance(config, CompositeConfig) and config.aggregator.path is not None:
            where, script, cwd_value = [*where, "aggregator"], config.aggregator.path, config.aggregator.cwd
            script_key = "path"
        else:
            continue
        cwd = working_dir(dataset_dir, cwd_value)
        if not cwd.is_dir():
            problems.append(source.problem([*where, "cwd"], f"directory not found: {cwd}"))
            continue
        if isinstance(script, str) and needs_shell(script):
            continue  # shell syntax: the shell resolves it at run time
        argv = script_argv(script)
        problem = program_problem(argv[0], cwd, noun="script", as_script=True)
        if problem:
            problems.append(source.problem([*where, script_key], problem))
        for arg in argv[1:]:
            looks_like_file = arg.lower().endswith(_SCRIPT_SUFFIXES) and not arg.startswith("-")
            if looks_like_file and not (cwd / arg).is_file():
                problems.append(
                    source.problem([*where, script_key], f"script file not found: {arg} (relative to {cwd})")
                )
    return problems


ListKey = tuple[str, int] | tuple[str]  # ("execution",) for the suite, ("evalcases", i) for a case


def _resolve_prompts(
    source: Source, model: Dataset, dataset_dir: Path
) -> tuple[dict[ListKey, list[EvaluatorConfig]], list[Problem]]:
    """Every evaluator list with prompt-file templates read: an `llm_judge` whose prompt names a
    file is replaced by a new config holding the template (`with_template`), so a run reads each
    template once and no validated config is changed afterwards; a composite is replaced by one
    with its members and its llm_judge aggregator resolved the same way. Missing, unreadable and
    invalid templates are problems."""
    problems: list[Problem] = []
    lists: dict[ListKey, list[EvaluatorConfig]] = {}
    dirs = search_dirs(dataset_dir)

    def resolved(config: EvaluatorConfig, where: list[str | int]) -> EvaluatorConfig:
        if isinstance(config, CompositeConfig):
            members = [resolved(member, [*where, "evaluators", m]) for m, member in enumerate(config.evaluators)]
            aggregator = config.aggregator
            if aggregator.prompt_file is not None:
                text, problem = read_prompt_template(
                    aggregator.prompt_file, dataset_dir, dirs, check=aggregator_template_problem
                )
                if problem is not None:
                    problems.append(source.problem([*where, "aggregator", "prompt"], problem))
                elif text is not None:
                    aggregator = aggregator.with_template(text)
            return config.with_parts(members, aggregator)
        if not isinstance(config, LlmJudgeConfig) or config.prompt_file is None:
            return config
        text, problem = read_prompt_template(config.prompt_file, dataset_dir, dirs)
        if problem is not None:
            problems.append(source.problem([*where, "prompt"], problem))
        return config.with_template(text) if text is not None else config

    for base, evaluators in evaluator_lists(model):
        key: ListKey = ("execution",) if base[0] == "execution" else ("evalcases", int(base[1]))
        lists[key] = [resolved(config, [*base, e]) for e, config in enumerate(evaluators)]
    return lists, problems


def _path_warnings(source: Source, model: Dataset) -> list[Problem]:
    """Malformed field paths resolve to "missing" at run time; say so once, at load time. Also
    the `weight` of a composite member, which its composite ignores (as AgentV did)."""
    warnings = []
    for where, evaluator in walk_evaluators(model):
        if isinstance(evaluator, CompositeConfig):
            for m, member in enumerate(evaluator.evaluators):
                if "weight" in member.model_fields_set:
                    warnings.append(
                        source.problem(
                            [*where, "evaluators", m, "weight"],
                            "ignored: a composite weighs its members by aggregator.weights (default 1), as AgentV did",
                        )
                    )
        if not isinstance(evaluator, FieldAccuracyConfig):
            continue
        for f, spec in enumerate(evaluator.fields):
            reason = path_problem(spec.path)
            if reason:
                warnings.append(
                    source.problem([*where, "fields", f, "path"], f"{reason}; the field will always be missing")
                )
    return warnings
