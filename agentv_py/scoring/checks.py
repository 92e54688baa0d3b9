"""AgentV v4.42's deterministic checks as pure functions of a config and the answer's text
(AgentV's `graders/assertions.ts`): a score of 0 or 1 and one assertion text, word for word.

`negate: true` is not applied here: it is every evaluator's, applied to the result once
(`scoring.negation`): the score becomes 1 - score and the assertion's passed flag flips; its text
stays as the check wrote it (a negated `contains` that found its value fails with `Output
contains "x"`).

Trimming is JavaScript's `String.prototype.trim` (its whitespace set, not Python's). A `regex`
scans at most the first REGEX_SCAN_CHARS characters of the answer: a backtracking regex can take
time polynomial (or, with nested quantifiers, exponential) in the text it scans, and the answer is
data a target wrote, so the text is bounded instead of trusting every pattern on every answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentv_py.models.checks import (
    CheckConfig,
    ContainsAllConfig,
    ContainsAnyConfig,
    ContainsConfig,
    EndsWithConfig,
    EqualsConfig,
    IcontainsAllConfig,
    IcontainsAnyConfig,
    IcontainsConfig,
    IsJsonConfig,
    RegexConfig,
    StartsWithConfig,
    regex_for,
)
from agentv_py.scoring.jsontext import loads

REGEX_SCAN_CHARS = 20_000
"""How much of an answer a `regex` check reads: a quadratic pattern on 20,000 hostile characters
is a few hundred million steps at most, seconds, never a hung run."""

# ECMAScript's WhiteSpace and LineTerminator: what String.prototype.trim removes.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


@dataclass(frozen=True)
class CheckOutcome:
    """One check's result: AgentV's score (0 or 1) and its one assertion, or why the check could
    not be made (`error`: an `is_json` schema that cannot be applied)."""

    score: float
    passed: bool
    text: str
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)


def _quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def _contains(answer: str, config: ContainsConfig | IcontainsConfig) -> tuple[bool, str]:
    value = config.value
    if isinstance(config, IcontainsConfig):
        found = value.lower() in answer.lower()
        return found, f'Output {"contains" if found else "does not contain"} "{value}" (case-insensitive)'
    found = value in answer
    return found, f'Output {"contains" if found else "does not contain"} "{value}"'


def _contains_any(answer: str, config: ContainsAnyConfig | IcontainsAnyConfig) -> tuple[bool, str]:
    fold = isinstance(config, IcontainsAnyConfig)
    text = answer.lower() if fold else answer
    matched = [v for v in config.value if (v.lower() if fold else v) in text]
    suffix = " (case-insensitive)" if fold else ""
    if matched:
        return True, f'Output contains "{matched[0]}"{suffix}'
    return False, f"Output does not contain any of: {_quoted(config.value)}{suffix}"


def _contains_all(answer: str, config: ContainsAllConfig | IcontainsAllConfig) -> tuple[bool, str]:
    fold = isinstance(config, IcontainsAllConfig)
    text = answer.lower() if fold else answer
    missing = [v for v in config.value if (v.lower() if fold else v) not in text]
    if not missing:
        suffix = " (case-insensitive)" if fold else ""
        return True, f"Output contains all {len(config.value)} expected strings{suffix}"
    label = "Output missing (case-insensitive)" if fold else "Output missing"
    return False, f"{label}: {_quoted(missing)}"


def _affix(answer: str, config: StartsWithConfig | EndsWithConfig | EqualsConfig) -> tuple[bool, str]:
    text, value = js_trim(answer), js_trim(config.value)
    if isinstance(config, StartsWithConfig):
        found = text.startswith(value)
        return found, f'Output {"starts" if found else "does not start"} with "{config.value}"'
    if isinstance(config, EndsWithConfig):
        found = text.endswith(value)
        return found, f'Output {"ends" if found else "does not end"} with "{config.value}"'
    found = text == value
    return found, f'Output {"equals" if found else "does not equal"} "{config.value}"'


def _regex(answer: str, config: RegexConfig) -> tuple[bool, str, dict[str, Any]]:
    regex, sticky = regex_for(config.value, config.flags)
    scanned = answer[:REGEX_SCAN_CHARS]
    found = (regex.match(scanned) if sticky else regex.search(scanned)) is not None
    flags = config.flags or ""
    label = f" (flags: {flags})" if flags else ""
    text = f"Output {'matches' if found else 'does not match'} pattern /{config.value}/{flags}{label}"
    if len(scanned) < len(answer):
        details = {"scanned_chars": len(scanned), "answer_chars": len(answer)}
        if not found:
            text += f" (the first {len(scanned)} of {len(answer)} characters scanned)"
        return found, text, details
    return found, text, {}


def _schema_miss(value: Any, schema: dict[str, Any]) -> str | None:
    """The most relevant way `value` fails `schema`, as one line, or None when it fits. References
    resolve within the schema only: a remote `$ref` is never fetched (it raises)."""
    import jsonschema  # lazy: only is_json checks with a schema import it
    from referencing import Registry

    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    error = jsonschema.exceptions.best_match(validator(schema, registry=Registry()).iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
    return f"{where}: {message}" if where else message


def _is_json(answer: str, config: IsJsonConfig) -> CheckOutcome | tuple[bool, str]:
    try:
        value = loads(answer, keep_out_of_range=True)
    except ValueError:
        return False, "Output is not valid JSON"
    if config.schema_ is None:
        return True, "Output is valid JSON"
    try:
        miss = _schema_miss(value, config.schema_)
    except Exception as exc:  # noqa: BLE001 - an unresolvable $ref: the check cannot be made
        return CheckOutcome(0.0, False, "", error=f"schema cannot be applied: {type(exc).__name__}: {exc}")
    if miss is None:
        return True, "Output is valid JSON and matches the schema"
    return False, f"Output is valid JSON but does not match the schema: {miss}"


def run_check(config: CheckConfig, answer: str) -> CheckOutcome:
    """`config`'s check of `answer` (the target's final answer as text), never negated: `negate`
    is applied to the evaluator's result (`scoring.negation`)."""
    details: dict[str, Any] = {}
    made: CheckOutcome | tuple[bool, str]
    if isinstance(config, ContainsConfig | IcontainsConfig):
        made = _contains(answer, config)
    elif isinstance(config, ContainsAnyConfig | IcontainsAnyConfig):
        made = _contains_any(answer, config)
    elif isinstance(config, ContainsAllConfig | IcontainsAllConfig):
        made = _contains_all(answer, config)
    elif isinstance(config, RegexConfig):
        found, text, details = _regex(answer, config)
        made = found, text
    elif isinstance(config, IsJsonConfig):
        made = _is_json(answer, config)
    else:
        made = _affix(answer, config)
    if isinstance(made, CheckOutcome):
        return made
    passed, text = made
    return CheckOutcome(1.0 if passed else 0.0, passed, text, details)
