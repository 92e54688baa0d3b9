"""The results-file reader of `agentv metrics` and `agentv compare`: rows read straight from
orjson's dicts, only the parts the two commands use, without building the pydantic row models.

Same rows, same values, same errors as `jsonl.read_rows`, by construction: a line is read here
only when its dict is one `ResultRow.model_validate` certainly accepts (every field of the row,
its trace and its evaluator results, nested ones included, of exactly the JSON type the model
takes, no coercion needed), and the values used are those the model would hold. Anything else
(a line that is not JSON, a malformed or coerced value, a digit run orjson could read inexactly,
nesting near `MAX_DEPTH`) goes through `jsonl.row_of_line`, the one reader: the same row model or
the same error text. `details.fields` entries are checked the same way against
`models.field_results.FieldOutcome`; an entry of another shape (`match: items`, a coerced value)
is read by the model (`read_field`), and one the model refuses is left out, as `read_fields` does.

Profiled on 100k field_accuracy rows: the row models and field outcomes were 3 of the 4 seconds
above the JSON parse (docs/performance.md, "Metrics")."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from agentv_py.models.field_results import FieldOutcome, read_field
from agentv_py.models.results import ResultRow
from agentv_py.report.bounds import MAX_DEPTH
from agentv_py.report.jsonl import _LONG_RUN, row_lines, row_of_line
from agentv_py.scoring.metrics import (
    SCORED,
    Counts,
    FieldKey,
    field_counts_of,
    iou_counts,
    row_field_counts,
    walk_fields,
    walk_results,
)

_NONE = type(None)
_SCALARS = frozenset((str, int, float, bool, _NONE))  # a metadata value the row model takes as it is


def _types(*kinds: type) -> frozenset[type]:
    return frozenset(kinds)


_STR, _STR_OR_NONE = _types(str), _types(str, _NONE)
_NUMBER, _NUMBER_OR_NONE = _types(int, float), _types(int, float, _NONE)
_INT, _INT_OR_NONE = _types(int), _types(int, _NONE)
_BOOL, _BOOL_OR_NONE = _types(bool), _types(bool, _NONE)
_LIST, _LIST_OR_NONE = _types(list), _types(list, _NONE)
_DICT, _DICT_OR_NONE = _types(dict), _types(dict, _NONE)
_ONLY_NONE = _types(_NONE)

# The JSON types each model field takes as it is (models/results.py, models/field_results.py).
_ROW = {
    **dict.fromkeys(("timestamp", "eval_id", "dataset", "target", "status", "verdict", "reasoning"), _STR),
    **dict.fromkeys(("conversation_id", "candidate_answer", "error", "run_id", "xfail"), _STR_OR_NONE),
    **dict.fromkeys(("score", "duration_ms"), _NUMBER),
    **dict.fromkeys(("hits", "misses", "evaluator_results"), _LIST),
    **dict.fromkeys(("repeat", "rejudge"), _INT_OR_NONE),
    "output_messages": _LIST_OR_NONE,
    "metadata": _DICT_OR_NONE,
    "attempts": _INT,
    "trace": _DICT,
}
_ROW_REQUIRED = frozenset(("timestamp", "eval_id", "dataset", "target", "status", "score", "verdict"))
_TRACE = {
    **dict.fromkeys(("duration_ms", "cost_usd", "judge_duration_ms"), _NUMBER_OR_NONE),
    **dict.fromkeys(("model", "batch", "cache", "stderr"), _STR_OR_NONE),
    "token_usage": _DICT_OR_NONE,
    "judge_token_usage": _DICT_OR_NONE,
    "http_attempts": _INT_OR_NONE,
}
_RESULT = {
    **dict.fromkeys(("name", "type", "status", "reasoning"), _STR),
    "score": _NUMBER_OR_NONE,
    "passed": _BOOL,
    "verdict": _STR_OR_NONE,
    "weight": _NUMBER,
    "hits": _LIST,
    "misses": _LIST,
    "details": _DICT,
    "evaluator_results": _LIST,
}
_RESULT_REQUIRED = frozenset(("name", "type", "status", "score", "passed", "verdict"))
_FIELD = {
    **dict.fromkeys(("path", "match", "status"), _STR),
    **dict.fromkeys(
        ("reason", "algorithm", "parsed", "expected_date", "formats_tried", "note", "matcher"), _STR_OR_NONE
    ),
    **dict.fromkeys(
        ("score", "diff", "relative_diff", "tolerance", "similarity", "threshold", "confidence"), _NUMBER_OR_NONE
    ),
    **dict.fromkeys(("items", "alignment", "values"), _ONLY_NONE),  # set: read by the model
    "weight": _NUMBER,
    "critical": _BOOL,
    "relative": _BOOL_OR_NONE,
    "count": _INT_OR_NONE,
    "expected_count": _INT_OR_NONE,
}
_FIELD_REQUIRED = frozenset(("path", "status"))
_NOTHING: frozenset[str] = frozenset()
_CASE_STATUSES = frozenset(("ok", "error"))
_VERDICTS = frozenset(("pass", "partial", "fail"))
_RESULT_STATUSES = frozenset(("processed", "error", "skipped"))
_RESULT_VERDICTS = frozenset((None, "pass", "partial", "fail"))
_FIELD_STATUSES = frozenset(("hit", "miss", "not scored", "could not score"))
_SCORED = frozenset(SCORED)
_EXACT_FLOAT = 2**53  # an integer score up to this is the float the model would make of it


_SHAPES_KEPT = 4096  # shapes remembered (a file of ever new shapes is checked key by key)
_shapes: dict[tuple[Any, ...], bool] = {}


def _typed(value: dict[str, Any], types: Mapping[str, frozenset[type]], required: frozenset[str]) -> bool:
    """Has `value` every key of `required`, and is each of its keys in `types` of a type listed
    there? Decided once per shape (its keys and their values' types, in order): the rows of one
    file share a few shapes."""
    shape = (id(types), *value, *map(type, value.values()))  # keys are str, the rest types: unambiguous
    known = _shapes.get(shape)
    if known is not None:
        return known
    get = types.get
    fits = required <= value.keys() and all(
        (allowed := get(key)) is None or type(item) in allowed for key, item in value.items()
    )
    if len(_shapes) < _SHAPES_KEPT:
        _shapes[shape] = fits
    return fits


def _all_strings(value: dict[str, Any]) -> bool:
    """Are `hits` and `misses` (lists, when there) lists of str? (orjson's strings are exactly
    str, which `join` takes, and nothing else.)"""
    try:
        "".join(value.get("hits") or ())
        "".join(value.get("misses") or ())
    except TypeError:
        return False
    return True


def _result_fits(result: Any) -> bool:
    """An evaluator result `EvaluatorResult.model_validate` takes as it is (children included)."""
    if type(result) is not dict or not _typed(result, _RESULT, _RESULT_REQUIRED):
        return False
    if result["status"] not in _RESULT_STATUSES or result["verdict"] not in _RESULT_VERDICTS:
        return False
    if not _all_strings(result):
        return False
    children = result.get("evaluator_results")
    return not children or all(_result_fits(child) for child in children)


def _row_fits(row: Any) -> bool:
    """A row `ResultRow.model_validate` takes as it is, with the score the float it would hold."""
    if type(row) is not dict or not _typed(row, _ROW, _ROW_REQUIRED):
        return False
    score = row["score"]
    if row["status"] not in _CASE_STATUSES or row["verdict"] not in _VERDICTS:
        return False
    if type(score) is int and not -_EXACT_FLOAT <= score <= _EXACT_FLOAT:
        return False
    # a run or scoring below 1 (`ResultRow.repeat`), metadata not all scalars: the model's to refuse, in its words
    if not _all_strings(row) or any(type(i) is int and i < 1 for i in (row.get("repeat"), row.get("rejudge"))):
        return False
    if (metadata := row.get("metadata")) and not all(type(v) in _SCALARS for v in metadata.values()):
        return False
    trace = row.get("trace")
    if trace is not None:
        if not _typed(trace, _TRACE, _NOTHING) or trace.get("cache") not in (None, "hit", "miss"):
            return False
        usage = trace.get("judge_token_usage")
        if usage is not None and not {*map(type, usage.values())} <= _INT:
            return False
    results = row.get("evaluator_results")
    return not results or all(_result_fits(result) for result in results)


class LeanRow:
    """What metrics and compare use of a row: read from its dict (`results`: evaluator results
    that fit the model, as dicts), or the row model (`model`) when the line took the full reader."""

    __slots__ = ("eval_id", "metadata", "model", "rejudge", "repeat", "results", "score", "status", "verdict")

    def __init__(self, eval_id: str, status: str, score: float, verdict: str, results: list[Any]) -> None:
        self.eval_id, self.status, self.score, self.verdict, self.results = eval_id, status, score, verdict, results
        # `--repeat`'s run, `--rejudge`'s scoring, the case's `metadata:` (set by the reader)
        self.repeat: int | None = None
        self.rejudge: int | None = None
        self.metadata: dict[str, Any] | None = None
        self.model: ResultRow | None = None

    @classmethod
    def of_model(cls, row: ResultRow) -> LeanRow:
        lean = cls(row.eval_id, row.status, row.score, row.verdict, row.evaluator_results)
        lean.model, lean.repeat, lean.rejudge, lean.metadata = row, row.repeat, row.rejudge, row.metadata
        return lean


# every digit made "0", `[` and `{` made "[", every other byte a space: one pass finds both a run of
# 19 digits (2**63 has 19; `jsonl._DIGITS_ONLY`) and how many arrays and objects the line opens
_DIGITS_AND_OPENS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x5B if b in (0x5B, 0x7B) else 0x20 for b in range(256))


def lean_row(line: bytearray) -> LeanRow | str:
    """A row line as a `LeanRow` (or why it is not a row)."""
    marks = line.translate(_DIGITS_AND_OPENS)
    if marks.count(b"[") <= MAX_DEPTH and _LONG_RUN not in marks:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            value = None
        if _row_fits(value):
            get = value.get
            lean = LeanRow(
                get("eval_id"), get("status"), float(get("score")), get("verdict"), get("evaluator_results", [])
            )
            lean.repeat, lean.rejudge, lean.metadata = get("repeat"), get("rejudge"), get("metadata")
            return lean
    row = row_of_line(line)
    return row if isinstance(row, str) else LeanRow.of_model(row)


def read_lean_rows(path: str | Path, max_line: int | None = None) -> Iterator[tuple[int, LeanRow | str]]:
    """`jsonl.read_rows`, each row a `LeanRow`: (line number, row or why the line is not one)."""
    for number, line in row_lines(path, max_line):
        yield number, line if isinstance(line, str) else lean_row(line)


# ----------------------------------------------------------------------------- fields and counts

Field = dict[str, Any] | FieldOutcome  # an entry that fits the model as it is, or the model read


def lean_fields(details: Mapping[str, Any]) -> list[Field]:
    """`read_fields`: a `field_accuracy` result's entries that fit `FieldOutcome`, in order."""
    entries = details.get("fields")
    if not isinstance(entries, list):
        return []
    found: list[Field] = []
    for entry in entries:
        if (
            isinstance(entry, dict)
            and _typed(entry, _FIELD, _FIELD_REQUIRED)
            and entry["status"] in _FIELD_STATUSES
            and entry.get("match") != "items"
        ):
            found.append(entry)
        elif (model := read_field(entry)) is not None:
            found.append(model)
    return found


def _empty(value: Any) -> bool:
    """`scoring.paths.is_empty` of a JSON value (a str, list or dict is exactly that type here)."""
    kind = type(value)
    if kind is str:
        return not value.strip()
    return not value if kind is list or kind is dict else value is None


Quad = tuple[int, int, int, int]  # tp, tn, fp, fn
_TP, _TN, _FP, _FN, _FP_FN = (1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0, 0, 1, 1)


def _outcome(entry: dict[str, Any]) -> Quad | None:
    """`scoring.metrics.field_counts_of` of a plain field (`match` is not items) as it read it."""
    status = entry["status"]
    if status not in _SCORED:
        return None
    if _empty(entry.get("expected")):
        return _TN if _empty(entry.get("actual")) else _FP
    if _empty(entry.get("actual")):
        return _FN
    if status == "hit":
        return _TP
    return _FP_FN if status == "miss" else None


def _counts(entry: Field) -> Counts | None:
    """`scoring.metrics.field_counts_of`, a fresh `Counts`."""
    if not isinstance(entry, dict):
        return field_counts_of(entry)
    found = _outcome(entry)
    return None if found is None else Counts(*found)


def _walk(results: list[Any], fit: bool) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """`scoring.metrics.walk_results` over dicts: `fit`, evaluator results that fit the model
    (their members next), else dicts a judge nested in `details.evaluator_results`."""
    for result in results:
        if fit:
            name, kind, details = result["name"], result["type"], result.get("details", {})
        elif isinstance(result, dict) and isinstance(result.get("details"), dict):
            name, kind, details = str(result.get("name", "")), str(result.get("type", "")), result["details"]
        else:
            continue
        yield name, kind, details
        if fit and "evaluator_results" in result:
            yield from _walk(result["evaluator_results"], True)
        nested = details.get("evaluator_results")
        if isinstance(nested, list):
            yield from _walk(nested, False)


def walk_row(row: LeanRow) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(name, type, details) of every evaluator result of the row, nested ones included."""
    if row.model is not None:
        yield from walk_results(row.model.evaluator_results)
    else:
        yield from _walk(row.results, True)


def field_counts(row: LeanRow, problems: list[str] | None = None) -> dict[FieldKey, Counts]:
    """`scoring.metrics.row_field_counts` of the row."""
    if row.model is not None:
        return row_field_counts(row.model.evaluator_results, problems)
    per_field: dict[FieldKey, Counts] = {}
    for name, kind, details in _walk(row.results, True):
        metrics = details.get("metrics")
        if isinstance(metrics, dict):
            # a judge's counts: read by the one reader (its problems described as it describes them)
            counted = row_field_counts([{"name": name, "type": kind, "details": {"metrics": metrics}}], problems)
            _add_all(per_field, counted)
        elif kind == "field_accuracy":
            for entry in lean_fields(details):
                counts = _counts(entry)
                if counts is not None:
                    _add(per_field, (name, entry["path"] if isinstance(entry, dict) else entry.path), counts)
        elif kind == "iou_score":
            found = iou_counts(details)
            if found is not None:
                _add(per_field, (name, name), found)
    return per_field


def _add(per_field: dict[FieldKey, Counts], key: FieldKey, counts: Counts) -> None:
    known = per_field.get(key)
    if known is None:
        per_field[key] = counts  # fresh: kept, not copied
    else:
        known += counts


def _add_all(per_field: dict[FieldKey, Counts], more: dict[FieldKey, Counts]) -> None:
    for key, counts in more.items():
        _add(per_field, key, counts)


def statuses_and_counts(
    row: LeanRow, status_of: Mapping[str, int], other: int
) -> tuple[dict[FieldKey, int], dict[FieldKey, Quad]]:
    """For `agentv compare`, in one walk: (evaluator, field) -> how `field_accuracy` scored it
    (`status_of` the status, else `other`), and `field_counts` as (tp, tn, fp, fn)."""
    statuses: dict[FieldKey, int] = {}
    if row.model is not None:
        for name, outcome in walk_fields(row.model.evaluator_results):
            statuses[(name, outcome.path)] = status_of.get(outcome.status, other)
        return statuses, {key: c.as_tuple() for key, c in row_field_counts(row.model.evaluator_results).items()}
    per_field: dict[FieldKey, Quad] = {}
    for name, kind, details in _walk(row.results, True):
        metrics = details.get("metrics")
        entries = lean_fields(details) if kind == "field_accuracy" else []
        counted = not isinstance(metrics, dict)
        for entry in entries:
            if isinstance(entry, dict):
                key, found = (name, entry["path"]), _outcome(entry) if counted else None
                statuses[key] = status_of.get(entry["status"], other)
            else:
                key, model = (name, entry.path), field_counts_of(entry) if counted else None
                statuses[key] = status_of.get(entry.status, other)
                found = None if model is None else model.as_tuple()
            if found is not None:
                known = per_field.get(key)
                per_field[key] = found if known is None else _plus(known, found)
        if not counted:
            for key, counts in row_field_counts(
                [{"name": name, "type": kind, "details": {"metrics": metrics}}]
            ).items():
                known = per_field.get(key)
                per_field[key] = counts.as_tuple() if known is None else _plus(known, counts.as_tuple())
        elif kind == "iou_score" and (box := iou_counts(details)) is not None:
            known = per_field.get((name, name))
            per_field[(name, name)] = box.as_tuple() if known is None else _plus(known, box.as_tuple())
    return statuses, per_field


def _plus(a: Quad, b: Quad) -> Quad:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])
