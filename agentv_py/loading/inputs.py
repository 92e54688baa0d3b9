"""The files a dataset's judges run or read, each with its role: what an output of the run may
never replace (`locate.output_clash`). Code-judge, prompt-script and aggregator scripts (the
program and every argument naming a file in the judge's working directory) and prompt templates
(resolved as the loader resolves them)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

from agentv_py.loading.evaluator_lists import added_evaluators, walk_evaluators
from agentv_py.locate import Role, resolve_file, search_dirs, working_dir
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig, EvaluatorConfig
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig
from agentv_py.models.targets import CliTarget, TargetConfig
from agentv_py.prepared import LoadedDataset


def _script_files(script: list[str] | str, cwd: Path) -> list[Path]:
    """The arguments of a script that name an existing file in its working directory."""
    if isinstance(script, list):
        words = script
    else:
        try:
            words = shlex.split(script)
        except ValueError:  # unbalanced quotes: the shell would refuse it anyway
            words = script.split()
    found = []
    for word in words:
        path = (cwd / Path(word).expanduser()) if word and not word.startswith("-") else None
        if path is not None and path.is_file():
            found.append(path)
    return found


Run = tuple[str, str, list[str] | str, str | None]  # (who runs it, its role as an input, script, cwd)


def _judge_parts(config: EvaluatorConfig) -> tuple[list[Run], list[tuple[str, str]]]:
    """What one evaluator runs (the code judge's script, an llm_judge's prompt script, a
    composite's aggregator) and the prompt files it reads, as (file as written, its role). Model
    calls are `judge_commands`' own."""
    name = config.display_name
    if isinstance(config, CodeJudgeConfig):
        return [(f"code judge '{name}'", f"the script of code judge '{name}'", config.script, config.cwd)], []
    if isinstance(config, LlmJudgeConfig):
        runs: list[Run] = []
        if (script := config.prompt_script) is not None:
            who = f"the prompt script of llm_judge '{name}'"
            runs.append((who, who, script.script, script.cwd))
        prompt = config.prompt_file
        return runs, [(prompt, f"the prompt file of llm_judge '{name}'")] if prompt else []
    if isinstance(config, CompositeConfig):
        aggregator, runs = config.aggregator, []
        if aggregator.path is not None:
            who = f"the aggregator of composite '{name}'"
            runs.append((who, f"the aggregator script of composite '{name}'", aggregator.path, aggregator.cwd))
        prompt = aggregator.prompt_file
        return runs, [(prompt, f"the aggregator prompt of composite '{name}'")] if prompt else []
    return [], []


def every_evaluator(dataset: LoadedDataset) -> Iterator[EvaluatorConfig]:
    """Every evaluator the dataset's cases get: those its lists name (composite members too) and
    those AgentV added without a list naming them (a case's `rubrics:`, the default llm_judge of
    a case left with none)."""
    for _, config in walk_evaluators(dataset.model):
        yield config
    for _, _, config in added_evaluators(dataset.model):
        yield config


def judge_files(dataset: LoadedDataset) -> list[Role]:
    """Every file the dataset's judges run or read (each once, at its first use), with its role:
    `the script of code judge 'name'`, `the prompt file of llm_judge 'name'`, ..."""
    roles: list[Role] = []
    seen: set[Path] = set()
    dirs = search_dirs(dataset.directory)

    def add(path: Path, role: str) -> None:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            roles.append((role, path))

    for config in every_evaluator(dataset):
        runs, prompts = _judge_parts(config)
        for _, role, script, cwd in runs:
            for path in _script_files(script, working_dir(dataset.directory, cwd)):
                add(path, role)
        for prompt, role in prompts:
            found = resolve_file(prompt, dataset.directory, dirs)[0]
            if found is not None:
                add(found, role)
    return roles


def judge_commands(dataset: LoadedDataset) -> list[str]:
    """What the dataset's judges run or call, once each, as a person checking it reads it:
    `code judge 'j': python3 judge.py (in /p/evals)`, `llm_judge 'quality': calls judge target
    'judge'` (a model, or a command of the targets file). Commands and names are shown as
    written; callers escape them for the terminal."""
    said: list[str] = []
    for config in every_evaluator(dataset):
        name = config.display_name
        runs, _ = _judge_parts(config)
        lines = [_command(who, script, cwd, dataset) for who, _, script, cwd in runs]
        if isinstance(config, LlmJudgeConfig | RubricConfig):
            lines.append(f"{config.type} '{name}': calls {_judge(config.target)}")
        elif isinstance(config, CompositeConfig) and config.aggregator.type == "llm_judge" and not runs:
            lines.append(f"the aggregator of composite '{name}': calls {_judge(config.aggregator.target)}")
        said += [line for line in lines if line not in said]
    return said


def judge_target_commands(judges: Mapping[str, TargetConfig], default: str | None, directory: Path) -> list[str]:
    """What the judge targets that are commands run when asked (a `cli` judge target): `judge
    target 'jt' (the default): sh ask.sh {PROMPT} (in /p/evals)`. Model targets run nothing."""
    said = []
    for name, config in judges.items():
        if isinstance(config, CliTarget):
            which = f"judge target '{name}'" + (" (the default)" if name == default else "")
            said.append(f"{which}: {config.command_template} (in {working_dir(directory, config.cwd)})")
    return said


def _judge(target: str | None) -> str:
    return f"judge target '{target}'" if target else "the default judge target"


def _command(what: str, script: list[str] | str, cwd: str | None, dataset: LoadedDataset) -> str:
    shown = script if isinstance(script, str) else shlex.join(script)
    return f"{what}: {shown} (in {working_dir(dataset.directory, cwd)})"
