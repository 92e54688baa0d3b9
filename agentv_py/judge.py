"""Helpers for writing code judges in Python.

A code judge reads one JSON payload on stdin and prints one JSON result on stdout (see
docs/code-judges.md). This module does that plumbing, so a judge is one function:

    # /// script
    # requires-python = ">=3.11"
    # dependencies = []
    # ///
    from agentv_py.judge import JudgeInput, JudgeResult, judge

    @judge
    def check_total(inp: JudgeInput) -> JudgeResult:
        want = inp.config.get("tolerance", 0.01)
        got, expected = inp.get("total"), inp.get_expected("total")
        ok = isinstance(got, (int, float)) and abs(got - expected) <= want
        return JudgeResult(score=1.0 if ok else 0.0, hits=["total"] if ok else [], misses=[] if ok else ["total"])

Run it with `script: [uv, run, judges/check_total.py]` (or `[python3, judges/check_total.py]`).
agentv makes `agentv_py` importable in every judge it starts, whatever Python runs it; the module
needs only the standard library. The matching and path helpers agentv itself uses are re-exported
here (`similarity`, `normalize_text`, `match_numeric`, `match_date`, `resolve`,
`parse_answer_json`), so a judge scores exactly like the built-in evaluators, and so are the
dataset-level metrics helpers (`classify`, `field_counts`, `Counts`, `macro_f1`, `total`,
`align_items`, `item_similarity`, `line_item_counts`; see docs/metrics.md).

Exit codes follow the contract: 0 when the result passed, 1 when it did not ("1 = not passed",
with the result still on stdout). If the judge function raises, the traceback goes to stderr and
the result is `status: error` (exit 1), which agentv reports as an evaluator error — never as a
score. A result that breaks the contract (score outside [0, 1], NaN, not a number) is refused
the same way instead of being clamped.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING

from agentv_py.judge_input import JudgeInput
from agentv_py.scoring.case import PASS_THRESHOLD
from agentv_py.scoring.judge_contract import RESULT_KEYS, result_problems
from agentv_py.scoring.paths import MISSING, resolve
from agentv_py.scoring.thresholds import at_least

# A judge process starts once per case, so this module avoids costly imports (dataclasses,
# typing, traceback cost ~13 ms per start together); annotations are strings only.
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any, TypeVar

    from agentv_py.judge_prompt import prompt_template, run_prompt_template
    from agentv_py.judge_proxy import (
        TargetClient,
        TargetInvocationError,
        TargetNotAvailableError,
        TargetResponse,
        target_client,
    )
    from agentv_py.scoring.alignment import align_items, item_similarity
    from agentv_py.scoring.answer import parse_answer_json
    from agentv_py.scoring.dates import match_date
    from agentv_py.scoring.match import match_exact, match_fuzzy, match_numeric, normalize_text, similarity
    from agentv_py.scoring.metrics import (
        Counts,
        classify,
        field_counts,
        line_item_counts,
        macro_f1,
        total,
    )
    from agentv_py.scoring.paths import is_empty

    JudgeFunction = Callable[["JudgeInput"], "JudgeResult | dict[str, Any] | float"]
    F = TypeVar("F", bound=Callable[..., Any])

# The scoring helpers are imported on first use: a judge starts once per case, and a judge that
# does not need fuzzy matching should not pay for importing it (PEP 562 module __getattr__).
_LAZY = {
    "similarity": "agentv_py.scoring.match",
    "normalize_text": "agentv_py.scoring.match",
    "match_exact": "agentv_py.scoring.match",
    "match_numeric": "agentv_py.scoring.match",
    "match_fuzzy": "agentv_py.scoring.match",
    "match_date": "agentv_py.scoring.dates",
    "parse_answer_json": "agentv_py.scoring.answer",
    "NOT_JSON": "agentv_py.scoring.answer",
    # dataset-level extraction metrics (SPEC §5)
    "Counts": "agentv_py.scoring.metrics",
    "classify": "agentv_py.scoring.metrics",
    "field_counts": "agentv_py.scoring.metrics",
    "is_empty": "agentv_py.scoring.paths",
    "macro_f1": "agentv_py.scoring.metrics",
    "total": "agentv_py.scoring.metrics",
    "align_items": "agentv_py.scoring.alignment",
    "item_similarity": "agentv_py.scoring.alignment",
    "line_item_counts": "agentv_py.scoring.metrics",
    "prompt_template": "agentv_py.judge_prompt",
    "run_prompt_template": "agentv_py.judge_prompt",
    # the judge target proxy's client (a judge with `target:`)
    "TargetClient": "agentv_py.judge_proxy",
    "TargetInvocationError": "agentv_py.judge_proxy",
    "TargetNotAvailableError": "agentv_py.judge_proxy",
    "TargetResponse": "agentv_py.judge_proxy",
    "target_client": "agentv_py.judge_proxy",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'agentv_py.judge' has no attribute {name!r}")


__all__ = [
    "MISSING",
    "Counts",
    "align_items",
    "classify",
    "field_counts",
    "is_empty",
    "item_similarity",
    "line_item_counts",
    "macro_f1",
    "total",
    "JudgeInput",
    "JudgeResult",
    "judge",
    "match_date",
    "match_exact",
    "match_fuzzy",
    "match_numeric",
    "normalize_text",
    "parse_answer_json",
    "resolve",
    "run",
    "similarity",
    "TargetClient",
    "TargetInvocationError",
    "TargetNotAvailableError",
    "TargetResponse",
    "target_client",
    "prompt_template",
    "run_prompt_template",
]


class JudgeResult:
    """What a judge returns. `passed` defaults to score >= 0.8."""

    __slots__ = RESULT_KEYS

    def __init__(
        self,
        score: float,
        hits: list[str] | None = None,
        misses: list[str] | None = None,
        reasoning: str = "",
        details: dict[str, Any] | None = None,
        passed: bool | None = None,
        status: str = "processed",
    ) -> None:
        self.score = score
        self.hits = [] if hits is None else hits
        self.misses = [] if misses is None else misses
        self.reasoning = reasoning
        self.details = {} if details is None else details
        self.passed = passed
        self.status = status

    def __repr__(self) -> str:
        return f"JudgeResult(score={self.score!r}, status={self.status!r}, passed={self.passed!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JudgeResult) and self.to_dict() == other.to_dict()

    def problems(self) -> list[str]:
        """Ways this result breaks the contract (empty when it is valid): the same checks, in the
        same words, as agentv's code_judge evaluator (`agentv_py.scoring.judge_contract`), with
        bad values shown as Python reprs."""
        return result_problems(self.to_dict(), show=repr)

    def is_pass(self) -> bool:
        """`passed` when it is set, else score >= PASS_THRESHOLD (0.8)."""
        return self.passed if self.passed is not None else at_least(float(self.score), PASS_THRESHOLD)

    def to_dict(self) -> dict[str, Any]:
        """The result as the JSON object a judge prints (`passed` only when it is set)."""
        data: dict[str, Any] = {
            "score": self.score,
            "hits": self.hits,
            "misses": self.misses,
            "reasoning": self.reasoning,
            "details": self.details,
            "status": self.status,
        }
        if self.passed is not None:
            data["passed"] = self.passed
        return data


def _coerce(value: JudgeResult | dict[str, Any] | float) -> JudgeResult:
    if isinstance(value, JudgeResult):
        return value
    if isinstance(value, dict):
        known = {k: value[k] for k in RESULT_KEYS if k in value}
        if "score" not in known:
            raise TypeError("the judge returned a dict without 'score'")
        return JudgeResult(**known)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"the judge returned {type(value).__name__}; return a JudgeResult, a dict or a number")
    return JudgeResult(score=value)


def _dumps(result: JudgeResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False, allow_nan=False, default=str)


def _error_result(message: str) -> JudgeResult:
    return JudgeResult(score=0.0, misses=[message], reasoning=message, status="error", passed=False)


def _result_text(fn: JudgeFunction, payload: Callable[[], Any]) -> tuple[str, int]:
    """Call `fn` on the payload (`payload()` reads it); the result as one JSON line and the exit
    code (0 pass, 1 otherwise). Anything that goes wrong is an error result, never a score."""
    try:
        data = payload()
        if not isinstance(data, dict):
            raise ValueError("the payload on stdin is not a JSON object")
        result = _coerce(fn(JudgeInput.from_payload(data)))
        problems = result.problems()
        if problems:
            result = _error_result("invalid judge result: " + "; ".join(problems))
    except Exception as exc:  # noqa: BLE001 - reported as an error result, never as a score
        import traceback

        traceback.print_exc(file=sys.stderr)
        result = _error_result(f"judge raised {type(exc).__name__}: {exc}")
    try:
        text = _dumps(result)
    except ValueError as exc:  # a NaN or a cycle the contract does not look for (in details, say)
        result = _error_result(f"invalid judge result: it cannot be printed as JSON ({exc})")
        text = _dumps(result)
    return text, 0 if result.status == "processed" and result.is_pass() else 1


def run(fn: JudgeFunction, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Read the payload, call `fn`, print its result; return the exit code (0 pass, 1 otherwise)."""
    source = stdin or sys.stdin
    out = stdout or sys.stdout
    text, code = _result_text(fn, lambda: json.load(source))
    out.write(text + "\n")
    out.flush()
    return code


PERSISTENT_ENV = "AGENTV_JUDGE_PERSISTENT"


def _same(value: Any) -> Any:
    return value


def serve(fn: JudgeFunction, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """A persistent judge (`persistent: true`, docs/workers.md): the handshake, then one reply
    line `{"id", "result", "exit"}` per request line `{"id", "payload"}`, until stdin closes.
    What `fn` prints goes to stderr, never into the replies."""
    source = stdin or sys.stdin
    out = stdout or sys.stdout
    sys.stdout = sys.stderr
    out.write('{"agentv_worker": 1}\n')
    out.flush()
    for line in source:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        request = request if isinstance(request, dict) else {}
        payload = request.get("payload")
        text, code = _result_text(fn, functools.partial(_same, payload))
        ident = json.dumps(request.get("id"))
        out.write(f'{{"id": {ident}, "result": {text}, "exit": {code}}}\n')
        out.flush()
    return 0


def judge(fn: F) -> F:
    """Decorator: when the judge file runs as a script, run `fn` as the judge and exit (serving
    requests in a loop when agentv started it as a persistent judge)."""
    if getattr(fn, "__module__", None) == "__main__":
        import os

        sys.exit(serve(fn) if os.environ.get(PERSISTENT_ENV) == "1" else run(fn))
    return fn
