"""The configs of AgentV v4.42's built-in deterministic checks (docs/checks.md): `contains`,
`contains_any`, `contains_all`, `icontains`, `icontains_any`, `icontains_all`, `starts_with`,
`ends_with`, `regex`, `equals`, `is_json`. Each checks the answer's text; `negate: true` (any
evaluator's) inverts it.

Where AgentV skipped a config with a warning (no `value`, an empty one, a list of no strings) or
failed it at run time (a bad pattern or flag), the config here is a load error. A regex is
written as AgentV wrote it, a JavaScript pattern; `regex_for` makes the Python one."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from agentv_py.models.evaluator_base import EvaluatorBase

CHECK_TYPES: tuple[str, ...] = (
    "contains",
    "contains_any",
    "contains_all",
    "icontains",
    "icontains_any",
    "icontains_all",
    "starts_with",
    "ends_with",
    "regex",
    "equals",
    "is_json",
)

# JavaScript's RegExp flags: each is read (i, m, s), met by how the match is made (y: at the
# start only; g: RegExp.test from index 0 on a new RegExp, as AgentV builds one per check), or
# changes nothing a test sees (u, d). `v` (unicode sets) changes class syntax: not accepted.
REGEX_FLAGS = "dgimsuy"
_NAMED_REFERENCE = re.compile(r"\\k<([A-Za-z_]\w*)>")
_PYTHON_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class CheckBase(EvaluatorBase):
    """What every check shares: AgentV's default name. (`negate`, AgentV's, is every evaluator's:
    `models.evaluator_base`.)"""

    @property
    def display_name(self) -> str:
        return self.name or self.default_name()

    def default_name(self) -> str:
        """AgentV's generated name: the kebab-case type, then the value (`contains-Hello`), the
        number of values (`contains-any-2`) or the first 30 characters of a pattern."""
        kind = str(getattr(self, "type", "")).replace("_", "-")
        value = getattr(self, "value", None)
        if isinstance(value, list):
            return f"{kind}-{len(value)}"
        if isinstance(value, str):
            if kind == "regex" and _utf16_length(value) > 30:  # JavaScript counts UTF-16 code units
                value = value.encode("utf-16-le")[:60].decode("utf-16-le", errors="ignore")
            return f"{kind}-{value}"
        return kind


class _OneValue(CheckBase):
    value: str

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        if not value:
            raise ValueError("value must not be empty: give the text to look for")
        return value


class _Values(CheckBase):
    value: list[str]

    @field_validator("value")
    @classmethod
    def _values(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("value must list at least one string")
        for i, item in enumerate(value):
            if not item:
                raise ValueError(f"value[{i}] must not be empty")
        return value


class ContainsConfig(_OneValue):
    """`contains`: the answer holds `value` (case-sensitive)."""

    type: Literal["contains"]


class ContainsAnyConfig(_Values):
    """`contains_any`: the answer holds at least one of `value` (case-sensitive)."""

    type: Literal["contains_any"]


class ContainsAllConfig(_Values):
    """`contains_all`: the answer holds every one of `value` (case-sensitive)."""

    type: Literal["contains_all"]


class IcontainsConfig(_OneValue):
    """`icontains`: `contains`, ignoring case."""

    type: Literal["icontains"]


class IcontainsAnyConfig(_Values):
    """`icontains_any`: `contains_any`, ignoring case."""

    type: Literal["icontains_any"]


class IcontainsAllConfig(_Values):
    """`icontains_all`: `contains_all`, ignoring case."""

    type: Literal["icontains_all"]


class StartsWithConfig(_OneValue):
    """`starts_with`: the trimmed answer starts with the trimmed `value`."""

    type: Literal["starts_with"]


class EndsWithConfig(_OneValue):
    """`ends_with`: the trimmed answer ends with the trimmed `value`."""

    type: Literal["ends_with"]


class EqualsConfig(_OneValue):
    """`equals`: the trimmed answer is the trimmed `value`."""

    type: Literal["equals"]


def _python_pattern(pattern: str, multiline: bool) -> str:
    """A JavaScript pattern in Python's syntax where the two read the same text differently:
    `$` is the end of the text only (Python's also matches before a final line break) unless `m`;
    `(?<name>...)` and `\\k<name>` are Python's `(?P<name>...)` and `(?P=name)`; `[]` matches
    nothing and `[^]` any character."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            named = None if in_class else _NAMED_REFERENCE.match(pattern, i)
            if named:
                out.append(f"(?P={named.group(1)})")
                i = named.end()
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            for empty, means in (("[]", "(?!)"), ("[^]", r"[\s\S]")):
                if pattern.startswith(empty, i):
                    out.append(means)
                    i, in_class = i + len(empty) - 1, False
                    break
            else:
                out.append(char)
            i += 1
            continue
        elif char == "$" and not multiline:
            char = r"\Z"
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            char, i = "(?P<", i + 2
        out.append(char)
        i += 1
    return "".join(out)


def flags_problem(flags: str) -> str | None:
    """Why `flags` are not AgentV's RegExp flags (JavaScript refuses them), or None."""
    for i, flag in enumerate(flags):
        if flag not in REGEX_FLAGS:
            return f"unknown flag '{flag}'. Valid flags: {', '.join(REGEX_FLAGS)}"
        if flag in flags[:i]:
            return f"flag '{flag}' given twice"
    return None


def regex_for(pattern: str, flags: str | None) -> tuple[re.Pattern[str], bool]:
    """The compiled Python regex for AgentV's `value` and `flags` (checked: `flags_problem`), and
    whether it is sticky (`y`: it must match at the start). ValueError when the pattern is not
    usable."""
    flags = flags or ""
    python_flags = 0
    for flag, value in _PYTHON_FLAGS.items():
        if flag in flags:
            python_flags |= value
    source = _python_pattern(pattern, "m" in flags)
    try:
        return re.compile(source, python_flags), "y" in flags
    except re.error as exc:
        raise ValueError(f"value is not a valid regular expression: {exc}") from None
    except (RecursionError, OverflowError) as exc:  # nested too deeply, or a repeat count too big
        raise ValueError(f"value is not a usable regular expression: {type(exc).__name__}") from None


class RegexConfig(CheckBase):
    """`regex`: the answer matches the pattern `value` somewhere (JavaScript's RegExp.test), with
    AgentV's `flags` (i, m, s, g, u, y, d)."""

    type: Literal["regex"]
    value: str
    flags: str | None = None

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        if not value:
            raise ValueError("value must not be empty: give the pattern to match")
        regex_for(value, None)  # the flags change what a pattern matches, never whether it compiles
        return value

    @field_validator("flags")
    @classmethod
    def _flags(cls, value: str | None) -> str | None:
        problem = None if value is None else flags_problem(value)
        if problem:
            raise ValueError(problem)
        return value


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a JSON Schema (its own `$schema` dialect, else draft 2020-12), or None."""
    import jsonschema  # lazy: only datasets with an is_json schema import it

    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    error = jsonschema.exceptions.best_match(validator(validator.META_SCHEMA).iter_errors(schema))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    return f"{error.message} (at {where})" if where else error.message


class IsJsonConfig(CheckBase):
    """`is_json`: the whole answer is JSON (JSON.parse); with `schema` (an addition of agentv's),
    it also fits that JSON Schema."""

    type: Literal["is_json"]
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            problem = schema_problem(value)
            if problem:
                raise ValueError(f"schema is not a valid JSON Schema: {problem}")
        return value


# The checks as members of the evaluator union (`models.evaluators`), in CHECK_TYPES' order.
CheckConfig = (
    ContainsConfig
    | ContainsAnyConfig
    | ContainsAllConfig
    | IcontainsConfig
    | IcontainsAnyConfig
    | IcontainsAllConfig
    | StartsWithConfig
    | EndsWithConfig
    | RegexConfig
    | EqualsConfig
    | IsJsonConfig
)
