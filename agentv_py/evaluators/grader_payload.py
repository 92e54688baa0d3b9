"""AgentV v4.42.4's code-grader payload (`payload_format: "4.42"`, AgentV #1362 and #1413): what
its `code-grader` wrote on a grader's stdin, key for key, built from what agentv knows of the case
(docs/code-judges.md has both payloads side by side). Every object key is in snake_case as AgentV's
`toSnakeCaseDeep` left it, the pass-through `config` included."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.judge_payload import snake_deep

PAYLOAD_KEYS: dict[str, tuple[str, ...]] = {
    "2026-02": (
        "candidate_answer",
        "output",
        "reference_answer",
        "expected_output",
        "candidate",
        "expected",
        "question",
        "input",
        "expected_outcome",
        "expected_messages",
        "input_messages",
        "output_messages",
        "input_files",
        "guideline_files",
        "trace_summary",
        "image_files",
        "config",
        "eval_id",
        "dataset",
    ),
    "4.42": (
        "criteria",
        "expected_output",
        "output",
        "messages",
        "output_path",  # only when the answer is too long to inline (FILE_BACKED_OUTPUT_THRESHOLD)
        "input_files",
        "input",
        "metadata",
        "trace",
        "trace_summary",
        "token_usage",
        "cost_usd",
        "duration_ms",
        "start_time",
        "end_time",
        "file_changes",
        "workspace_path",
        "config",
    ),
}
"""Every top-level key of each payload, in the order written (docs/code-judges.md)."""

FILE_BACKED_OUTPUT_THRESHOLD = 50_000
"""An answer whose JSON string is longer than this goes to a file (`output_path`), as in AgentV."""


def _dump(messages: Sequence[Any]) -> list[Any]:
    return [m.model_dump(exclude_none=True) if hasattr(m, "model_dump") else m for m in messages]


def _get(record: Any, snake: str, camel: str) -> Any:
    if not isinstance(record, dict):
        return None
    return record.get(snake, record.get(camel))


def _transcript(inputs: list[Any], outputs: list[Any]) -> list[Any]:
    """AgentV's `buildTraceMessages`: the output alone when it holds a user or system turn (a
    whole conversation) or repeats the one input message; else input then output."""
    if not outputs:
        return inputs
    if any(isinstance(m, dict) and m.get("role") in ("user", "system") for m in outputs):
        return outputs
    if len(inputs) == 1 and isinstance(outputs[0], dict):
        first, other = inputs[0], outputs[0]
        if first.get("role") == other.get("role") and first.get("content") == other.get("content"):
            return outputs
    return [*inputs, *outputs]


def _calls(message: Any) -> list[dict[str, Any]]:
    calls = _get(message, "tool_calls", "toolCalls")
    return (
        [c for c in calls if isinstance(c, dict) and isinstance(c.get("tool"), str)] if isinstance(calls, list) else []
    )


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(moment: datetime) -> str:
    """As JavaScript's `toISOString`: UTC, milliseconds, `Z`."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _summary(messages: list[Any]) -> tuple[dict[str, Any], str | None, str | None]:
    """AgentV's `computeTraceSummary`: tool calls counted by name, assistant turns as LLM calls,
    per-tool durations (when any call has one), and the earliest start and latest end."""
    counts: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    starts: list[datetime] = []
    ends: list[datetime] = []
    llm_calls = 0
    for message in messages:
        llm_calls += isinstance(message, dict) and message.get("role") == "assistant"
        for record in (message, *_calls(message)):
            start, end = _get(record, "start_time", "startTime"), _get(record, "end_time", "endTime")
            starts += [m for m in (_moment(start),) if m is not None]
            ends += [m for m in (_moment(end),) if m is not None]
        for call in _calls(message):
            counts[call["tool"]] = counts.get(call["tool"], 0) + 1
            duration = _number(_get(call, "duration_ms", "durationMs"))
            began, ended = _moment(_get(call, "start_time", "startTime")), _moment(_get(call, "end_time", "endTime"))
            if duration is None and began is not None and ended is not None:
                duration = (ended - began).total_seconds() * 1000
            if duration is not None:
                durations.setdefault(call["tool"], []).append(duration)
    summary: dict[str, Any] = {
        "eventCount": sum(counts.values()),
        "toolCalls": counts,
        "errorCount": 0,
        "llmCallCount": llm_calls,
    }
    if durations:
        summary["toolDurations"] = durations
    return summary, _iso(min(starts)) if starts else None, _iso(max(ends)) if ends else None


def _without_none(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if value is not None}


def _message_record(message: Any, content: Any = None) -> dict[str, Any]:
    record = message if isinstance(message, dict) else {}
    return _without_none(
        {
            "role": record.get("role"),
            "name": record.get("name"),
            "content": record.get("content") if content is None else content,
            "tokenUsage": _get(record, "token_usage", "tokenUsage"),
            "metadata": record.get("metadata"),
        }
    )


def _events(messages: list[Any], final_output: str) -> list[dict[str, Any]]:
    """AgentV's trace events: one per message, one per tool call (plus its result when it has
    an output), and the final response (the last assistant message, content = the answer)."""
    events: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        event_id = f"message-{index}"
        timing = {
            "timestamp": _get(message, "start_time", "startTime"),
            "durationMs": _get(message, "duration_ms", "durationMs"),
        }
        event = {"eventId": event_id, "ordinal": len(events), "type": "message", **timing}
        events.append(
            _without_none({**event, "message": _message_record(message), "metadata": {"message_index": index}})
        )
        for tool_index, call in enumerate(_calls(message)):
            call_id = f"{event_id}-tool-{tool_index}"
            where = {"message_index": index, "tool_index": tool_index}
            tool = {"name": call["tool"], "callId": call.get("id"), "status": call.get("status") or "ok"}
            timing = {
                "timestamp": _get(call, "start_time", "startTime"),
                "durationMs": _get(call, "duration_ms", "durationMs"),
            }
            base = {"parentEventId": event_id, "type": "tool_call", **timing}
            tool_call = {"eventId": call_id, "ordinal": len(events), **base}
            full_tool = {**tool, "input": call.get("input"), "output": call.get("output")}
            events.append(_without_none({**tool_call, "tool": _without_none(full_tool), "metadata": where}))
            if call.get("output") is not None:
                result = {"eventId": f"{call_id}-result", "parentEventId": call_id, "ordinal": len(events)}
                ended = {"type": "tool_result", "timestamp": _get(call, "end_time", "endTime")}
                output_tool = _without_none({**tool, "output": call.get("output")})
                events.append(_without_none({**result, **ended, "tool": output_tool, "metadata": where}))
    finals = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
    if finals:
        last = messages[finals[-1]]
        stamp = _get(last, "end_time", "endTime") or _get(last, "start_time", "startTime")
        final = {"eventId": "final-response", "parentEventId": f"message-{finals[-1]}", "ordinal": len(events)}
        message = _message_record(last, final_output)
        events.append(_without_none({**final, "type": "final_response", "timestamp": stamp, "message": message}))
        events[-1]["metadata"] = {"message_index": finals[-1]}
    return events


def build_grader_payload(
    context: EvalContext, config: dict[str, Any] | None, output_path: str | None = None
) -> dict[str, Any]:
    """The object AgentV v4.42.4's code-grader wrote on stdin, keys in its order, snake_cased.
    `output_path` set: the answer is in that file (as JSON) and `output` is null. What agentv
    does not have is null as in AgentV without it: `file_changes`, `workspace_path` (no
    workspaces), `start_time` / `end_time` (the target call's: not recorded)."""
    case = context.case
    inputs = snake_deep(_dump(case.input_messages)) if case else []
    outputs = context.output_messages or [{"role": "assistant", "content": context.answer}]
    messages = snake_deep(_transcript(inputs, _dump(outputs)))
    summary, first, last = _summary(messages)
    trace = context.trace
    usage = trace.token_usage if trace else None
    cost = trace.cost_usd if trace else None
    duration = trace.duration_ms if trace else None
    record = {
        **summary,
        "messages": messages,
        "events": _events(messages, context.answer),
        "tokenUsage": usage,
        "costUsd": cost,
        "durationMs": duration,
        "startTime": first,
        "endTime": last,
        "metadata": {"eval_case_id": context.eval_id},
    }
    payload: dict[str, Any] = {
        "criteria": (case.expected_outcome if case else None) or "",
        "expected_output": snake_deep(_dump(case.expected_messages)) if case else [],
        "output": None if output_path else context.answer,
        "messages": messages,
        "output_path": output_path,
        "input_files": [*context.files, *context.guideline_files],
        "input": inputs,
        "metadata": getattr(case, "metadata", None),  # a case's `metadata` (v4.42 format), when kept
        "trace": snake_deep(_without_none(record)),
        "trace_summary": snake_deep(summary),
        "token_usage": usage,
        "cost_usd": cost,
        "duration_ms": duration,
        "start_time": None,
        "end_time": None,
        "file_changes": None,
        "workspace_path": None,
        "config": snake_deep(config) if config else None,
    }
    if output_path is None:
        del payload["output_path"]  # AgentV's undefined: the key is absent
    return payload


def _text(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str, indent=2).encode("utf-8")


@contextmanager
def grader_stdin(context: EvalContext, config: dict[str, Any] | None) -> Iterator[bytes]:
    """The 4.42 payload as the bytes for the grader's stdin. An answer longer than
    FILE_BACKED_OUTPUT_THRESHOLD (as a JSON string) is written to `output.json` in a temporary
    directory named by `output_path`, removed when the block ends (AgentV's file-backed output)."""
    if len(json.dumps(context.answer, ensure_ascii=False)) <= FILE_BACKED_OUTPUT_THRESHOLD:
        yield _text(build_grader_payload(context, config))
        return
    with tempfile.TemporaryDirectory(prefix="agentv-grader-") as directory:
        path = Path(directory) / "output.json"
        path.write_text(json.dumps(context.answer, ensure_ascii=False), encoding="utf-8")
        yield _text(build_grader_payload(context, config, str(path)))
