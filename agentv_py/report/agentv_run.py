"""AgentV v4.42.4's run folder, written from this tool's result rows (`agentv eval --agentv-run DIR`).

The folder is what AgentV's own `agentv eval --output DIR` writes (packages/core/src/evaluation/
run-artifacts.ts at v4.42.4), so that AgentV's `compare`, `results` and dashboard read it:

    DIR/index.jsonl                           one row per case (`test_id`, `score`, `scores`, ...)
    DIR/benchmark.json                        per-target pass rate, time, tokens, cost; per grader
    DIR/timing.json                           the run's tokens and duration, summed
    DIR/<suite>/<test>/grading.json           the case's assertions and graders
    DIR/<suite>/<test>/timing.json            the case's tokens and duration
    DIR/<suite>/<test>/outputs/answer.md      the answer (and response.md, the same), when there is one

`<suite>` and `<test>` are the dataset name and the case id made safe as one folder name each
(`folder_name`): a case id never takes a file out of DIR. The mapping of each field is in
docs/agentv-runs.md; `report/agentv_rows.py` reads such a folder back.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.agentv_sums import Benchmark, agentv_type, round3, timing

INDEX = "index.jsonl"
OUR_KEY = "agentv_py"  # the index row's `metadata` key for what AgentV has no field for

_UNSAFE = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f-\x9f]')  # AgentV's set, plus control characters
NAME_CHARS = 80  # a folder name made from a case id is at most this long (plus its hash)


def folder_name(value: str, fallback: str) -> str:
    """`value` as one folder name that stays where it is put: AgentV's rule (`/ \\ : * ? " < > |`
    become `_`), plus control characters; a name of only dots (`..`) becomes underscores; a name
    over NAME_CHARS characters is cut. A name that had to change gets `-` and 8 hex digits of a
    hash of `value`, so two ids never share a folder because of what was cut or replaced."""
    trimmed = value.strip()
    if not trimmed:
        return fallback
    safe = _UNSAFE.sub("_", trimmed.encode("utf-8", "replace").decode("utf-8"))
    if not safe.strip("."):
        safe = "_" * len(safe)
    if safe == value and len(safe) <= NAME_CHARS:
        return safe
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[:NAME_CHARS]}-{digest}"


def _dumps(value: Any, indent: bool = False) -> bytes:
    """JSON that JavaScript's `JSON.parse` reads: non-finite numbers as null, a lone surrogate
    (a value read from a file written elsewhere) as its `\\u` escape."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)
    except TypeError:  # orjson refuses lone surrogates (and nesting past its limit)
        return json.dumps(value, indent=2 if indent else None, ensure_ascii=True, default=str).encode("ascii")


def _assertions(hits: list[str], misses: list[str]) -> list[dict[str, Any]]:
    return [{"text": text, "passed": True} for text in hits] + [{"text": text, "passed": False} for text in misses]


def _verdict(result: EvaluatorResult) -> str:
    """AgentV's verdicts are pass, fail and skip: our `partial` and an error are `fail`."""
    if result.status == "skipped":
        return "skip"
    return "pass" if result.verdict == "pass" else "fail"


def score_entry(result: EvaluatorResult) -> dict[str, Any]:
    """One evaluator result as an AgentV `scores[]` entry (`toIndexScore`), a composite's members
    nested in its `scores`. `reasoning` and, for an evaluator error, `status` are ours: AgentV
    reads past them."""
    entry: dict[str, Any] = {
        "name": result.name,
        "type": agentv_type(result.type),
        "score": result.score if result.score is not None else 0,
        "weight": result.weight,
        "verdict": _verdict(result),
        "assertions": _assertions(result.hits, result.misses),
    }
    if result.evaluator_results:
        entry["scores"] = [score_entry(child) for child in result.evaluator_results]
    if result.details:
        entry["details"] = result.details
    if result.reasoning:
        entry["reasoning"] = result.reasoning
    if result.status == "error":
        entry["status"] = "error"
    return entry


def execution_status(row: ResultRow) -> str:
    """AgentV's `execution_status`: an error row is `execution_error`, a passing one `ok`, any
    other `quality_failure` (AgentV's "scored below the threshold")."""
    if row.status == "error":
        return "execution_error"
    return "ok" if row.verdict == "pass" else "quality_failure"


def _ours(row: ResultRow) -> dict[str, Any]:
    """What the row says that AgentV has no field for (under `metadata.agentv_py`)."""
    kept: dict[str, Any] = {"verdict": row.verdict, "attempts": row.attempts}
    for key, value in (("reasoning", row.reasoning), ("run_id", row.run_id), ("xfail", row.xfail)):
        if value:
            kept[key] = value
    if row.trace.model:
        kept["model"] = row.trace.model
    return kept


def index_entry(row: ResultRow, subdir: str, has_answer: bool) -> dict[str, Any]:
    """The row as an `index.jsonl` row (`buildIndexArtifactEntry`'s keys, in its order); the
    per-test files are under `subdir` (relative, `/`-separated)."""
    entry: dict[str, Any] = {"timestamp": row.timestamp, "test_id": row.eval_id, "suite": row.dataset}
    if row.conversation_id is not None:
        entry["conversation_id"] = row.conversation_id
    entry["score"] = row.score
    entry["target"] = row.target
    if row.trace.token_usage is not None:
        entry["token_usage"] = row.trace.token_usage
    if row.trace.cost_usd is not None:
        entry["cost_usd"] = row.trace.cost_usd
    entry["duration_ms"] = row.duration_ms
    entry["scores"] = [score_entry(result) for result in row.evaluator_results]
    entry["execution_status"] = execution_status(row)
    if row.error is not None:
        entry["error"] = row.error
    entry["artifact_dir"] = subdir
    entry["grading_path"] = f"{subdir}/grading.json"
    entry["timing_path"] = f"{subdir}/timing.json"
    if has_answer:
        entry["output_path"] = entry["answer_path"] = f"{subdir}/outputs/answer.md"
        entry["response_path"] = f"{subdir}/outputs/response.md"
    entry["metadata"] = {OUR_KEY: _ours(row)}
    return entry


def grading(row: ResultRow) -> dict[str, Any]:
    """The case's `grading.json` (`buildGradingArtifact`): its hits and misses as assertions, its
    evaluators as graders."""
    assertions = [{**item, "evidence": ""} for item in _assertions(row.hits, row.misses)]
    passed = len(row.hits)
    total = len(assertions)
    document: dict[str, Any] = {
        "assertions": assertions,
        "summary": {
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "pass_rate": round3(passed / total) if total else 0,
        },
        "execution_metrics": {
            "tool_calls": {},
            "total_tool_calls": 0,
            "errors_encountered": int(row.error is not None),
        },
    }
    if row.evaluator_results:
        document["graders"] = [
            {**score_entry(result), "reasoning": result.reasoning} for result in row.evaluator_results
        ]
    if row.conversation_id:
        turns = sum(
            1
            for message in row.output_messages or []
            if isinstance(message, dict) and message.get("role") == "assistant"
        )
        document["conversation"] = {"turns": turns, "conversation_id": row.conversation_id}
    return document


def folder_problem(folder: Path) -> str | None:
    """Why `folder` cannot take a run (None: it can): it must be new, empty, or a run folder
    already (it has index.jsonl, which is replaced), so no other file is ever written over."""
    if not folder.exists():
        return None if not folder.is_symlink() else f"{folder} is a broken symbolic link"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if (folder / INDEX).is_file() or not any(folder.iterdir()):
        return None
    return f"{folder} is a folder with other files in it and no {INDEX}: not an AgentV run folder"


class _Names:
    """Each case's folder, unique in the run (`folder_name`, then `-2`, `-3`, ... on a clash)."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def subdir(self, row: ResultRow) -> str:
        suite = folder_name(row.dataset, "default")
        base = f"{suite}/{folder_name(row.eval_id, 'unknown')}"
        name, count = base, 1
        while name.casefold() in self._used:
            count += 1
            name = f"{base}-{count}"
        self._used.add(name.casefold())
        return name


def _last_rows(rows: Callable[[], Iterable[ResultRow]]) -> Iterator[ResultRow]:
    """The last row of each case and target (AgentV's `deduplicateByTestIdTarget`: a resumed
    run's file has a case's retried row after its first), in the order of the file; two passes."""
    last: dict[tuple[str, str], int] = {}
    for position, row in enumerate(rows()):
        last[(row.eval_id, row.target)] = position
    for position, row in enumerate(rows()):
        if last.get((row.eval_id, row.target)) == position:
            yield row


def _write(path: Path, data: bytes) -> None:
    """Write a file, never through a symbolic link (one left in an earlier run folder)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _make_dirs(folder: Path, subdir: str) -> Path:
    """`folder/subdir/outputs`, made one level at a time, never through a symbolic link."""
    path = folder
    for part in [*subdir.split("/"), "outputs"]:
        path = path / part
        if path.is_symlink():
            raise OSError(f"{path} is a symbolic link: a run folder's files stay in it")
        path.mkdir(exist_ok=True)
    return path


def write_agentv_run(rows: Callable[[], Iterable[ResultRow]], folder: Path, *, eval_file: str = "") -> int:
    """Write the run folder (the module docstring) of the rows `rows()` gives (asked twice);
    returns the number of cases. OSError when a file cannot be written; index.jsonl is written
    last, whole (a folder left half-written has none, or its earlier one)."""
    folder.mkdir(parents=True, exist_ok=True)
    names = _Names()
    benchmark = Benchmark(eval_file)
    partial = folder / f".{INDEX}.partial"
    count = 0
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as index:
        for row in _last_rows(rows):
            subdir = names.subdir(row)
            outputs = _make_dirs(folder, subdir)
            test_dir = outputs.parent
            _write(test_dir / "grading.json", _dumps(grading(row), indent=True) + b"\n")
            _write(test_dir / "timing.json", _dumps(timing([row]), indent=True) + b"\n")
            has_answer = bool(row.candidate_answer)
            if has_answer:
                answer = (row.candidate_answer or "").encode("utf-8", "replace")
                _write(outputs / "answer.md", answer)
                _write(outputs / "response.md", answer)
            index.write(_dumps(index_entry(row, subdir, has_answer)) + b"\n")
            benchmark.add(row)
            count += 1
    _write(folder / "timing.json", _dumps(benchmark.totals, indent=True) + b"\n")
    _write(folder / "benchmark.json", _dumps(benchmark.document(), indent=True) + b"\n")
    os.replace(partial, folder / INDEX)
    return count
