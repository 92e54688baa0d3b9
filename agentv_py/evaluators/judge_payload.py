"""What a code judge is given: the payload on its stdin (AgentV's code-judge payload: the case, the
answer, the trace and its summary, the evaluator's own config, keys in snake_case) and the
environment it runs in (agentv's judge SDK importable)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentv_py.evaluators.base import EvalContext, reference_answer
from agentv_py.models.results import Trace
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.trace import trace_summary as _trace_summary


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


def _snake_key(key: str) -> str:
    """A key as AgentV's deep snake_case conversion left it: `knowledgeSearch` ->
    `knowledge_search`; a key starting with an uppercase letter (A-Z) is kept as it is."""
    if "A" <= key[:1] <= "Z":
        return key
    return "".join("_" + ch.lower() if "A" <= ch <= "Z" else ch for ch in key)


def snake_deep(value: Any) -> Any:
    """`value` with every object key converted as AgentV's `toSnakeCaseDeep` did (values kept)."""
    if isinstance(value, dict):
        return {(_snake_key(k) if isinstance(k, str) else k): snake_deep(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_deep(item) for item in value]
    return value


def _tool_durations(messages: Sequence[Any]) -> dict[str, list[float]]:
    """AgentV's `tool_durations`: per tool, the calls' `duration_ms` (or `durationMs`), or the
    time between their `start_time` and `end_time` (ISO 8601), in call order."""
    durations: dict[str, list[float]] = {}
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            tool = call.get("tool") if isinstance(call, dict) else None
            if not isinstance(tool, str):
                continue
            duration = call.get("duration_ms", call.get("durationMs"))
            if not isinstance(duration, int | float) or isinstance(duration, bool):
                duration = _span_ms(
                    call.get("start_time", call.get("startTime")), call.get("end_time", call.get("endTime"))
                )
            if duration is not None:
                durations.setdefault(tool, []).append(duration)
    return durations


def _span_ms(start: Any, end: Any) -> float | None:
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        began = datetime.fromisoformat(start.replace("Z", "+00:00"))
        ended = datetime.fromisoformat(end.replace("Z", "+00:00"))
        return (ended - began).total_seconds() * 1000
    except (ValueError, TypeError):  # not ISO 8601, or one naive and one aware
        return None


def trace_summary(messages: Sequence[Any], trace: Trace | None) -> dict[str, Any]:
    """AgentV's `trace_summary` (agentv-reference §5): the tool calls of the output messages, plus
    `tool_durations` when any call has a duration, plus the target call's `token_usage`,
    `cost_usd` and `duration_ms` (AgentV's provider metrics) when known."""
    summary = _trace_summary(messages)
    durations = _tool_durations(messages)
    if durations:
        summary["tool_durations"] = durations
    if trace is not None:
        metrics = {"token_usage": trace.token_usage, "cost_usd": trace.cost_usd, "duration_ms": trace.duration_ms}
        summary.update({key: value for key, value in metrics.items() if value is not None})
    return summary


def build_payload(context: EvalContext, config: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON object a judge (or an llm_judge prompt script) reads on stdin (SPEC §3.2),
    aliases included, plus every key of AgentV's payload (agentv-reference §3.2) as AgentV
    converted it, so that judges written for AgentV run unchanged: `guideline_files` (the input
    files `.agentv/config.yaml` made guideline files), `trace_summary`, and the message lists with
    every object key in snake_case. `config` (the pass-through keys) is verbatim, not converted."""
    case = context.case
    candidate = context.candidate
    reference = reference_answer(case, context.expected)
    output_messages = context.output_messages or [{"role": "assistant", "content": context.answer}]

    def dump(messages: Sequence[BaseModel]) -> list[dict[str, Any]]:
        return [snake_deep(m.model_dump(exclude_none=True)) for m in messages]

    return {
        "candidate_answer": context.answer,
        "output": context.answer,
        "reference_answer": reference,
        "expected_output": reference,
        "candidate": None if candidate is NOT_JSON else candidate,
        "expected": context.expected,
        "question": context.question,
        "input": context.question,
        "expected_outcome": (case.expected_outcome if case else None) or "",
        "expected_messages": dump(case.expected_messages) if case else [],
        "input_messages": dump(case.input_messages) if case else [],
        "output_messages": snake_deep(output_messages),
        "input_files": list(context.files),  # AgentV's file_paths minus the guideline files
        "guideline_files": list(context.guideline_files),
        "trace_summary": snake_deep(trace_summary(output_messages, context.trace)),
        "image_files": [image.path() for image in context.images],
        "config": config,
        "eval_id": context.eval_id,
        "dataset": context.dataset,
    }


def payload_text(context: EvalContext, config: dict[str, Any] | None) -> bytes:
    """The payload as the bytes written to the judge's stdin: 2-space JSON, as AgentV wrote it."""
    payload = build_payload(context, config)
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str, indent=2).encode("utf-8")
