"""Code judges and llm_judge prompt scripts that cannot possibly run, found when a dataset loads
(`loading.dataset`), not mid-run."""

from __future__ import annotations

from pathlib import Path

from agentv_py.errors import Problem
from agentv_py.loading.evaluator_lists import walk_evaluators
from agentv_py.loading.source import Source
from agentv_py.locate import script_path, search_dirs, working_dir
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig
from agentv_py.models.preprocessors import Preprocessor
from agentv_py.process.command import needs_shell, script_argv
from agentv_py.process.programs import program_problem

_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".php", ".r", ".jl", ".lua")


def unrunnable_judges(source: Source, model: Dataset, dataset_dir: Path) -> list[Problem]:
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
        if isinstance(config, (LlmJudgeConfig, RubricConfig)):
            problems += _preprocessor_problems(source, [*where, "preprocessors"], config.preprocessors, dataset_dir)
    return problems + _preprocessor_problems(source, ["preprocessors"], model.preprocessors, dataset_dir)


def _preprocessor_problems(
    source: Source, where: list[str | int], preprocessors: list[Preprocessor] | None, dataset_dir: Path
) -> list[Problem]:
    """A preprocessor's program must start, and its last argument (its script, AgentV's rule) be
    found from the dataset's directory up to the repository's root."""
    problems: list[Problem] = []
    for i, preprocessor in enumerate(preprocessors or []):
        command = preprocessor.command
        problem = program_problem(command[0], dataset_dir, noun="program")
        if problem is None and len(command) > 1 and script_path(command, dataset_dir) == command:
            tried = ", ".join(str(d) for d in search_dirs(dataset_dir))
            problem = f"preprocessor command file not found: {command[-1]} (tried from {tried})"
        if problem is not None:
            problems.append(source.problem([*where, i, "command"], problem))
    return problems
