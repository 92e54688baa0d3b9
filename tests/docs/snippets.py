"""The commands README.md and docs/*.md show, read out of the Markdown.

Where a command is found:

- a fenced block tagged `sh`, `bash` or `shell`: every line that is not blank or a comment is a
  command (`\\` continues it on the next line; `#` starts a comment; `&&` separates commands; a
  leading `$ ` is dropped);
- a fenced block tagged `text` or `console`, or untagged: a line `$ COMMAND` is a command and the
  lines after it, up to the next `$ ` line or the end of the block, are what the docs say it
  prints (no such line: its output is not shown, and not checked); a line starting at the
  block's left edge with `agentv ` (a synopsis) is a command too;
- a fenced `yaml` block: the value of a `run:` step, and a list item starting with `agentv `;
- an inline code span starting with `agentv `, `python scripts/`, `sh scripts/` or
  `python -m agentv_py` (with `.venv/bin/` or `python3` as well).

A command's words are read as the shell reads them (`shlex`), its leading `VAR=value` words kept.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]

SHELL_BLOCKS = {"sh", "bash", "shell"}
OUTPUT_BLOCKS = {"text", "console", ""}
INLINE_COMMAND = re.compile(r"^(\.venv/bin/)?(agentv |python3? (scripts/|-m agentv_py)|sh scripts/)")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


@dataclass(frozen=True)
class Command:
    """One command the docs show: `doc` and `line` say where, `text` is its words joined by
    spaces (the key of the tests' tables), `output` what the docs say it prints (None: nothing
    shown)."""

    doc: str
    line: int
    words: tuple[str, ...]
    output: tuple[str, ...] | None = None

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


@dataclass(frozen=True)
class Snippet:
    """The commands of one fenced block (run in order, in one workspace), or one inline command."""

    doc: str
    line: int
    commands: tuple[Command, ...]

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def split_words(text: str) -> list[list[str]]:
    """A command line's words, comment dropped, split into the commands `&&` joins."""
    commands: list[list[str]] = [[]]
    for word in shlex.split(text, comments=True):
        if word == "&&":
            commands.append([])
        else:
            commands[-1].append(word)
    return [words for words in commands if words]


def _commands(doc: str, line: int, text: str, output: tuple[str, ...] | None = None) -> list[Command]:
    parts = split_words(text)
    return [Command(doc, line, tuple(words), output if i == len(parts) - 1 else None) for i, words in enumerate(parts)]


def _fenced(doc: str, lang: str, start: int, body: list[str]) -> list[Command]:
    """The commands of one fenced block whose first body line is line `start` + 1."""
    found: list[Command] = []
    if lang in SHELL_BLOCKS:
        pending, first = "", 0
        for number, line in enumerate(body, start + 1):
            if not pending:
                first = number
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text, pending = pending + line, ""
            text = text.strip().removeprefix("$ ")
            if text and not text.startswith("#"):
                found += _commands(doc, first, text)
    elif lang in OUTPUT_BLOCKS:
        for index, line in enumerate(body):
            if line.startswith("$ "):
                after = []
                for following in body[index + 1 :]:
                    if following.startswith("$ "):
                        break
                    after.append(following.rstrip())
                while after and not after[-1]:
                    after.pop()
                found += _commands(doc, start + 1 + index, line[2:], tuple(after) if after else None)
            elif line.startswith("agentv "):  # a synopsis: its description follows two spaces
                found += _commands(doc, start + 1 + index, re.split(r"\s{2,}", line)[0])
    elif lang in {"yaml", "yml"}:
        for index, line in enumerate(body):
            step = re.match(r"^\s*(?:-\s+)?run:\s*(.+)$", line) or re.match(r"^\s*-\s+(agentv .+)$", line)
            if step:
                found += _commands(doc, start + 1 + index, step.group(1))
    return found


def snippets(path: Path) -> list[Snippet]:
    """Every fenced block of `path` that holds a command, and every inline command, in order."""
    doc = path.relative_to(REPO_ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Snippet] = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence:
            indent, lang = len(fence.group(1)), fence.group(2).lower()
            end = index + 1
            while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
                end += 1
            body = [line[indent:] if not line[:indent].strip() else line for line in lines[index + 1 : end]]
            commands = _fenced(doc, lang, index + 1, body)
            if commands:
                found.append(Snippet(doc, index + 1, tuple(commands)))
            index = end + 1
            continue
        for span in re.finditer(r"(`+)(.+?)\1", lines[index]):
            text = span.group(2).strip()
            if INLINE_COMMAND.match(text):
                found.append(Snippet(doc, index + 1, tuple(_commands(doc, index + 1, text))))
        index += 1
    return found


def all_snippets() -> list[Snippet]:
    return [snippet for path in DOCS for snippet in snippets(path)]
