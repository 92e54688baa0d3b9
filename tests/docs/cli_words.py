"""What a documented command's words name: the `agentv` command and its options, a script's
options. Checked for every command the docs show, the ones that cannot run included."""

from __future__ import annotations

import functools
import re
from typing import Any

from typer.main import get_command

from tests.docs.snippets import REPO_ROOT, Command

# A word that stands for something the reader fills in: DATASET, RESULTS.jsonl, RUN.jsonl...,
# <file>, [FIELD], K/N, `…`, or alternatives (`table|csv|json`).
PLACEHOLDER = re.compile(r"^\[?([A-Z][A-Z_]*(/[A-Z]+)?(\.\w+)?(\.\.\.)?|<.*>.*)\]?$|\.\.\.|…|\|")
PYTHON = re.compile(r"^(\.venv/bin/)?python3?$")


@functools.cache
def root_command() -> Any:
    """agentv's Click command (typer's own copy of Click: typed loosely here), built once."""
    from agentv_py.cli import app

    return get_command(app)


def agentv_words(command: Command) -> list[str] | None:
    """The words after `agentv` (after any VAR=value words), or None for another program."""
    words = list(command.words)
    while words and re.match(r"^[A-Z_]+=", words[0]):
        words.pop(0)
    if words and words[0] in ("agentv", ".venv/bin/agentv"):
        return words[1:]
    return None


def _context(command: Any, parent: Any) -> Any:
    """A Click context of `command`."""
    return command.context_class(command, parent=parent, info_name=command.name, **command.context_settings)


def _group(command: Any) -> bool:
    return hasattr(command, "commands")


def _options(context: Any) -> set[str]:
    return {name for param in context.command.get_params(context) for name in param.opts + param.secondary_opts}


def _pipe(words: list[str], index: int) -> bool:
    """Whether words[index] is a shell pipe (`| head -1`), not a synopsis's `-V | --version`."""
    return words[index] == "|" and not (index + 1 < len(words) and words[index + 1].startswith("-"))


def agentv_problems(words: list[str]) -> list[str]:
    """What in `agentv WORDS` is not a command or option of agentv's command line."""
    context = _context(root_command(), None)
    problems = []
    index = 0
    while index < len(words) and _group(context.command):
        word = words[index].strip("[]")
        if word.startswith("-"):
            break
        names = word.split("|")
        if word == "COMMAND":
            pass
        elif all(name in context.command.commands for name in names):
            context = _context(context.command.commands[names[0]], context)
        else:
            problems.append(f"no command {word!r} (commands: {', '.join(context.command.commands)})")
            return problems
        index += 1
    options = _options(context)
    for position in range(index, len(words)):
        if _pipe(words, position):
            break
        word = words[position].strip("[]")
        if re.match(r"^--?[A-Za-z]", word) and word.split("=")[0] not in options:
            problems.append(f"{context.command_path}: no option {word.split('=')[0]}")
    return problems


def is_reference(words: list[str]) -> bool:
    """`agentv WORDS` names a command (and options), or is a synopsis: a word stands for
    something to fill in, or nothing follows the command but options."""
    if any(PLACEHOLDER.search(word) for word in words if not word.startswith("-")):
        return True
    command = root_command()
    for position, word in enumerate(words):
        if _group(command) and word in command.commands:
            command = command.commands[word]
        elif not word.startswith("-") and not (position and words[position - 1].startswith("-")):
            return False
    return True


def script_problems(command: Command) -> list[str] | None:
    """For `python scripts/X.py ...`, `python -m agentv_py...` and `sh scripts/X.sh ...`: the file
    is missing, or an option is not in its source. None for any other program."""
    words = list(command.words)
    if PYTHON.match(words[0]) and words[1:2] == ["-m"] and words[2].startswith("agentv_py"):
        path = REPO_ROOT / (words[2].replace(".", "/") + ".py")
        rest = words[3:]
    elif (PYTHON.match(words[0]) or words[0] == "sh") and words[1:2] and words[1].startswith("scripts/"):
        path = REPO_ROOT / words[1]
        rest = words[2:]
    else:
        return None
    if not path.is_file():
        return [f"{path.relative_to(REPO_ROOT)} does not exist"]
    source = path.read_text(encoding="utf-8")
    return [
        f"{path.relative_to(REPO_ROOT)} has no option {word}"
        for word in rest
        if word.startswith("--") and f'"{word}"' not in source
    ]
