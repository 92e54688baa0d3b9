"""The files a dataset's judges run or read, each with its role: what an output of the run may
never replace (`locate.output_clash`). Code-judge, prompt-script and aggregator scripts (the
program and every argument naming a file in the judge's working directory) and prompt templates
(resolved as the loader resolves them)."""

from __future__ import annotations

import shlex
from pathlib import Path

from agentv_py.loading.dataset import walk_evaluators
from agentv_py.locate import Role, resolve_file, search_dirs, working_dir
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig, LlmJudgeConfig, RubricConfig
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

    for _, config in walk_evaluators(dataset.model):
        name = config.display_name
        scripts: list[tuple[list[str] | str, str | None, str]] = []
        prompts: list[tuple[str | None, str]] = []
        if isinstance(config, CodeJudgeConfig):
            scripts.append((config.script, config.cwd, f"the script of code judge '{name}'"))
        elif isinstance(config, LlmJudgeConfig):
            if config.prompt_script is not None:
                prompt_script = config.prompt_script
                scripts.append((prompt_script.script, prompt_script.cwd, f"the prompt script of llm_judge '{name}'"))
            prompts.append((config.prompt_file, f"the prompt file of llm_judge '{name}'"))
        elif isinstance(config, CompositeConfig):
            aggregator = config.aggregator
            if aggregator.path is not None:
                scripts.append((aggregator.path, aggregator.cwd, f"the aggregator script of composite '{name}'"))
            prompts.append((aggregator.prompt_file, f"the aggregator prompt of composite '{name}'"))
        for script, cwd, role in scripts:
            for path in _script_files(script, working_dir(dataset.directory, cwd)):
                add(path, role)
        for prompt, role in prompts:
            found = resolve_file(prompt, dataset.directory, dirs)[0] if prompt is not None else None
            if found is not None:
                add(found, role)
    return roles


def judge_commands(dataset: LoadedDataset) -> list[str]:
    """What the dataset's judges run or call, once each, as a person checking it reads it:
    `code judge 'j': python3 judge.py (in /p/evals)`, `llm_judge 'quality': a model call (target
    judge)`. Commands and names are shown as written; callers escape them for the terminal."""
    said: list[str] = []
    for _, config in walk_evaluators(dataset.model):
        name = config.display_name
        lines: list[str] = []
        if isinstance(config, CodeJudgeConfig):
            lines.append(_command(f"code judge '{name}'", config.script, config.cwd, dataset))
        elif isinstance(config, LlmJudgeConfig):
            if config.prompt_script is not None:
                script = config.prompt_script
                lines.append(_command(f"the prompt script of llm_judge '{name}'", script.script, script.cwd, dataset))
            lines.append(f"llm_judge '{name}': a model call (target {config.target or 'the default judge'})")
        elif isinstance(config, RubricConfig):
            lines.append(f"rubric '{name}': a model call (target {config.target or 'the default judge'})")
        elif isinstance(config, CompositeConfig):
            aggregator = config.aggregator
            if aggregator.path is not None:
                lines.append(
                    _command(f"the aggregator of composite '{name}'", aggregator.path, aggregator.cwd, dataset)
                )
            elif aggregator.type == "llm_judge":
                target = aggregator.target or "the default judge"
                lines.append(f"the aggregator of composite '{name}': a model call (target {target})")
        said += [line for line in lines if line not in said]
    return said


def _command(what: str, script: list[str] | str, cwd: str | None, dataset: LoadedDataset) -> str:
    shown = script if isinstance(script, str) else shlex.join(script)
    return f"{what}: {shown} (in {working_dir(dataset.directory, cwd)})"
