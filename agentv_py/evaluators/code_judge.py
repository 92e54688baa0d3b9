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


def build_payload(config: CodeJudgeConfig, context: EvalContext) -> dict[str, Any]:
    """The JSON object a judge reads on stdin (SPEC §3.2), aliases included."""
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
