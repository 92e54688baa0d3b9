"""`code_judge` (SPEC §3.2): a user script, any language, fed JSON on stdin.

The judge's answer is taken exactly as given: a score that is missing, not a number, NaN or
outside [0, 1], stdout that is not one JSON object, an unexpected exit code or a timeout is an
error result (score 0, a miss naming the judge, the problem and the stderr tail), never a guess.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentv_py.evaluators.base import EvalContext, error_result, processed_result, skipped_result
from agentv_py.locate import working_dir
from agentv_py.models.evaluators import CodeJudgeConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.process.command import script_argv
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, ProcResult, run_process
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.jsontext import loads
from agentv_py.scoring.judge_contract import result_problems


@lru_cache(maxsize=1)
def sdk_path() -> str:
    """A directory holding only `agentv_py`, put on judges' PYTHONPATH so that
    `import agentv_py.judge` works under any Python that runs them (uv run included),
    without exposing the rest of agentv's environment."""
    directory = tempfile.mkdtemp(prefix="agentv-sdk-")
    atexit.register(shutil.rmtree, directory, True)
    os.symlink(Path(__file__).resolve().parents[1], Path(directory) / "agentv_py")
    return directory


def judge_env() -> dict[str, str]:
    """The environment judges run in: agentv's own, as if its virtual environment were activated
    (the interpreter's directory first on PATH, so `python3` is agentv's Python with its packages),
    plus the SDK on PYTHONPATH for judges run by another Python, and (unless set) UV_PYTHON =
    agentv's interpreter, so `uv run` neither searches for nor downloads a Python."""
    env = dict(os.environ)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", os.defpath)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = sdk_path() + (os.pathsep + existing if existing else "")
    env.setdefault("UV_PYTHON", sys.executable)
    return env


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _snake_key(key: str) -> str:
    """A key as AgentV's deep snake_case conversion left it: `knowledgeSearch` ->
    `knowledge_search`; a key starting with an uppercase letter is kept as it is."""
    if key[:1].isupper():
        return key
    return "".join("_" + ch.lower() if "A" <= ch <= "Z" else ch for ch in key)


def _trace_summary(messages: Sequence[Any]) -> dict[str, Any]:
    """AgentV's `trace_summary` of the output messages (agentv-reference §5): `event_count` = the
    number of tool calls, `tool_names` sorted unique, `tool_calls_by_name` (keys snake_cased, as
    AgentV's payload conversion did), `error_count` 0. A tool call counts when it is an object
    with a string `tool`; anything else in the target's messages is ignored."""
    counts: dict[str, int] = {}
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            tool = call.get("tool") if isinstance(call, dict) else None
            if isinstance(tool, str):
                counts[tool] = counts.get(tool, 0) + 1
    by_name: dict[str, int] = {}
    for tool, count in counts.items():
        key = _snake_key(tool)
        by_name[key] = by_name.get(key, 0) + count
    return {
        "event_count": sum(counts.values()),
        "tool_names": sorted(counts),
        "tool_calls_by_name": by_name,
        "error_count": 0,
    }


def build_payload(config: CodeJudgeConfig, context: EvalContext) -> dict[str, Any]:
    """The JSON object a judge reads on stdin (SPEC §3.2), aliases included, plus every key of
    AgentV's payload (agentv-reference §3.2) so that judges written for AgentV run unchanged:
    `guideline_files` (agentv has no guideline files: always `[]`, as AgentV sent without
    guidelines) and `trace_summary` (of the output messages, as AgentV computed it)."""
    case = context.case
    candidate = context.candidate
    reference = _text(context.expected)
    output_messages = context.output_messages or [{"role": "assistant", "content": context.answer}]

    def dump(messages: Sequence[BaseModel]) -> list[dict[str, Any]]:
        return [m.model_dump(exclude_none=True) for m in messages]

    return {
        "candidate_answer": context.answer,
        "output": context.answer,
        "reference_answer": reference,
        "expected_output": reference,
        "candidate": None if candidate is NOT_JSON else candidate,
        "expected": context.expected,
        "question": context.question,
        "input": context.question,
        "expected_outcome": case.expected_outcome if case else None,
        "expected_messages": dump(case.expected_messages) if case else [],
        "input_messages": dump(case.input_messages) if case else [],
        "output_messages": output_messages,
        "input_files": list(context.files),
        "guideline_files": [],
        "trace_summary": _trace_summary(output_messages),
        "image_files": [image.path() for image in context.images],
        "config": config.config,
        "eval_id": context.eval_id,
        "dataset": context.dataset,
    }


def evaluate_code_judge(config: CodeJudgeConfig, context: EvalContext) -> EvaluatorResult:
    cwd = working_dir(context.dataset_dir, config.cwd)
    payload = json.dumps(build_payload(config, context), ensure_ascii=False, allow_nan=False, default=str)
    result = run_process(
        script_argv(config.script),
        timeout=config.timeout_seconds,
        stdin=payload.encode("utf-8"),
        cwd=cwd,
        env=judge_env(),
        registry=context.processes,
    )
    return judge_result(config, result)


def _error(config: CodeJudgeConfig, problem: str, result: ProcResult | None = None) -> EvaluatorResult:
    tail = result.stderr_tail() if result is not None else ""
    message = f"code_judge '{config.display_name}': {problem}" + (f" (stderr: {tail})" if tail else "")
    return error_result(name=config.display_name, type=config.type, weight=config.weight, message=message)


def judge_result(config: CodeJudgeConfig, result: ProcResult) -> EvaluatorResult:
    """Turn a finished judge process into a result, exactly as the contract says."""
    abnormal = result.abnormal_end(config.timeout_seconds, DEFAULT_OUTPUT_CAP)
    if abnormal:
        return _error(config, abnormal, result if result.timed_out else None)
    code = result.returncode
    if code not in (0, 1):
        what = result.killed_by_signal() or f"exited with code {code}"
        return _error(config, f"{what} (0 or 1 with a JSON result expected)", result)
    try:
        stdout = result.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(config, f"stdout is not valid UTF-8 (byte offset {exc.start})", result)
    parsed, problem = _one_json_object(stdout)
    if problem:
        prefix = "exited with code 1 and " if code == 1 else ""
        return _error(config, prefix + problem, result)
    assert parsed is not None
    return _checked(config, parsed, code, result)


def _one_json_object(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) when the whole stdout is one JSON object, else (None, what is wrong).

    Never a fenced block or JSON picked out of prose. NaN and Infinity are read (`allow_nan`), so
    that the contract can name a NaN score instead of calling the stdout not JSON."""
    text = stdout.strip()
    if not text:
        return None, "printed nothing on stdout (one JSON object expected)"
    try:
        value = loads(text, allow_nan=True)
    except ValueError:
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
        return None, f"stdout is not JSON: {snippet!r}"
    if not isinstance(value, dict):
        kind = "an array" if isinstance(value, list) else f"a {type(value).__name__}"
        return None, f"stdout is {kind}, not a JSON object"
    return value, None


def _checked(config: CodeJudgeConfig, data: dict[str, Any], code: int | None, result: ProcResult) -> EvaluatorResult:
    """The judge's parsed result checked against the contract (`scoring.judge_contract`): the
    first problem makes an error result; else its status decides (error, skipped, processed)."""
    problems = result_problems(data, show=json.dumps)
    if problems:
        return _error(config, problems[0], result)
    name, weight = config.display_name, config.weight
    status = data.get("status", "processed")
    reasoning = data.get("reasoning", "")
    details = data.get("details", {})
    if status == "error":
        message = reasoning or "the judge reported an error"
        return _error(config, f"reported an error: {message}", result)
    if status == "skipped":
        return skipped_result(name=name, type=config.type, weight=weight, reasoning=reasoning, details=details)
    passed = data.get("passed")
    if passed is None and code == 1:
        passed = False  # exit 1 with a valid result: the convention "1 = not passed"
    return processed_result(
        name=name,
        type=config.type,
        score=float(data["score"]),
        weight=weight,
        hits=data.get("hits", []),
        misses=data.get("misses", []),
        reasoning=reasoning,
        details=details,
        passed=passed,
    )
