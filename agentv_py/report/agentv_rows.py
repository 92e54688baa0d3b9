"""AgentV's results read as this tool's rows: an AgentV v4.42 run folder (a folder with
`index.jsonl`) or its `index.jsonl`, for `agentv compare`, `agentv metrics` and `agentv report`.

One home: `readable_results` gives the commands a results file they read as they always do; for
an AgentV run it is a temporary JSONL of our rows converted from the index (`agentv_row`), line
for line (a blank line stays blank, so a line number said about it is the index's). A row that
cannot be converted stops the command (AgentvRunError: the index, the line, what is wrong).
The per-test files beside the index (grading.json, outputs/answer.md) are not read: their paths
come from the rows, and a row's data never chooses what is opened. The mapping, field by field, is
in docs/agentv-runs.md; `report/agentv_run.py` writes such a folder.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import ValidationError

from agentv_py.models.results import EvaluatorResult, ResultRow, Trace, Verdict
from agentv_py.report.agentv_run import INDEX, OUR_KEY
from agentv_py.report.agentv_sums import AGENTV_THRESHOLD, our_type
from agentv_py.report.jsonl import UnusableInput, dumps_row, row_lines

HINT = (
    "pass a results file `agentv eval` wrote, or an AgentV run folder (or its index.jsonl): one "
    "result row per line, each with a test_id and a numeric score"
)
T = TypeVar("T")
SCORE_ONLY = "score"  # the one evaluator result of a row without `scores`: the row's score
_STATUSES = ("ok", "quality_failure", "execution_error")
_VERDICTS: tuple[Verdict, ...] = ("pass", "partial", "fail")
# AgentV's camelCase aliases of row keys (result-row-schema.ts), read as their snake_case keys
_ALIASES = {
    "testId": "test_id",
    "conversationId": "conversation_id",
    "costUsd": "cost_usd",
    "durationMs": "duration_ms",
    "executionStatus": "execution_status",
    "failureStage": "failure_stage",
    "failureReasonCode": "failure_reason_code",
    "tokenUsage": "token_usage",
}


class AgentvRunError(UnusableInput):
    """An AgentV run that cannot be read: which file and line, and why (exit 2)."""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _loads(line: bytes | bytearray) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:  # an integer wider than 64 bits: the standard library reads it
        return json.loads(line)


def agentv_index(path: Path) -> Path | None:
    """The `index.jsonl` to read when `path` is an AgentV run: a folder with one, or a JSONL
    file whose first row is an AgentV row (`test_id`, no `eval_id`); None otherwise."""
    if path.is_dir():
        return agentv_index(path / INDEX) if (path / INDEX).is_file() else None
    if not path.is_file():
        return None
    first = next(iter(row_lines(path)), None)
    if first is None or isinstance(first[1], str):
        return None
    try:
        value = _loads(first[1])
    except (ValueError, RecursionError):
        return None
    return path if isinstance(value, dict) and "test_id" in value and "eval_id" not in value else None


def _assertions(value: Any, where: str) -> tuple[list[str], list[str]]:
    """AgentV's `assertions` ({text, passed, evidence}) as hits and misses."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        raise ValueError(f"{where}assertions is not a list")
    hits: list[str] = []
    misses: list[str] = []
    for i, item in enumerate(value):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("text"), str)
            or not isinstance(item.get("passed"), bool)
        ):
            raise ValueError(f"{where}assertions[{i}] is not an assertion ({{text: string, passed: boolean}})")
        (hits if item["passed"] else misses).append(item["text"])
    return hits, misses


def _result(value: Any, where: str) -> EvaluatorResult:
    """One `scores[]` entry as an evaluator result (its `scores` nested)."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} is not an object")
    for key, kind in (("name", "a string"), ("type", "a string"), ("score", "a number")):
        found = value.get(key)
        if not (_number(found) if kind == "a number" else isinstance(found, str)):
            raise ValueError(f"{where}.{key} is not {kind}")
    verdict = value.get("verdict")
    if verdict is not None and not isinstance(verdict, str):
        raise ValueError(f"{where}.verdict is not a string")
    weight = value.get("weight", 1.0)
    if weight is not None and not _number(weight):
        raise ValueError(f"{where}.weight is not a number")
    details = value.get("details")
    if details is not None and not isinstance(details, dict):
        raise ValueError(f"{where}.details is not an object")
    reasoning = value.get("reasoning", "")
    if not isinstance(reasoning, str):
        raise ValueError(f"{where}.reasoning is not a string")
    nested = value.get("scores")
    if nested is not None and not isinstance(nested, list):
        raise ValueError(f"{where}.scores is not a list")
    hits, misses = _assertions(value.get("assertions"), f"{where}.")
    score: float | None = value["score"]
    if verdict == "skip":
        status, ours, score = "skipped", None, None
    elif value.get("status") == "error":  # ours (`agentv_run.score_entry`)
        status, ours, score = "error", "fail", None
    else:
        status = "processed"
        ours = verdict if verdict in ("pass", "fail") else ("pass" if value["score"] >= AGENTV_THRESHOLD else "fail")
    return EvaluatorResult(
        name=value["name"],
        type=our_type(value["type"]),
        status=status,  # type: ignore[arg-type]  # one of the three, above
        score=score,
        passed=ours == "pass",
        verdict=ours,  # type: ignore[arg-type]
        weight=1.0 if weight is None else weight,
        hits=hits,
        misses=misses,
        reasoning=reasoning,
        details=details or {},
        evaluator_results=[_result(child, f"{where}.scores[{i}]") for i, child in enumerate(nested or [])],
    )


def _kept(ours: dict[str, Any], key: str, kind: type[T]) -> T | None:
    """What `metadata.agentv_py` keeps under `key`, when it is a `kind` (else None)."""
    value = ours.get(key)
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def agentv_row(value: Any) -> ResultRow:
    """One AgentV result row as our row; ValueError saying what is wrong with it."""
    if not isinstance(value, dict):
        raise ValueError("not an AgentV result row (a JSON object)")
    row = {_ALIASES.get(key, key): item for key, item in value.items()}
    test_id = row.get("test_id")
    if not isinstance(test_id, str) or not test_id:
        raise ValueError("no test_id (a string)")
    if not _number(row.get("score")):
        raise ValueError(f"test {test_id!r}: missing or invalid score (a number)")
    checks = (
        ("timestamp", str, "a string"),
        ("suite", str, "a string"),
        ("target", str, "a string"),
        ("conversation_id", str, "a string"),
        ("error", str, "a string"),
        ("token_usage", dict, "an object"),
        ("scores", list, "a list"),
        ("metadata", dict, "an object"),
    )
    for key, kind, said in checks:
        if row.get(key) is not None and not isinstance(row[key], kind):
            raise ValueError(f"test {test_id!r}: {key} is not {said}")
    for key in ("duration_ms", "cost_usd"):
        if row.get(key) is not None and not _number(row[key]):
            raise ValueError(f"test {test_id!r}: {key} is not a number")
    status = row.get("execution_status")
    if status is not None and status not in _STATUSES:
        raise ValueError(
            f"test {test_id!r}: unknown execution_status {status!r} (expected ok, quality_failure or execution_error)"
        )
    results = [_result(item, f"test {test_id!r}: scores[{i}]") for i, item in enumerate(row.get("scores") or [])]
    if not results and status != "execution_error":  # a row with only its score (AgentV's trend samples)
        results = [_result({"name": SCORE_ONLY, "type": SCORE_ONLY, "score": row["score"]}, "")]
    if "assertions" in row:  # a row-level list (AgentV's baseline files have one)
        hits, misses = _assertions(row["assertions"], f"test {test_id!r}: ")
    else:
        hits = [hit for result in results for hit in result.hits]
        misses = [miss for result in results for miss in result.misses]
    ours = (row.get("metadata") or {}).get(OUR_KEY)
    ours = ours if isinstance(ours, dict) else {}
    failed = status == "execution_error"
    verdict: Verdict
    if failed:
        verdict = "fail"
    elif (kept := ours.get("verdict")) in _VERDICTS:
        verdict = kept
    elif status is not None:
        verdict = "pass" if status == "ok" else "fail"
    else:
        verdict = "pass" if row["score"] >= AGENTV_THRESHOLD else "fail"
    error = row.get("error")
    if failed and not error:
        stage = [part for part in (row.get("failure_stage"), row.get("failure_reason_code")) if isinstance(part, str)]
        error = "AgentV execution error" + (f" ({', '.join(stage)})" if stage else "")
    output = row.get("output")
    duration = row.get("duration_ms")
    try:
        return ResultRow(
            timestamp=row.get("timestamp") or "",
            eval_id=test_id,
            dataset=row.get("suite") or "unknown",
            conversation_id=row.get("conversation_id"),
            target=row.get("target") or "unknown",
            status="error" if failed else "ok",
            score=row["score"],
            verdict=verdict,
            hits=hits,
            misses=misses,
            reasoning=_kept(ours, "reasoning", str) or "",
            candidate_answer=output if isinstance(output, str) else None,
            evaluator_results=results,
            error=error if failed or error else None,
            attempts=_kept(ours, "attempts", int) or 1,
            duration_ms=duration or 0.0,
            trace=Trace(
                duration_ms=duration,
                token_usage=row.get("token_usage"),
                cost_usd=row.get("cost_usd"),
                model=_kept(ours, "model", str),
            ),
            run_id=_kept(ours, "run_id", str),
            xfail=_kept(ours, "xfail", str),
        )
    except ValidationError as exc:  # a value of the right JSON type that our row still refuses
        first = exc.errors()[0]
        raise ValueError(f"test {test_id!r}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None


def convert_index(index: Path, out: Any) -> int:
    """Write the rows of an AgentV `index.jsonl` to `out` (a binary file) as our JSONL, line for
    line; returns the number of rows. AgentvRunError at the first line that is not a row."""
    written = 0
    at = 0
    for number, line in row_lines(index):
        out.write(b"\n" * (number - at - 1))  # the blank lines between, kept
        at = number
        try:
            if isinstance(line, str):
                raise ValueError(line)
            try:
                value = _loads(line)
            except RecursionError:
                raise ValueError("not JSON: nested too deeply") from None
            except ValueError as exc:
                raise ValueError(f"not JSON: {exc}") from None
            out.write(dumps_row(agentv_row(value).to_json_dict()) + b"\n")
        except ValueError as exc:
            raise AgentvRunError(f"{index}:{number}: {exc}", hint=HINT) from None
        written += 1
    return written


@contextmanager
def readable_results(path: Path, role: str = "results file") -> Iterator[Path]:
    """The results file a command reads for `path`: `path` itself, or for an AgentV run (a run
    folder or its index.jsonl) a temporary file of its rows converted (deleted on exit). A folder
    without an index.jsonl of AgentV rows is AgentvRunError, said of `role`."""
    index = agentv_index(path)
    if index is None and path.is_dir():
        raise AgentvRunError(
            f"{role} is a directory, not a file, and not an AgentV run folder "
            f"(no {INDEX} of AgentV result rows): {path}",
            hint=HINT,
        )
    if index is None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="agentv-run-") as scratch:
        converted = Path(scratch) / "results.jsonl"
        with converted.open("wb") as out:
            convert_index(index, out)
        yield converted


def same_run(a: Path, b: Path) -> bool:
    """Whether `a` and `b` are one AgentV run (a folder and its own index.jsonl, say)."""
    first, second = agentv_index(a), agentv_index(b)
    return first is not None and second is not None and first.resolve() == second.resolve()
