"""Dataset loading (SPEC §1): validation, semantic checks (duplicate ids, cases without
evaluators, code judges that cannot run, prompt templates), warnings, and the prepared cases.

`load_dataset` is exactly what `agentv validate` runs: it collects every problem in the file
(structure, types, unknown keys, duplicate ids, missing files, evaluator config) before raising.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.case_files import raw_cases, resolve_case_files
from agentv_py.loading.ground_truth import (
    GroundTruthError,
    finite_problems,
    ground_truth_location,
    ground_truth_warnings,
    read_ground_truth,
)
from agentv_py.loading.source import Source, read_yaml, validate
from agentv_py.locate import search_dirs, working_dir
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import CodeJudgeConfig, EvaluatorConfig, FieldAccuracyConfig, LlmJudgeConfig
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.process.command import needs_shell, script_argv
from agentv_py.process.programs import program_problem
from agentv_py.prompts import read_prompt_template
from agentv_py.scoring.paths import path_problem


def load_dataset(path: str | Path) -> LoadedDataset:
    """Load and validate a dataset file; raise ConfigError listing every problem found."""
    dataset_path = Path(path).resolve() if Path(path).exists() else Path(path)
    source, raw = read_yaml(Path(path))
    model, problems = validate(source, raw, Dataset)
    problems.extend(_semantic_problems(source, raw))
    # File resolution needs the raw case list even when the model failed, so every problem shows.
    resolved, file_problems = resolve_case_files(source, raw, Path(path).resolve().parent)
    problems.extend(file_problems)
    if problems:
        raise ConfigError(sorted(problems, key=lambda p: (p.line or 0, p.location)))
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
    warnings = sorted(
        _path_warnings(source, model) + ground_truth_warnings(source, model, truths),
        key=lambda p: (p.line or 0, p.location),
    )
    cases = [
        PreparedCase(
            case=case,
            index=i,
            files=resolved.get((i, "file"), []),
            images=resolved.get((i, "image"), []),
            expected=truths[i],
            question=case.question,
            evaluators=evaluators.get(("evalcases", i), suite),
        )
        for i, case in enumerate(model.evalcases)
    ]
    return LoadedDataset(dataset_path.resolve(), name, model, cases, warnings, source)


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
    suite = raw.get("execution") if isinstance(raw, dict) else None
    has_suite_evaluators = isinstance(suite, dict) and bool(suite.get("evaluators"))
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
        execution = case.get("execution")
        case_evaluators = case.get("evaluators", execution.get("evaluators") if isinstance(execution, dict) else None)
        if not has_suite_evaluators and not case_evaluators:
            problems.append(
                source.problem(
                    ["evalcases", i],
                    f"case '{case_id}' has no evaluators: add execution.evaluators to the dataset "
                    "or evaluators to the case",
                )
            )
    return problems


def evaluator_lists(model: Dataset) -> Iterable[tuple[list[str | int], Sequence[EvaluatorConfig]]]:
    """Each evaluator list of the dataset with its location: the suite's, then each case's own."""
    yield ["execution", "evaluators"], model.execution.evaluators
    for i, case in enumerate(model.evalcases):
        if case.evaluators is not None:
            yield ["evalcases", i, "evaluators"], case.evaluators
        elif case.execution is not None and case.execution.evaluators is not None:
            yield ["evalcases", i, "execution", "evaluators"], case.execution.evaluators


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".php", ".r", ".jl", ".lua")


def _judge_problems(source: Source, model: Dataset, dataset_dir: Path) -> list[Problem]:
    """Code judges that cannot possibly run: caught when the dataset loads, not mid-run."""

    problems: list[Problem] = []
    for base, evaluators in evaluator_lists(model):
        for e, config in enumerate(evaluators):
            if not isinstance(config, CodeJudgeConfig):
                continue
            where = [*base, e]
            cwd = working_dir(dataset_dir, config.cwd)
            if not cwd.is_dir():
                problems.append(source.problem([*where, "cwd"], f"directory not found: {cwd}"))
                continue
            if isinstance(config.script, str) and needs_shell(config.script):
                continue  # shell syntax: the shell resolves it at run time
            argv = script_argv(config.script)
            problem = program_problem(argv[0], cwd, noun="script", as_script=True)
            if problem:
                problems.append(source.problem([*where, "script"], problem))
            for arg in argv[1:]:
                looks_like_file = arg.lower().endswith(_SCRIPT_SUFFIXES) and not arg.startswith("-")
                if looks_like_file and not (cwd / arg).is_file():
                    problems.append(
                        source.problem([*where, "script"], f"script file not found: {arg} (relative to {cwd})")
                    )
    return problems


ListKey = tuple[str, int] | tuple[str]  # ("execution",) for the suite, ("evalcases", i) for a case


def _resolve_prompts(
    source: Source, model: Dataset, dataset_dir: Path
) -> tuple[dict[ListKey, list[EvaluatorConfig]], list[Problem]]:
    """Every evaluator list with prompt-file templates read: an `llm_judge` whose prompt names a
    file is replaced by a new config holding the template (`with_template`), so a run reads each
    template once and no validated config is changed afterwards. Missing, unreadable and invalid
    templates are problems."""
    problems: list[Problem] = []
    lists: dict[ListKey, list[EvaluatorConfig]] = {}
    dirs = search_dirs(dataset_dir)
    for base, evaluators in evaluator_lists(model):
        key: ListKey = ("execution",) if base[0] == "execution" else ("evalcases", int(base[1]))
        resolved: list[EvaluatorConfig] = list(evaluators)
        for e, config in enumerate(evaluators):
            if not isinstance(config, LlmJudgeConfig) or config.prompt_file is None:
                continue
            text, problem = read_prompt_template(config.prompt_file, dataset_dir, dirs)
            if problem is not None:
                problems.append(source.problem([*base, e, "prompt"], problem))
            elif text is not None:
                resolved[e] = config.with_template(text)
        lists[key] = resolved
    return lists, problems


def _path_warnings(source: Source, model: Dataset) -> list[Problem]:
    """Malformed field paths resolve to "missing" at run time; say so once, at load time."""
    warnings = []
    for base, evaluators in evaluator_lists(model):
        for e, evaluator in enumerate(evaluators):
            if not isinstance(evaluator, FieldAccuracyConfig):
                continue
            for f, spec in enumerate(evaluator.fields):
                reason = path_problem(spec.path)
                if reason:
                    warnings.append(
                        source.problem([*base, e, "fields", f, "path"], f"{reason}; the field will always be missing")
                    )
    return warnings
