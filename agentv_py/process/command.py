"""Commands: one rule for when a command needs a shell, and templates whose values stay literal.

`needs_shell` is the rule, for `command_template`s and code-judge `script` strings alike: a
command needs `/bin/sh` when, outside quotes, it uses a shell feature (pipes, redirections,
`;`/`&&`, variables, command substitution, globs, `~`, comments, a `VAR=x cmd` prefix), when
`$` or a backtick appears inside double quotes, or when a quote is left open. Anything else is
split with POSIX quoting and run without a shell.

A template is compiled once with POSIX quoting rules. When it uses no shell feature (pipes,
redirections, variables, globs, `VAR=x cmd`, ...) it becomes a list of argv tokens and runs
without a shell: a placeholder standing alone as an unquoted word expands to its words (`{FILES}`
gives one argument per file); anywhere else (inside quotes, or glued to text as in
`--in={FILES}`) it contributes its words joined by spaces to that one argument. When the template
does need a shell, each value is shell-quoted in place (inside quotes: the quote is closed, the
quoted value inserted, the quote reopened) and the text runs under `/bin/sh -c`.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass

from agentv_py.models.targets import PLACEHOLDER_RE

_SHELL_META = set("|&;<>()$`*?[]~!#\n")
_DOUBLE_QUOTE_ESCAPABLE = set('$`"\\\n')

Part = str | tuple[str, bool]  # literal text, or (placeholder name, standalone unquoted word)


_ASSIGNMENT = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*=")


def needs_shell(command: str) -> bool:
    """Does this command text use a shell feature? (the one rule; see the module docstring)"""
    state: str | None = None
    i, n = 0, len(command)
    while i < n:
        ch = command[i]
        if state is None:
            if ch == "\\":
                i += 2
                continue
            if ch in "'\"":
                state = ch
            elif ch in _SHELL_META:
                return True
        elif state == "'":
            if ch == "'":
                state = None
        else:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                state = None
            elif ch in "$`":
                return True
        i += 1
    return state is not None or bool(_ASSIGNMENT.match(command))


def script_argv(script: list[str] | str) -> list[str]:
    """The argv of a code judge's `script`: a list as given; a string split with POSIX quoting,
    or run by `/bin/sh -c` when it needs a shell (`needs_shell`)."""
    if isinstance(script, list):
        return script
    return ["/bin/sh", "-c", script] if needs_shell(script) else shlex.split(script)


@dataclass(frozen=True, slots=True)
class Command:
    argv: list[str]
    shell: bool


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    template: str
    needs_shell: bool
    tokens: tuple[tuple[Part, ...], ...]  # argv tokens, for templates that need no shell

    def render(self, values: dict[str, list[str]]) -> Command:
        if self.needs_shell:
            return Command(["/bin/sh", "-c", render_shell_text(self.template, values)], shell=True)
        argv: list[str] = []
        for parts in self.tokens:
            if len(parts) == 1 and isinstance(parts[0], tuple) and parts[0][1]:
                argv.extend(values.get(parts[0][0], ()))
                continue
            argv.append("".join(p if isinstance(p, str) else " ".join(values.get(p[0], ())) for p in parts))
        return Command(argv, shell=False)


def _placeholder_at(template: str, i: int) -> tuple[str, int] | None:
    found = PLACEHOLDER_RE.match(template, i)
    return (found.group(1), found.end()) if found else None


@functools.lru_cache(maxsize=256)
def compile_template(template: str) -> CompiledTemplate:
    """Tokenise a template once (POSIX quoting), noting whether it needs a shell (`needs_shell`)."""
    tokens: list[tuple[Part, ...]] = []
    parts: list[Part] = []
    started = False  # a token exists even when empty ("" is an argument)
    state: str | None = None
    literal = ""
    i, n = 0, len(template)

    def flush_literal() -> None:
        nonlocal literal
        if literal:
            parts.append(literal)
            literal = ""

    while i < n:
        ch = template[i]
        if ch == "{" and (found := _placeholder_at(template, i)):
            flush_literal()
            parts.append((found[0], state is None))
            started = True
            i = found[1]
            continue
        if state is None:
            if ch in " \t":
                flush_literal()
                if started:
                    tokens.append(tuple(parts))
                parts, started = [], False
            elif ch == "\\":
                if i + 1 < n and template[i + 1] != "\n":
                    literal += template[i + 1]
                    started = True
                i += 2
                continue
            elif ch in "'\"":
                state, started = ch, True
            else:
                literal += ch
                started = True
        elif state == "'":
            if ch == "'":
                state = None
            else:
                literal += ch
        else:
            if ch == "\\" and i + 1 < n and template[i + 1] in _DOUBLE_QUOTE_ESCAPABLE:
                literal += template[i + 1]
                i += 2
                continue
            if ch == '"':
                state = None
            else:
                literal += ch
        i += 1
    flush_literal()
    if started:
        tokens.append(tuple(parts))
    # A standalone placeholder is a word only if nothing else is glued to it.
    tokens = [t if len(t) == 1 else tuple((p[0], False) if isinstance(p, tuple) else p for p in t) for t in tokens]
    return CompiledTemplate(template, needs_shell(template), tuple(tokens))


def render_shell_text(template: str, values: dict[str, list[str]]) -> str:
    """The template as shell text, each placeholder replaced by its shell-quoted words."""
    out: list[str] = []
    state: str | None = None
    i, n = 0, len(template)
    while i < n:
        ch = template[i]
        if ch == "{" and (found := _placeholder_at(template, i)):
            words = values.get(found[0], [])
            if state is None:
                out.append(" ".join(shlex.quote(w) for w in words))
            else:
                out.append(state + shlex.quote(" ".join(words)) + state)
            i = found[1]
            continue
        if ch == "\\" and state != "'":
            out.append(template[i : i + 2])
            i += 2
            continue
        if state is None and ch in "'\"":
            state = ch
        elif state is not None and ch == state:
            state = None
        out.append(ch)
        i += 1
    return "".join(out)


def render_command(template: str, values: dict[str, list[str]]) -> Command:
    return compile_template(template).render(values)


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
