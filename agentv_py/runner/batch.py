"""`provider_batching: true` on a cli target: one command for all of a run's cases, its JSONL
answer split into one outcome per case (AgentV's `CliProvider.invokeBatch`, docs/providers.md).

The command runs like a case's (the run's process registry, the target's timeout, cwd and env)
with `{EVAL_ID}` = `batch`, `{PROMPT}` = '' and `{FILES}` = every case's files; `{OUTPUT_FILE}`
ends in `.jsonl`. Its output (the file, or stdout when the template has no `{OUTPUT_FILE}`) holds
one JSON object per line: a required string `id` (the case's) and the fields of a single answer
(`output` or `output_messages`, `text`, `token_usage`, `cost_usd`, `duration_ms`).

What is read is bounded: the whole output by `batch_output_cap` (one answer's cap per case, at
most `MAX_BATCH_OUTPUT`), each line by one answer's cap. Whatever makes the batch unusable (the
command failed or timed out, the output is too large, not UTF-8, or not valid JSONL) is a
`BatchResult.failure`: the run reports it once and every case then runs on its own, as AgentV
fell back to per-case dispatch. A case whose id has no line gets an error of its own (AgentV:
`Batch output missing id '<id>'`); lines for ids that are no case of the run are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentv_py.prepared import PreparedCase
from agentv_py.process.command import render_files
from agentv_py.runner.outcome import ENVELOPE_KEYS, TargetOutcome, unwrap_answer
from agentv_py.runner.targets import CliRunner
from agentv_py.scoring.jsontext import dumps, loads

BATCH_EVAL_ID = "batch"
MAX_BATCH_OUTPUT = 256 * 1024 * 1024  # a batch's whole output, however many cases it answers
ID_SHOWN = 200  # characters of an id quoted in a message (an id is target output: it may be huge)

ANSWERED = "answered by the batch call"
NOT_IN_OUTPUT = "not in the batch call's output"
RAN_ALONE = "the batch call failed, so this case ran on its own: {reason}"


class BatchOutputError(ValueError):
    """The batch output is not valid JSONL of answers (AgentV's message texts)."""


@dataclass
class BatchResult:
    """What one batch call gave: an outcome per case id it answered (a case without a line has an
    error outcome), or why the batch failed (then `outcomes` is empty and every case runs alone)."""

    outcomes: dict[str, TargetOutcome] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)  # ids of cases the output had no line for
    failure: str | None = None


def batch_output_cap(answer_cap: int, cases: int) -> int:
    """How much of a batch's output is read: one answer's cap per case, at most MAX_BATCH_OUTPUT
    (the whole output is held in memory while it is split)."""
    return min(answer_cap * max(cases, 1), MAX_BATCH_OUTPUT)


def duration_share(total_ms: float, cases: int) -> float:
    """A case's share of the batch's wall time, rounded half up to whole ms (AgentV's Math.round):
    its duration when its line reports none."""
    return float(math.floor(total_ms / max(cases, 1) + 0.5))


def _shown(case_id: str) -> str:
    return case_id if len(case_id) <= ID_SHOWN else case_id[:ID_SHOWN] + f"...({len(case_id)} characters)"


def parse_batch_output(text: str, *, line_cap: int, keep: Container[str] | None = None) -> dict[str, dict[str, Any]]:
    """The records of a batch's JSONL output by id (BatchOutputError when it is not valid).

    Lines are split at `\\n` (a `\\r` before it and blank lines are ignored, as AgentV did); each
    must be a JSON object with a non-empty string `id`, no id twice. Every line is checked, but
    only records whose id is in `keep` (default: all) are returned."""
    records: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        if len(line) > line_cap:
            raise BatchOutputError(
                f"CLI batch output line {number} is longer than the {line_cap // (1024 * 1024)} MB cap of one answer"
            )
        try:
            record = loads(line)
        except ValueError as exc:
            raise BatchOutputError(f"CLI batch output contains invalid JSONL line: line {number}: {exc}") from None
        if not isinstance(record, dict):
            raise BatchOutputError("CLI batch output JSONL line must be an object")
        case_id = record.get("id")
        if not isinstance(case_id, str) or not case_id:
            raise BatchOutputError("CLI batch output JSONL line missing required string field: id")
        if case_id in seen:
            raise BatchOutputError(f"CLI batch output contains duplicate id: {_shown(case_id)}")
        seen.add(case_id)
        if keep is None or case_id in keep:
            records[case_id] = record
    return records


def record_outcome(record: dict[str, Any], target: str) -> TargetOutcome:
    """One case's outcome from its batch record, read like a single answer (`unwrap_answer`)
    without its `id`. A non-string `text` in an envelope is its JSON text, as AgentV wrote it."""
    rest = {key: value for key, value in record.items() if key != "id"}
    if not rest:
        return TargetOutcome(None, f"target '{target}' returned an empty answer (its batch line has only an id)")
    if "text" in rest and not isinstance(rest["text"], str) and rest.keys() <= ENVELOPE_KEYS:
        rest["text"] = dumps(rest["text"])
    return unwrap_answer(dumps(rest))


def batch_values(cases: Sequence[PreparedCase], files_format: str) -> dict[str, list[str]]:
    """The placeholder values of a batch call: every case's files (and images) once, in order."""
    files = list(dict.fromkeys(path for case in cases for path in case.file_paths))
    images = list(dict.fromkeys(image.path() for case in cases for image in case.images))
    return {
        "PROMPT": [""],
        "GUIDELINES": [""],
        "EVAL_ID": [BATCH_EVAL_ID],
        "ATTEMPT": ["0"],
        "FILES": render_files(files, files_format),
        "IMAGES": render_files(images, files_format),
    }


def run_batch(runner: CliRunner, cases: Sequence[PreparedCase]) -> BatchResult:
    """Run the target's command once for all `cases` and split its JSONL output per case.

    Each answered case's outcome carries the target-reported metrics of its line; its
    `duration_ms` is the batch's wall time divided among the cases (AgentV's fallback, rounded).
    Never raises for anything the command does."""
    if not cases:
        return BatchResult()
    values = batch_values(cases, runner.config.files_format)
    cap = batch_output_cap(runner.output_cap, len(cases))
    call = runner.call(values, BATCH_EVAL_ID, 0, output_cap=cap, suffix=".jsonl")
    if call.text is None:
        return BatchResult(failure=call.error or f"target '{runner.name}' failed")
    ids = {case.case.id for case in cases}
    try:
        records = parse_batch_output(call.text, line_cap=runner.output_cap, keep=ids)
    except BatchOutputError as exc:
        return BatchResult(failure=str(exc))
    share = duration_share(call.duration_ms, len(cases))
    result = BatchResult()
    for case in cases:
        case_id = case.case.id
        record = records.get(case_id)
        if record is None:
            outcome = TargetOutcome(None, f"target '{runner.name}' failed: Batch output missing id '{case_id}'")
            result.missing.add(case_id)
        else:
            outcome = record_outcome(record, runner.name)
        outcome.duration_ms = share
        outcome.retryable = False  # the batch answered for this case: it is not called again
        result.outcomes[case_id] = outcome
    return result


def batch_note(result: BatchResult, case_id: str) -> str | None:
    """What a case's row says about the batch (`trace.batch`); None for a case that was not in it
    (its files could not be fetched: its row says so)."""
    if result.failure is not None:
        return RAN_ALONE.format(reason=result.failure)
    if case_id in result.missing:
        return NOT_IN_OUTPUT
    return ANSWERED if case_id in result.outcomes else None


def failure_notice(target: str, failure: str) -> str:
    """The one notice a failed batch gives the run (AgentV said it with --verbose only)."""
    return f"the batch call of target '{target}' failed; each case runs on its own: {failure}"
