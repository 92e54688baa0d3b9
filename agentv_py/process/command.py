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
import os
import re
import shlex
from dataclasses import dataclass, field

from agentv_py.models.targets import PLACEHOLDER_RE

_SHELL_META = set("|&;<>()$`*?[]~!#\n")
_DOUBLE_QUOTE_ESCAPABLE = set('$`"\\\n')

Part = str | tuple[str, bool]  # literal text, or (placeholder name, standalone unquoted word)


_ASSIGNMENT = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*=")

# POSIX-family shells: `shlex.quote` output is one literal word for each of them.
SHELLS = frozenset(
    {"sh", "bash", "rbash", "dash", "zsh", "ksh", "ksh93", "mksh", "lksh", "oksh", "pdksh", "ash", "yash", "posh"}
)
# Shell options that take the next word as their argument.
_OPTION_WITH_ARGUMENT = frozenset({"--rcfile", "--init-file"})


def script_position(words: list[str | None]) -> int | None:
    """Index of the word that a shell runs as its script (`sh -c SCRIPT`), or None.

    `words` are a command's words; None marks a word that is not fixed text (it holds a
    placeholder or an expansion), which can be neither the shell's name nor one of its options.
    """
    for i, word in enumerate(words):
        if word is None or os.path.basename(word) not in SHELLS:
            continue
        has_c = False
        j = i + 1
        while j < len(words):
            option = words[j]
            if option is None or len(option) < 2 or option[0] not in "-+":
                break
            if option == "--":
                j += 1
                break
            if option.startswith("--"):
                j += 2 if option in _OPTION_WITH_ARGUMENT else 1
                continue
            letters = option[1:]
            has_c = has_c or (option[0] == "-" and "c" in letters)
            j += 2 if letters[-1] in "oO" else 1
        if has_c and j < len(words):
            return j
    return None


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
    nested = dict(_nested_states(template))
    out: list[str] = []
    last = 0
    for start, end, name, state in _placeholders(template):
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


# Constructs inside which agentv cannot quote a value: the shell parses their text again, or by
# rules of its own (what each is called in messages).
CONSTRUCTS = {
    "$(": "$(…)",
    "`": "`…`",
    "${": "${…}",
    "$((": "$((…))",
    "((": "((…))",
    "$[": "$[…]",
    "$'": "$'…'",
    "<<": "a here-document (<<)",
    "#": "a # comment",
}
_CODE = {"(", "$(", "`"}  # contexts whose text is commands: quotes, comments and here-documents apply
_WORD_START = set(" \t\n;&|()<>")
_HEREDOC_WORD_END = set(" \t\n;&|()<>")


@dataclass(frozen=True, slots=True)
class _Lexed:
    # (start, end, name, the quote it stands in or None, the construct it stands in or None)
    placeholders: tuple[tuple[int, int, str, str | None, str | None], ...]
    opaque: dict[int, int]  # outermost constructs: start -> end (part of the word they stand in)
    skipped: dict[int, int]  # here-document bodies: start -> end


@functools.lru_cache(maxsize=256)
def _lex(text: str) -> _Lexed:
    """Shell text read far enough to tell, for each placeholder, the quote it stands in and any
    construct around it (`CONSTRUCTS`): quotes, `$(…)`, backticks, `${…}`, arithmetic, `$'…'`,
    subshells, here-documents and comments nest as the shell nests them."""
    found: list[tuple[int, int, str, str | None, str | None]] = []
    opaque: dict[int, int] = {}
    skipped: dict[int, int] = {}
    stack: list[tuple[str, int]] = []  # (context, where it started)
    heredocs: list[tuple[str, bool]] = []  # pending here-documents: (delimiter, tabs stripped)
    i, n = 0, len(text)

    def construct() -> str | None:
        inner = [c for c, _ in stack if c in CONSTRUCTS]
        return inner[-1] if inner else None

    def push(context: str, at: int, length: int) -> int:
        if context in CONSTRUCTS and construct() is None:
            opaque[at] = n  # until it ends
        stack.append((context, at))
        return at + length

    def pop(end: int) -> int:
        context, start = stack.pop()
        if context in CONSTRUCTS and construct() is None:
            opaque[start] = end
        return end

    def placeholder(at: int, forced: str | None = None) -> int | None:
        match = _placeholder_at(text, at)
        if match is None:
            return None
        quote = stack[-1][0] if stack and stack[-1][0] in ("'", '"') else None
        found.append((at, match[1], match[0], quote, forced or construct()))
        return match[1]

    def heredoc_bodies(at: int) -> int:
        """Skip the bodies of the pending here-documents, which start at `at`; their placeholders
        are refused."""
        start = at
        for delimiter, strip in heredocs:
            while at < n:
                end = text.find("\n", at)
                end = n if end < 0 else end
                line = text[at:end]
                j = at
                while j < end:
                    j = placeholder(j, "<<") or j + 1
                at = min(end + 1, n)
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
        heredocs.clear()
        skipped[start] = at
        return at

    while i < n:
        ch = text[i]
        top = stack[-1][0] if stack else None
        if ch == "{" and (after := placeholder(i)):
            i = after
            continue
        if top == "'":
            i = pop(i + 1) if ch == "'" else i + 1
            continue
        if top == "$'":
            i = pop(i + 1) if ch == "'" else i + (2 if ch == "\\" else 1)
            continue
        if ch == "\\":
            i += 2
            continue
        code = top is None or top in _CODE
        if ch == "$":
            two, three = text[i : i + 2], text[i : i + 3]
            if three == "$((":
                i = push("$((", i, 3)
            elif two in ("$(", "${", "$["):
                i = push(two, i, 2)
            elif two == "$'" and top != '"':
                i = push("$'", i, 2)
            else:
                i += 1
            continue
        if ch == "`":
            i = pop(i + 1) if top == "`" else push("`", i, 1)
            continue
        if top == '"':
            i = pop(i + 1) if ch == '"' else i + 1
            continue
        if ch in "'\"":
            i = push(ch, i, 1)
            continue
        if top in ("${", "{"):
            if ch == "}":
                i = pop(i + 1)
            else:
                i = push("{", i, 1) if ch == "{" else i + 1
            continue
        if ch == "(":
            i = push("((", i, 2) if code and text[i : i + 2] == "((" else push("(", i, 1)
            continue
        if ch == ")":
            if top in ("$((", "((") and text[i : i + 2] == "))":
                i = pop(i + 2)
            elif top in ("(", "$(", "$((", "((", "$["):
                i = pop(i + 1)
            else:
                i += 1
            continue
        if ch == "]" and top == "$[":
            i = pop(i + 1)
            continue
        if not code:
            i += 1
            continue
        if ch == "#" and (i == 0 or text[i - 1] in _WORD_START):
            end = text.find("\n", i)
            end = n if end < 0 else end
            j = i
            while j < end:
                j = placeholder(j, "#") or j + 1
            i = end
            continue
        if ch == "<" and text[i : i + 3] == "<<<":
            i += 3
            continue
        if ch == "<" and text[i : i + 2] == "<<":
            i += 3 if text[i : i + 3] == "<<-" else 2
            strip = text[i - 1] == "-"
            while i < n and text[i] in " \t":
                i += 1
            delimiter, quote = "", None
            while i < n and (quote is not None or text[i] not in _HEREDOC_WORD_END):
                if (after := placeholder(i, "<<")) is not None:
                    i = after
                    continue
                if quote is None and text[i] in "'\"":
                    quote = text[i]
                elif text[i] == quote:
                    quote = None
                elif quote is None and text[i] == "\\":
                    delimiter += text[i + 1 : i + 2]
                    i += 1
                else:
                    delimiter += text[i]
                i += 1
            heredocs.append((delimiter, strip))
            continue
        if ch == "\n" and heredocs:
            i = heredoc_bodies(i + 1)
            continue
        i += 1
    if heredocs:
        heredoc_bodies(n)
    return _Lexed(tuple(found), opaque, skipped)


def _placeholders(text: str) -> tuple[tuple[int, int, str, str | None], ...]:
    """Each placeholder of shell text: (start, end, name, the quote it stands in or None)."""
    return tuple(p[:4] for p in _lex(text).placeholders)


def unsafe_placeholder(template: str) -> tuple[str, str] | None:
    """The first placeholder of a template that stands where agentv cannot quote a value, as
    (its name, what it stands in, as `CONSTRUCTS` names it), or None: inside `$(…)`, backticks,
    `${…}`, arithmetic, `$'…'`, a here-document or a comment, in the template when it runs under
    `/bin/sh` or in a script it hands to a shell (`sh -c SCRIPT`, however deeply nested)."""
    return compile_template(template).unsafe


def _unsafe_in_shell_text(text: str) -> tuple[str, str] | None:
    for _, _, name, _, construct in _lex(text).placeholders:
        if construct is not None:
            return name, CONSTRUCTS[construct]
    for command in _shell_commands(text):
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


@dataclass(slots=True)
class _Word:
    start: int
    text: str = ""  # the word once the shell has removed its quotes (placeholders kept as `{NAME}`)
    origin: list[int] = field(default_factory=list)  # where each character of `text` is in the source
    fixed: bool = True  # no placeholder, no `$` or backtick outside single quotes: its text is known


_COMMAND_END = set("|&;()`\n")
_WORD_END = set(" \t<>")


@functools.lru_cache(maxsize=256)
def _nested_states(text: str) -> tuple[tuple[int, tuple[str | None, ...]], ...]:
    """Placeholders of shell text that stand inside a script it hands to a shell: (position, the
    quote states around it inside that script, and inside scripts nested in it, innermost last)."""
    found: list[tuple[int, tuple[str | None, ...]]] = []
    for command in _shell_commands(text):
        index = script_position([w.text if w.fixed else None for w in command])
        if index is None:
            continue
        script, origin = command[index].text, command[index].origin
        deeper = dict(_nested_states(script))
        for start, _, _, state in _placeholders(script):
            found.append((origin[start], (state, *deeper.get(start, ()))))
    return tuple(found)


def _shell_commands(text: str) -> list[list[_Word]]:
    """Shell text split into simple commands and their words, as far as quoting goes: enough to
    find `sh -c SCRIPT` (operators end commands, redirections end words, comments and
    here-document bodies are skipped, a substitution is part of the word it stands in)."""
    commands: list[list[_Word]] = [[]]
    word: _Word | None = None
    state: str | None = None
    lexed = _lex(text)
    i, n = 0, len(text)

    def add(word: _Word, at: int, length: int = 1) -> None:
        word.text += text[at : at + length]
        word.origin.extend(range(at, at + length))

    while i < n:
        ch = text[i]
        if state != "'" and i in lexed.skipped:  # a here-document's body
            i = lexed.skipped[i]
            continue
        if state != "'" and i in lexed.opaque:  # `$(…)`, backticks, `${…}`, ...: part of the word
            word = word or _Word(i)
            word.fixed = False
            add(word, i, lexed.opaque[i] - i)
            i = lexed.opaque[i]
            continue
        if state is None and (ch in _WORD_END or ch in _COMMAND_END):
            if word is not None:
                commands[-1].append(word)
                word = None
            if ch in _COMMAND_END and commands[-1]:
                commands.append([])
            i += 1
            continue
        if state is None and ch == "#" and word is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if word is None:
            word = _Word(i)
        if ch == "{" and (match := _placeholder_at(text, i)):
            word.fixed = False
            add(word, i, match[1] - i)
            i = match[1]
            continue
        if state is None:
            if ch == "\\":
                if text[i + 1 : i + 2] not in ("", "\n"):
                    add(word, i + 1)
                i += 2
                continue
            if ch in "'\"":
                state = ch
            else:
                word.fixed = word.fixed and ch != "$"
                add(word, i)
        elif ch == state:
            state = None
        elif state == '"' and ch == "\\" and i + 1 < n and text[i + 1] in _DOUBLE_QUOTE_ESCAPABLE:
            if text[i + 1] != "\n":
                add(word, i + 1)
            i += 2
            continue
        else:
            word.fixed = word.fixed and not (state == '"' and ch in "$`")
            add(word, i)
        i += 1
    if word is not None:
        commands[-1].append(word)
    return [command for command in commands if command]


# Shell keywords and builtins: a shell template that starts with one names no program to check.
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
