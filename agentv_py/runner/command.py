"""Rendering `command_template`s: every substituted value is one literal, shell-quoted argument.

The template is scanned once with POSIX quoting rules. Placeholders outside quotes become quoted
words; inside single or double quotes the quote is closed, the quoted value inserted, and the
quote reopened, so `"{PROMPT}"` and `{PROMPT}` behave the same. When the template itself uses no
shell feature (pipes, redirections, variables, globs, `VAR=x cmd`, ...) the command is run
without a shell, from the argv the shell would have built.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from agentv_py.models.targets import PLACEHOLDER_RE

_SHELL_META = set("|&;<>()$`*?[]~!#\n")


@dataclass(frozen=True, slots=True)
class Command:
    argv: list[str]
    shell: bool

    @property
    def display(self) -> str:
        return self.argv[2] if self.shell else shlex.join(self.argv)


def render_shell_text(template: str, values: dict[str, list[str]]) -> tuple[str, bool]:
    """The template as shell text with placeholders replaced by quoted words, and whether the
    template needs a shell. `values` maps a placeholder name to its words (a list: `{FILES}`
    expands to several arguments outside quotes, to one space-joined argument inside them)."""
    out: list[str] = []
    needs_shell = False
    state: str | None = None  # None, "'" or '"'
    i, n = 0, len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            found = PLACEHOLDER_RE.match(template, i)
            if found and found.group(1) in values:
                words = values[found.group(1)]
                if state is None:
                    out.append(" ".join(shlex.quote(w) for w in words))
                else:
                    out.append(state + shlex.quote(" ".join(words)) + state)
                i = found.end()
                continue
        if state is None:
            if ch == "\\":
                out.append(template[i : i + 2])
                i += 2
                continue
            if ch in "'\"":
                state = ch
            elif ch in _SHELL_META:
                needs_shell = True
        elif state == "'":
            if ch == "'":
                state = None
        else:
            if ch == "\\":
                out.append(template[i : i + 2])
                i += 2
                continue
            if ch == '"':
                state = None
            elif ch in "$`":
                needs_shell = True
        out.append(ch)
        i += 1
    if state is not None:
        needs_shell = True  # unbalanced quote: let the shell report it
    return "".join(out), needs_shell


def render_command(template: str, values: dict[str, list[str]]) -> Command:
    text, needs_shell = render_shell_text(template, values)
    if not needs_shell:
        argv = shlex.split(text)
        if argv and "=" not in argv[0]:  # `VAR=value cmd` is a shell feature
            return Command(argv, shell=False)
    return Command(["/bin/sh", "-c", text], shell=True)


def render_files(paths: list[str], files_format: str) -> list[str]:
    """Words for `{FILES}`/`{IMAGES}`: each path through `files_format` (`{path}`, `{basename}`)."""
    if files_format == "{path}":
        return list(paths)
    words: list[str] = []
    tokens = shlex.split(files_format)
    for path in paths:
        base = path.rsplit("/", 1)[-1]
        words.extend(t.replace("{path}", path).replace("{basename}", base) for t in tokens)
    return words
