"""A code grader's reply read as AgentV v4.42.4's `code-grader` read it (`payload_format: "4.42"`,
docs/code-judges.md): `{score?, assertions?: [{text, passed, evidence?}], details?}`, the score
given or derived as AgentV derives it (passed assertions / all assertions, unweighted), or a
plain-text verdict (the exit code is pass/fail, stdout the assertion's text).

Stricter than AgentV where AgentV guessed: a reply it would have scored 0 for lack of anything to
score, a score it would have clamped into [0, 1], an assertion it would have dropped or coerced
(`passed: "yes"`), and JSON that is not an object (AgentV read `0.7` as plain text, a pass) are
problems naming the key, never a score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentv_py.scoring.judge_contract import SCORE_KIND, SHOWN_LIMIT, is_score

ASSERTION_KIND = "a list of {text, passed, evidence?} objects"
"""What `assertions` must be, as the messages say it."""


@dataclass(frozen=True)
class Assertion:
    """One entry of a reply's `assertions`: a check, whether it passed, and why (optional)."""

    text: str
    passed: bool
    evidence: str | None = None

    @property
    def line(self) -> str:
        """The hit or miss this assertion becomes in a result row."""
        return f"{self.text}: {self.evidence}" if self.evidence else self.text


@dataclass(frozen=True)
class GraderReply:
    """A reply that can be scored: the score (given, or derived from the assertions), the
    assertions, the grader's details (an object) and reasoning (a string; AgentV ignored it)."""

    score: float
    assertions: tuple[Assertion, ...] = ()
    details: Mapping[str, Any] | None = None
    reasoning: str = ""

    @property
    def hits(self) -> list[str]:
        return [a.line for a in self.assertions if a.passed]

    @property
    def misses(self) -> list[str]:
        return [a.line for a in self.assertions if not a.passed]


def _shown(value: Any, show: Callable[[Any], str]) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return show(value)[:SHOWN_LIMIT]


def _assertion(item: Any, index: int, show: Callable[[Any], str]) -> Assertion | str:
    where = f"assertions[{index}]"
    if not isinstance(item, dict):
        return f"{where} must be an object {{text, passed, evidence?}}, got {_shown(item, show)}"
    text, passed, evidence = item.get("text"), item.get("passed"), item.get("evidence")
    if not isinstance(text, str):
        got = "nothing" if "text" not in item else _shown(text, show)
        return f"{where}.text must be a string, got {got}"
    if not isinstance(passed, bool):
        got = "nothing" if "passed" not in item else _shown(passed, show)
        return f"{where}.passed must be true or false, got {got}"
    if evidence is not None and not isinstance(evidence, str):
        return f"{where}.evidence must be a string, got {_shown(evidence, show)}"
    return Assertion(text, passed, evidence)


def read_grader_reply(data: Mapping[str, Any], show: Callable[[Any], str] = json.dumps) -> GraderReply | str:
    """The reply scored as AgentV v4.42.4 scores it, or the first problem, naming the key:
    `score must be a number in [0, 1], got 1.5`, `assertions[1].passed must be true or false,
    got "yes"`, `the result has neither 'score' (...) nor 'assertions' (...): nothing to score`."""
    assertions: list[Assertion] = []
    if "assertions" in data:
        raw = data["assertions"]
        if not isinstance(raw, list):
            return f"'assertions' must be {ASSERTION_KIND}, got {_shown(raw, show)}"
        for index, item in enumerate(raw):
            read = _assertion(item, index, show)
            if isinstance(read, str):
                return read
            assertions.append(read)
    if "score" in data:
        score = data["score"]
        if not is_score(score):
            return f"score must be {SCORE_KIND}, got {_shown(score, show)}"
        value = float(score)
    elif assertions:
        value = sum(a.passed for a in assertions) / len(assertions)
    elif "assertions" in data:
        return "'assertions' is empty and the result has no 'score': nothing to score"
    else:
        return f"the result has neither 'score' ({SCORE_KIND}) nor 'assertions' ({ASSERTION_KIND}): nothing to score"
    details = data.get("details")
    reasoning = data.get("reasoning")
    return GraderReply(
        score=value,
        assertions=tuple(assertions),
        details=details if isinstance(details, dict) else None,  # AgentV kept only an object
        reasoning=reasoning if isinstance(reasoning, str) else "",
    )


def plain_text_reply(stdout: str, exit_code: int) -> GraderReply:
    """AgentV's plain-text fallback: exit 0 passes (score 1), any other code fails (score 0);
    the trimmed stdout (or `exit N`) is the one assertion's text."""
    passed = exit_code == 0
    text = stdout.strip() or f"exit {exit_code}"
    return GraderReply(score=1.0 if passed else 0.0, assertions=(Assertion(text, passed),))
