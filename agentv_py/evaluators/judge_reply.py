"""What a code judge printed, read: one JSON object on stdout (both payload formats), AgentV
v4.42.4's reading of a grader's exit code and stdout (`payload_format: "4.42"`), and the error
result for everything that cannot be scored, naming the payload key a crashed judge looked for."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from agentv_py.evaluators.base import error_result, processed_result
from agentv_py.evaluators.grader_payload import PAYLOAD_KEYS
from agentv_py.models.evaluators import CodeJudgeConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, ProcResult
from agentv_py.scoring.grader_reply import GraderReply, plain_text_reply, read_grader_reply
from agentv_py.scoring.jsontext import TOO_DEEP, loads

_KEY_ERROR = re.compile(r"""KeyError: (['"])([^'"\n]{1,100})\1""")


def missing_key_note(stderr: str | None, payload_format: str) -> str | None:
    """When a judge died of a Python `KeyError` on a top-level key of the other payload format
    that its own payload lacks: a note naming the key and the format that sends it. None for any
    other KeyError (a key of its config or of the data is the judge's business, not the payload's)."""
    found = _KEY_ERROR.findall(stderr or "")
    if not found:
        return None
    key = found[-1][1]
    other = next(fmt for fmt in PAYLOAD_KEYS if fmt != payload_format)
    if key in PAYLOAD_KEYS[payload_format] or key not in PAYLOAD_KEYS[other]:
        return None
    return (
        f"the judge read key '{key}', which the {payload_format} payload does not have; "
        f'the {other} payload has it: set payload_format: "{other}" on this evaluator'
    )


def judge_error(
    config: CodeJudgeConfig,
    problem: str,
    result: ProcResult | None = None,
    details: dict[str, Any] | None = None,
) -> EvaluatorResult:
    """The error result: the judge's name, the problem, the tail of its stderr, and (a KeyError
    on a key the payload lacks) which key."""
    tail = result.stderr_tail() if result is not None else ""
    message = f"code_judge '{config.display_name}': {problem}" + (f" (stderr: {tail})" if tail else "")
    note = missing_key_note(result.stderr_text(), config.payload_format) if result is not None else None
    if note:
        message += f"; {note}"
    return error_result(
        name=config.display_name, type=config.type, weight=config.weight, message=message, details=details
    )


def _unreadable(exc: ValueError) -> str:
    """Why valid JSON could not be read (nested too deeply, an integer past Python's digit
    limit), in agentv's words; "" for text that is simply not JSON."""
    if str(exc) == TOO_DEEP:
        return TOO_DEEP
    if not isinstance(exc, json.JSONDecodeError) and "digits" in str(exc):
        return f"an integer longer than {sys.get_int_max_str_digits()} digits"
    return ""


def one_json_object(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) when the whole stdout is one JSON object, else (None, what is wrong).

    Never a fenced block or JSON picked out of prose. NaN and Infinity are read (`allow_nan`), so
    that the contract can name a NaN score instead of calling the stdout not JSON."""
    text = stdout.strip()
    if not text:
        return None, "printed nothing on stdout (one JSON object expected)"
    try:
        value = loads(text, allow_nan=True)
    except ValueError as exc:
        why = _unreadable(exc)
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            last = loads(lines[-1], allow_nan=True)
        except ValueError:
            last = None
        if isinstance(last, dict) and len(lines) > 1:
            extra = len(lines) - 1
            return None, (
                f"printed {extra} line{'s' if extra != 1 else ''} before its JSON result "
                "(stdout must hold only the result; print debug output to stderr)"
            )
        snippet = text[:80] + ("..." if len(text) > 80 else "")
        return None, f"stdout is not JSON{f' ({why})' if why else ''}: {snippet!r}"
    if not isinstance(value, dict):
        kind = "an array" if isinstance(value, list) else f"a {type(value).__name__}"
        return None, f"stdout is {kind}, not a JSON object"
    return value, None


def _is_plain_text(text: str) -> bool:
    """Stdout AgentV read as a plain-text verdict: not JSON of any kind, not starting as JSON,
    and not debug lines followed by a JSON object (that is an error, as in the 2026-02 format)."""
    if text.startswith(("{", "[")):
        return False
    _, problem = one_json_object(text)
    return problem is not None and problem.startswith("stdout is not JSON")


def grader_reply_result(config: CodeJudgeConfig, result: ProcResult) -> EvaluatorResult:
    """A finished grader of `payload_format: "4.42"` read as AgentV v4.42.4 read it: a non-zero
    exit with JSON on stdout or anything on stderr is an error; exit 0 with one JSON object is
    the reply (`checked_grader_reply`); plain text is a verdict by exit code (0 pass, else fail)."""
    abnormal = result.abnormal_end(config.timeout_seconds, DEFAULT_OUTPUT_CAP)
    if abnormal:
        return judge_error(config, abnormal, result if result.timed_out else None)
    code = result.returncode
    signal = result.killed_by_signal()
    if signal:
        return judge_error(config, signal, result)
    try:
        text = result.stdout.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        return judge_error(config, f"stdout is not valid UTF-8 (byte offset {exc.start})", result)
    code = code or 0
    if code != 0 and (text.startswith(("{", "[")) or result.stderr.strip()):
        return judge_error(config, f"exited with code {code} (a JSON result is read only on exit 0)", result)
    if not text or _is_plain_text(text):
        return _verdict(config, plain_text_reply(text, code))
    parsed, problem = one_json_object(text)
    if problem:
        return judge_error(config, problem, result)
    assert parsed is not None
    return checked_grader_reply(config, parsed, result)


def checked_grader_reply(config: CodeJudgeConfig, data: dict[str, Any], result: ProcResult) -> EvaluatorResult:
    """The grader's JSON reply scored as AgentV v4.42.4 scores it (`scoring.grader_reply`), or
    an error result naming the key that cannot be scored."""
    reply = read_grader_reply(data)
    if isinstance(reply, str):
        return judge_error(config, reply, result)
    return _verdict(config, reply)


def _verdict(config: CodeJudgeConfig, reply: GraderReply) -> EvaluatorResult:
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=reply.score,
        weight=config.weight,
        hits=reply.hits,
        misses=reply.misses,
        reasoning=reply.reasoning,
        details=dict(reply.details) if reply.details is not None else None,
    )
