"""The shell syntax agentv reads in command templates and scripts: where a script handed to a
shell stands (`script_position`), a lexer that finds placeholders with the quote and construct
around them (`lex`), and the simple commands of shell text with their words (`shell_commands`).
Used by `command` to decide when a value can be quoted, and how."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

from agentv_py.models.targets import PLACEHOLDER_RE

SHELL_META = set("|&;<>()$`*?[]~!#\n")
DOUBLE_QUOTE_ESCAPABLE = set('$`"\\\n')

Part = str | tuple[str, bool]  # literal text, or (placeholder name, standalone unquoted word)


ASSIGNMENT = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*=")

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


def placeholder_at(template: str, i: int) -> tuple[str, int] | None:
    found = PLACEHOLDER_RE.match(template, i)
    return (found.group(1), found.end()) if found else None


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
def lex(text: str) -> _Lexed:
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
        match = placeholder_at(text, at)
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


def placeholders(text: str) -> tuple[tuple[int, int, str, str | None], ...]:
    """Each placeholder of shell text: (start, end, name, the quote it stands in or None)."""
    return tuple(p[:4] for p in lex(text).placeholders)


@dataclass(slots=True)
class _Word:
    start: int
    text: str = ""  # the word once the shell has removed its quotes (placeholders kept as `{NAME}`)
    origin: list[int] = field(default_factory=list)  # where each character of `text` is in the source
    fixed: bool = True  # no placeholder, no `$` or backtick outside single quotes: its text is known


_COMMAND_END = set("|&;()`\n")
_WORD_END = set(" \t<>")


@functools.lru_cache(maxsize=256)
def nested_states(text: str) -> tuple[tuple[int, tuple[str | None, ...]], ...]:
    """Placeholders of shell text that stand inside a script it hands to a shell: (position, the
    quote states around it inside that script, and inside scripts nested in it, innermost last)."""
    found: list[tuple[int, tuple[str | None, ...]]] = []
    for command in shell_commands(text):
        index = script_position([w.text if w.fixed else None for w in command])
        if index is None:
            continue
        script, origin = command[index].text, command[index].origin
        deeper = dict(nested_states(script))
        for start, _, _, state in placeholders(script):
            found.append((origin[start], (state, *deeper.get(start, ()))))
    return tuple(found)


def shell_commands(text: str) -> list[list[_Word]]:
    """Shell text split into simple commands and their words, as far as quoting goes: enough to
    find `sh -c SCRIPT` (operators end commands, redirections end words, comments and
    here-document bodies are skipped, a substitution is part of the word it stands in)."""
    commands: list[list[_Word]] = [[]]
    word: _Word | None = None
    state: str | None = None
    lexed = lex(text)
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
        if ch == "{" and (match := placeholder_at(text, i)):
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
        elif state == '"' and ch == "\\" and i + 1 < n and text[i + 1] in DOUBLE_QUOTE_ESCAPABLE:
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
