"""The results file `agentv rescore` scores again: its lines scanned once (case ids, run ids, what
cannot be read), whether a manifest speaks for its rows, the judge the old run used by default,
and its stored answers replayed as the target's (`StoredAnswers`: no target is ever called)."""

from __future__ import annotations

import json
import threading
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentv_py.errors import TargetError
from agentv_py.models.manifest import RunManifest
from agentv_py.models.model_targets import AZURE_PROVIDERS, GEMINI_PROVIDERS
from agentv_py.models.results import ResultRow
from agentv_py.prepared import PreparedCase
from agentv_py.report.bounds import MAX_LINE_BYTES
from agentv_py.report.jsonl import row_lines, row_of_line
from agentv_py.runner.outcome import TargetOutcome

IDS_SHOWN = 10  # case ids listed in one message before ", ..."
_MODEL_PROVIDERS = frozenset(("openai", "anthropic", *AZURE_PROVIDERS, *GEMINI_PROVIDERS))
_TRACE_KEYS = ("duration_ms", "token_usage", "cost_usd", "model", "http_attempts")


@dataclass
class _Scan:
    """What a quick pass over the results file found, line by line."""

    last: dict[str, int] = field(default_factory=dict)  # case id -> the line of its last row
    repeated: dict[str, int] = field(default_factory=dict)  # case id -> rows, of those with more than one
    skipped: list[tuple[int, str]] = field(default_factory=list)  # lines that are no row, and why
    truncated: int | None = None  # the last line, cut short (no newline, not JSON)
    run_ids: set[str] = field(default_factory=set)
    unmarked: int = 0  # rows without a run id
    datasets: set[str] = field(default_factory=set)
    target: str | None = None
    # a repeated run's rows (`repeat`, `rejudge`): (case id, run) -> the line of its first scoring
    runs: dict[tuple[str, int], int] = field(default_factory=dict)
    first_repeated: int | None = None  # the first line with `repeat` or `rejudge`
    first_single: int | None = None  # the first line without


def _loads(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:  # an integer wider than 64 bits: the standard library reads it
        return json.loads(line)


def scan_rows(path: Path) -> _Scan:
    """Each line's case id, status aside: one JSON parse per line, no row models. Lines are
    numbered as `read_rows` numbers them; a line over MAX_LINE_BYTES is skipped unread."""
    scan = _Scan()
    number = 0
    with path.open("rb") as handle:
        while line := handle.readline(MAX_LINE_BYTES + 1):
            number += 1
            ended = line.endswith(b"\n")
            if not ended and len(line) > MAX_LINE_BYTES:
                while line and not line.endswith(b"\n"):  # read past it, never holding it
                    line = handle.readline(1024 * 1024)
                scan.skipped.append((number, f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB: not read"))
                continue
            if not line.strip():
                continue
            try:
                data = _loads(line)
            except (ValueError, RecursionError) as exc:
                if ended:
                    scan.skipped.append((number, f"not JSON: {exc}"))
                else:
                    scan.truncated = number
                continue
            eval_id = data.get("eval_id") if isinstance(data, dict) else None
            if not isinstance(eval_id, str):
                scan.skipped.append((number, "not a result row: it has no eval_id"))
                continue
            repeat, rejudge = _index(data.get("repeat")), _index(data.get("rejudge"))
            if repeat is not None or rejudge is not None:
                scan.first_repeated = scan.first_repeated or number
                if rejudge in (None, 1):  # a run's answer: its first scoring's row (later ones score it again)
                    scan.runs[(eval_id, repeat or 1)] = number
            else:
                scan.first_single = scan.first_single or number
                if eval_id in scan.last:
                    scan.repeated[eval_id] = scan.repeated.get(eval_id, 1) + 1
            scan.last[eval_id] = number
            run_id, dataset, target = data.get("run_id"), data.get("dataset"), data.get("target")
            if isinstance(run_id, str):
                scan.run_ids.add(run_id)
            else:
                scan.unmarked += 1
            if isinstance(dataset, str):
                scan.datasets.add(dataset)
            if scan.target is None and isinstance(target, str):
                scan.target = target
    return scan


def _index(value: Any) -> int | None:
    """A row's `repeat` or `rejudge` when it is one (a whole number from 1)."""
    return value if type(value) is int and value >= 1 else None


class LineIndex(Mapping[int, str]):
    """Line number -> case id, of the rows a re-score takes (the last row of each case the dataset
    has), held as two arrays in line order: a line number and the case's place in the dataset (its
    id is the dataset's string), not as a map of 100,000 entries."""

    def __init__(
        self,
        last: Mapping[str, int],
        places: Mapping[str, int],
        ids: Sequence[str],
        runs: Mapping[tuple[str, int], int] | None = None,
    ) -> None:
        """`runs`: a repeated run's rows, (case id, run) -> line, taken instead of `last`."""
        taken = (
            sorted((number, places[case_id], repeat) for (case_id, repeat), number in runs.items() if case_id in places)
            if runs
            else sorted((number, places[case_id], 0) for case_id, number in last.items() if case_id in places)
        )
        self._numbers = array("q", (number for number, _, _ in taken))
        self._places = array("q", (place for _, place, _ in taken))
        self._repeats = array("q", (repeat for _, _, repeat in taken))  # 0: not repeated
        self._ids = ids

    @property
    def positions(self) -> list[int]:
        """The cases' places in the dataset, in the order of their rows."""
        return self._places.tolist()

    @property
    def units(self) -> list[tuple[int, int]]:
        """(place in the dataset, run) of a repeated run's rows, in the order of their rows."""
        return list(zip(self._places, self._repeats, strict=True))

    def unit(self, number: int) -> tuple[str, int | None] | None:
        """The case and run (None: not repeated) of the row on line `number`, if the re-score takes it."""
        at = bisect_left(self._numbers, number)
        if at < len(self._numbers) and self._numbers[at] == number:
            return self._ids[self._places[at]], self._repeats[at] or None
        return None

    def get(self, number: int, default: Any = None) -> Any:
        at = bisect_left(self._numbers, number)
        if at < len(self._numbers) and self._numbers[at] == number:
            return self._ids[self._places[at]]
        return default

    def __getitem__(self, number: int) -> str:
        found: str | None = self.get(number)
        if found is None:
            raise KeyError(number)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


def listed_ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:IDS_SHOWN])
    return shown + (", ..." if len(ids) > IDS_SHOWN else "")


def manifest_of(manifest: RunManifest, run_ids: set[str], unmarked: int) -> bool:
    """Whether `manifest` is the one of rows with these run ids: every row is of its run or of a
    run it merged (agentv stamps every row it writes, a reused one included). Rows without run
    ids, from older versions, cannot tell: a file of only those is taken to be its; a mix of
    stamped and unstamped rows is not one run's file."""
    if not run_ids:
        return True
    return not unmarked and run_ids <= {manifest.run_id, *manifest.merged_from}


def run_judge(manifest: RunManifest | None) -> str | None:
    """The default judge of the old run when the dataset does not name one: its --judge-target,
    else its eval target's `judge_target`, else the target itself when it was a model target
    (which judged its own answers). None: nothing recorded."""
    if manifest is None:
        return None
    for recorded in (manifest.options.get("judge_target"), manifest.target.config.get("judge_target")):
        if isinstance(recorded, str) and recorded:
            return recorded
    if manifest.target.provider in _MODEL_PROVIDERS:
        return manifest.target.name
    return None


def stored_outcome(row: ResultRow) -> TargetOutcome:
    """What the target gave for a row, as the run had it: the answer as written (already taken out
    of any envelope), the metrics it reported (`engine.outcome_trace` reads them as it did), its
    `output_messages`. A row whose target failed gives its error (never retried)."""
    if row.status == "error":  # copied as it was (`origin`)
        return TargetOutcome(None, row.error or "target failed", retryable=False, origin=row)
    if row.candidate_answer is None:
        return TargetOutcome(None, "its row has no candidate_answer: nothing to re-score", retryable=False)
    reported = row.trace.model_dump(include=set(_TRACE_KEYS), exclude_none=True)
    return TargetOutcome(
        row.candidate_answer,
        output_messages=row.output_messages,
        trace=reported,
        duration_ms=row.trace.duration_ms or 0.0,
        stderr=row.trace.stderr,
        origin=row,  # what the run measured of its target stands: attempts, duration, batch and cache notes
    )


def _unit(case_id: str | None) -> tuple[str, None] | None:
    return (case_id, None) if case_id is not None else None


class StoredAnswers:
    """A target that answers each case with its row of the results file, read as the run's
    workers ask: rows come in the order the run takes cases (the order of `lines`), so at most one
    row per worker waits here. Each outcome carries the row it came from (`TargetOutcome.origin`)."""

    vision = True
    replays = True  # answers a whole conversation case at once (`runner/conversation.py`)

    def __init__(self, name: str, path: Path, lines: Mapping[int, str]) -> None:
        self.name = name
        self._path = path
        self._lines = lines
        self._rows = self._read()
        self._ready: dict[tuple[str, int | None], ResultRow | str] = {}
        self._lock = threading.Lock()

    def _read(self) -> Iterator[tuple[tuple[str, int | None], ResultRow | str]]:
        units = self._lines.unit if isinstance(self._lines, LineIndex) else None
        for number, line in row_lines(self._path):
            unit = units(number) if units is not None else _unit(self._lines.get(number))
            if unit is not None:  # only the rows the re-score takes are read as rows
                item = line if isinstance(line, str) else row_of_line(line)
                yield unit, item if isinstance(item, ResultRow) else f"line {number}: {item}"

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        key = (case.case.id, case.repeat)  # a repeated run's case: that run's row
        with self._lock:
            while key not in self._ready:
                found = next(self._rows, None)
                if found is None:
                    break
                self._ready[found[0]] = found[1]
            stored = self._ready.pop(key, None)
        if stored is None:
            return TargetOutcome(None, f"its row is no longer in {self._path} (the file changed)", retryable=False)
        if isinstance(stored, str):
            return TargetOutcome(None, f"its row in {self._path} cannot be read: {stored}", retryable=False)
        return stored_outcome(stored)

    def complete(self, messages: list[Any]) -> Any:
        """Never called: stored answers are no judge (the run's judges are targets of their own)."""
        raise TargetError("stored answers cannot judge")
