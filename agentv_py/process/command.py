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

A script handed to a shell by the template itself is shell text too, and its values are quoted
for that shell by the same rule. The rule: a word naming a POSIX shell (its basename is one of
`SHELLS`: sh, bash, dash, zsh, ksh, mksh, ash, yash, posh, ...), wherever it stands in a command
(so `env bash -c`, `/usr/bin/env sh -c`, `busybox sh -c`, `timeout 5 bash -lc`,
`docker exec box sh -c` are all covered), followed by options that include `c` (`-c`, `-ec`,
`-lc`, `-o pipefail -c`, ...): the first operand after those options is a script, and every
placeholder inside it is replaced by its shell-quoted words (`render_shell_text`), so the script
sees each value as literal words, never as code. Operands after the script (`$0`, `$1`, ...) stay
plain arguments. In a template that itself runs under `/bin/sh`, a value inside such a script is
quoted twice: for the inner shell, then that text for the outer one (and so on for scripts nested
deeper). Only POSIX shells are recognised: other interpreters given code on the command line
(`python -c`, `fish -c`, `ssh host CMD`) would receive values as text inside their code, so pass
values to them as separate arguments (`python3 x.py {PROMPT}`) or as positional parameters
(`sh -c 'x "$1"' sh {PROMPT}`).
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass

from agentv_py.process.shell_lex import (
    ASSIGNMENT,
    CONSTRUCTS,
    DOUBLE_QUOTE_ESCAPABLE,
    SHELL_META,
    Part,
    lex,
    nested_states,
    placeholder_at,
    placeholders,
    script_position,
    shell_commands,
)


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
            elif ch in SHELL_META:
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
    return state is not None or bool(ASSIGNMENT.match(command))


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
    script_index: int | None = None  # the argv token a shell runs as its script (`sh -c SCRIPT`)
    unsafe: tuple[str, str] | None = None  # a placeholder agentv cannot quote (`unsafe_placeholder`)

    def render(self, values: dict[str, list[str]]) -> Command:
        """The command for these values; raises UnsafeTemplate (nothing to run) when values are
        given and a placeholder stands where a value cannot be quoted (`unsafe_placeholder`)."""
        if self.unsafe and values:
            raise UnsafeTemplate(*self.unsafe)
        if self.needs_shell:
            return Command(["/bin/sh", "-c", render_shell_text(self.template, values)], shell=True)
        argv: list[str] = []
        for index, parts in enumerate(self.tokens):
            if index == self.script_index:
                argv.append(render_shell_text(_token_text(parts), values))
                continue
            if len(parts) == 1 and isinstance(parts[0], tuple) and parts[0][1]:
                argv.extend(values.get(parts[0][0], ()))
                continue
            argv.append("".join(p if isinstance(p, str) else " ".join(values.get(p[0], ())) for p in parts))
        return Command(argv, shell=False)


def _token_text(parts: tuple[Part, ...]) -> str:
    """An argv token as text, its placeholders written back as `{NAME}`."""
    return "".join(p if isinstance(p, str) else "{" + p[0] + "}" for p in parts)


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
        if ch == "{" and (found := placeholder_at(template, i)):
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
            if ch == "\\" and i + 1 < n and template[i + 1] in DOUBLE_QUOTE_ESCAPABLE:
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
    shell = needs_shell(template)
    words = [
        None if any(isinstance(p, tuple) for p in t) else "".join(p for p in t if isinstance(p, str)) for t in tokens
    ]
    script_index = None if shell else script_position(words)
    if shell:
        unsafe = _unsafe_in_shell_text(template)
    else:
        unsafe = None if script_index is None else _unsafe_in_shell_text(_token_text(tokens[script_index]))
    return CompiledTemplate(template, shell, tuple(tokens), script_index, unsafe)


def render_shell_text(template: str, values: dict[str, list[str]]) -> str:
    """The template as shell text, each placeholder replaced by its shell-quoted words (inside
    quotes: the quote closed, the quoted value inserted, the quote reopened). A placeholder inside
    a script the text hands to a shell (`sh -c '...'`) is quoted for that shell first, then the
    result for the shell around it, and so on outwards."""
    nested = dict(nested_states(template))
    out: list[str] = []
    last = 0
    for start, end, name, state in placeholders(template):
        words = values.get(name, [])
        stack = (state, *nested.get(start, ()))
        inner = stack[-1]
        piece = (
            " ".join(shlex.quote(w) for w in words) if inner is None else inner + shlex.quote(" ".join(words)) + inner
        )
        for outer in reversed(stack[:-1]):
            piece = shlex.quote(piece) if outer is None else outer + shlex.quote(piece) + outer
        out.append(template[last:start])
        out.append(piece)
        last = end
    out.append(template[last:])
    return "".join(out)


def unsafe_placeholder(template: str) -> tuple[str, str] | None:
    """The first placeholder of a template that stands where agentv cannot quote a value, as
    (its name, what it stands in, as `CONSTRUCTS` names it), or None: inside `$(…)`, backticks,
    `${…}`, arithmetic, `$'…'`, a here-document or a comment, in the template when it runs under
    `/bin/sh` or in a script it hands to a shell (`sh -c SCRIPT`, however deeply nested)."""
    return compile_template(template).unsafe


def _unsafe_in_shell_text(text: str) -> tuple[str, str] | None:
    for _, _, name, _, construct in lex(text).placeholders:
        if construct is not None:
            return name, CONSTRUCTS[construct]
    for command in shell_commands(text):
        index = script_position([w.text if w.fixed else None for w in command])
        if index is not None and (unsafe := _unsafe_in_shell_text(command[index].text)):
            return unsafe
    return None


class UnsafeTemplate(ValueError):
    """A template with a placeholder where agentv cannot quote a value (`unsafe_placeholder`)."""

    def __init__(self, name: str, construct: str) -> None:
        super().__init__(
            f"{{{name}}} is inside {construct} in command_template; agentv cannot quote a value there "
            "safely: pass it as an argument or through a file ({FILES}, {OUTPUT_FILE})"
        )
        self.name = name
        self.construct = construct


_BUILTIN_NAMES = (
    "! { } case do done elif else esac fi for if in then until while function select time . : alias bg break "
    "builtin cd command continue declare echo eval exec exit export false fg getopts hash jobs kill let local "
    "printf pwd read readonly return set shift source test times trap true type typeset ulimit umask unalias "
    "unset wait ["
)
_SHELL_BUILTINS = frozenset(_BUILTIN_NAMES.split())
_PLAIN_FIRST_WORD = re.compile(r"\s*([A-Za-z0-9_./+@%:,-]+)(?=[ \t\n|;&]|$)")


def template_program(template: str) -> str | None:
    """The program a template starts, when that can be told before it runs: the first argument of
    a template without shell syntax (unless a placeholder is part of it); for a template run by
    `/bin/sh`, its first word when that is a plain command name or path (no quotes, expansion,
    placeholder, assignment or redirection, and not a shell keyword or builtin such as `cd`).
    None otherwise: the shell finds its commands when it runs."""
    compiled = compile_template(template)
    if not compiled.needs_shell:
        first = compiled.tokens[0] if compiled.tokens else ()
        if not first or not all(isinstance(p, str) for p in first):
            return None
        program = "".join(p for p in first if isinstance(p, str))
        return program or None
    found = _PLAIN_FIRST_WORD.match(template)
    if found is None or found.group(1) in _SHELL_BUILTINS:
        return None
    return found.group(1)


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
