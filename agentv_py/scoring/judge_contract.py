"""The code-judge result contract (SPEC §3.2, docs/code-judges.md), in one place.

What a judge may print: `score` a finite number in [0, 1], not a bool (required when `status` is
`processed`, ignored otherwise); `hits` and `misses` lists of strings; `reasoning` a string;
`details` an object; `passed` true or false; `status` one of processed, error, skipped. Every key
is optional apart from `score`, and other keys are ignored.

Both sides check results with `result_problems`: the `code_judge` evaluator (on the judge's
parsed stdout, showing bad values as JSON: `"0.9"`) and the judge SDK `agentv_py.judge` (on a
`JudgeResult`, before printing it, showing Python reprs: `'0.9'`).

Not a pydantic model on purpose: the SDK imports this module in the judge's own interpreter, once
per judged case, often a `uv run` environment without pydantic. Importing pydantic and building
one model costs about 100 ms per start, against about 10 ms for all of `agentv_py.judge` over a
bare interpreter; so this is plain Python, standard library only (math), with no costly imports.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

RESULT_KEYS = ("score", "hits", "misses", "reasoning", "details", "passed", "status")
"""Every key a judge result may hold; others are ignored."""

STATUSES = ("processed", "error", "skipped")
"""The values `status` may take; a result without `status` is `processed`."""

SCORE_KIND = "a number in [0, 1]"
"""What `score` must be, as the messages say it."""

SHOWN_LIMIT = 60
"""A bad value is shown in a message cut to this many characters."""


def is_score(value: object) -> bool:
    """True for a number (int or float, not a bool) that is finite and in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return 0.0 <= value <= 1.0  # exact for ints too large for a float, too


def _is_string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_string(value: object) -> bool:
    return isinstance(value, str)


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


FIELD_KINDS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "hits": ("a list of strings", _is_string_list),
    "misses": ("a list of strings", _is_string_list),
    "reasoning": ("a string", _is_string),
    "details": ("an object", _is_object),
    "passed": ("true or false", _is_bool),
}
"""The optional keys other than `status`: what each must be (as the messages say it) and its check."""


def result_problems(result: Mapping[str, Any], show: Callable[[Any], str] = repr) -> list[str]:
    """Every way `result` breaks the contract, in this order: status, hits, misses, reasoning,
    details, passed, then score (only when status is processed); empty when it is valid.

    `show` renders a bad value (`json.dumps` for a judge's stdout, `repr` for the SDK); it is cut
    to SHOWN_LIMIT characters, and a NaN or infinite score is shown as `nan` / `inf` either way.
    Messages: `status must be processed, error or skipped, got "ok"`, `'hits' must be a list of
    strings, got [1]`, `the result has no 'score' (a number in [0, 1])`, `score must be a number
    in [0, 1], got 1.5`."""
    problems: list[str] = []
    status = result.get("status", "processed")
    if status not in STATUSES:
        problems.append(f"status must be processed, error or skipped, got {show(status)[:SHOWN_LIMIT]}")
    for key, (kind, check) in FIELD_KINDS.items():
        if key in result and not check(result[key]):
            problems.append(f"'{key}' must be {kind}, got {show(result[key])[:SHOWN_LIMIT]}")
    if status == "processed":
        if "score" not in result:
            problems.append(f"the result has no 'score' ({SCORE_KIND})")
        elif not is_score(score := result["score"]):
            non_finite = isinstance(score, float) and not math.isfinite(score)
            shown = str(score) if non_finite else show(score)[:SHOWN_LIMIT]
            problems.append(f"score must be {SCORE_KIND}, got {shown}")
    return problems
