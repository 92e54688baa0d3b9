"""`agentv explain`'s terminal view (pure: a row, its evaluator configs and sources, a console).

A case: its score, each evaluator's score, weight and share of the case score, every
`field_accuracy` field in one table, and for judges what they were sent (summarised) and what
they replied. A field: raw and normalised expected and got, the matcher and each option with
where it came from, score, weight, its share of the case score and what it cost; for `match:
items`, the similarity matrix, the assignment and the unmatched items. Every value from a run is
printed as text (`visible`, `rich.text.Text`), never as markup, and shortened unless `full`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentv_py.models.evaluators import CodeJudgeConfig, EvaluatorConfig
from agentv_py.models.field_results import FieldOutcome, to_details
from agentv_py.models.fields import DEFAULT_DATE_FORMATS
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.layout import Column, print_table
from agentv_py.report.render import visible
from agentv_py.scoring.alignment import similarity_matrix
from agentv_py.scoring.dates import parse_date
from agentv_py.scoring.match import normalize_text, to_number

SHORT = 120  # characters of a value shown without --full
MATRIX = 20  # rows and columns of a similarity matrix shown
DETAIL_KEYS = 12  # keys of a judge's details listed


class ExplainError(Exception):
    """FIELD names no field of the case (a usage error, exit 2)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass
class EvaluatorSource:
    """An evaluator's config as the dataset has it now, where it is written, and for
    `field_accuracy` each field's options: path -> option -> (value, `file:line` or `default`)."""

    config: EvaluatorConfig
    where: str
    fields: dict[str, dict[str, tuple[Any, str]]] = field(default_factory=dict)


@dataclass
class Explained:
    row: ResultRow
    sources: list[EvaluatorSource | None]  # one per top-level evaluator result (None: not known)
    expected: Any  # the case's ground truth from the dataset (None when not known)
    why_no_dataset: str | None
    dataset_display: str | None = None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def shown(value: Any, full: bool) -> str:
    """A value as JSON-ish text, made safe for a terminal, cut to SHORT characters unless `full`."""
    return cut_text(_text(value), full)


STDERR_LINES = 10  # lines of a target's stderr a case view shows (all with --full)


def cut_text(text: str, full: bool) -> str:
    """Text made safe for a terminal, cut to SHORT characters unless `full`."""
    text = visible(text)
    if full or len(text) <= SHORT:
        return text
    return f"{text[:SHORT]}… ({len(text)} characters; --full shows all)"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _shares(results: list[EvaluatorResult]) -> list[float]:
    """Each evaluator's weight share of the case score (skipped ones have none)."""
    weights = [0.0 if r.status == "skipped" else r.weight for r in results]
    total = sum(weights)
    return [w / total if total > 0 else 0.0 for w in weights]


def _field_shares(entries: list[FieldOutcome]) -> dict[str, float]:
    """Each scored field's weight share of its evaluator's score."""
    scored = [e for e in entries if e.score is not None and e.status in ("hit", "miss")]
    total = sum(e.weight or 0.0 for e in scored)
    return {e.path: ((e.weight or 0.0) / total if total > 0 else 0.0) for e in scored}


def _entries(result: EvaluatorResult) -> list[FieldOutcome]:
    return result.field_outcomes()


def fields_of(row: ResultRow) -> Iterator[tuple[int, EvaluatorResult, FieldOutcome]]:
    """(evaluator index, result, field entry) for every field_accuracy field of the row."""
    for index, result in enumerate(row.evaluator_results):
        for entry in _entries(result):
            yield index, result, entry


# ----------------------------------------------------------------------------- a case


def render_case(console: Any, explained: Explained, full: bool = False) -> None:
    from rich.text import Text

    row = explained.row

    def say(text: str) -> None:
        console.print(Text(visible(text)), soft_wrap=True)

    say(f"case {row.eval_id}: {row.status}, {row.verdict}, score {row.score:.3f}")
    say(f"target {row.target}, {row.duration_ms:.0f} ms, {row.attempts} attempt{'s' if row.attempts != 1 else ''}")
    if row.error:
        say(f"error: {shown(row.error, full)}")
    if row.trace.stderr:
        lines = row.trace.stderr.splitlines()
        kept = lines if full else lines[-STDERR_LINES:]
        left = f"; {len(lines) - len(kept)} earlier lines with --full" if len(kept) < len(lines) else ""
        say(f"the target's stderr (its last {len(kept)} line{'s' if len(kept) != 1 else ''}{left}):")
        for line in kept:
            say(f"  | {line}")  # each line made terminal-safe by `say`
    _say_sources(say, explained)
    results = list(row.evaluator_results)
    shares = _shares(results)
    columns = [Column(name) for name in ("evaluator", "type", "status")]
    columns += [Column(name, justify="right") for name in ("score", "weight", "share", "cost")]
    table: list[list[Text | str]] = []
    for result, share in zip(results, shares, strict=True):
        cost = share * (1 - (result.score or 0.0)) if result.status != "skipped" else 0.0
        table.append(
            [
                Text(visible(result.name)),
                Text(visible(result.type)),
                result.status,
                _num(result.score),
                f"{result.weight:g}",
                f"{share:.0%}",
                f"{cost:.3f}",
            ]
        )
    print_table(console, "Evaluators (case score = weighted mean of their scores)", columns, table)
    say("share: the evaluator's weight over all weights; cost: what it took off the case score (share × (1 - score))")
    rows = list(fields_of(row))
    if rows:
        columns = [Column(name) for name in ("field", "evaluator", "match", "status", "score", "share")]
        columns += [Column(name, wrap=True) for name in ("expected", "got", "reason")]
        fields: list[list[Text | str]] = []
        field_shares: dict[int, dict[str, float]] = {}  # per evaluator, once: linear in the fields
        for index, result, entry in rows:
            if index not in field_shares:
                field_shares[index] = _field_shares(_entries(result))
            share = shares[index] * field_shares[index].get(entry.path, 0.0)
            fields.append(
                [
                    Text(visible(entry.path)),
                    Text(visible(result.name)),
                    Text(visible(entry.match)),
                    Text(visible(entry.status)),
                    _num(entry.score),
                    f"{share:.0%}",
                    Text(shown(entry.expected, full)),
                    Text(shown(entry.actual, full) if entry.answered else "(nothing)"),
                    Text(visible(entry.reason or "")),
                ]
            )
        print_table(console, "Fields", columns, fields)
        say("agentv explain RESULTS CASE FIELD shows one field: its options and their sources, normalised values")
    for index, result in enumerate(results):
        if result.type != "field_accuracy":
            _render_judge(say, result, explained.sources[index], explained, full)


def _say_sources(say: Any, explained: Explained) -> None:
    if explained.why_no_dataset is not None:
        say(f"option sources: dataset not available ({explained.why_no_dataset})")
    elif explained.dataset_display is not None:
        say(f"dataset: {explained.dataset_display}")


def _render_judge(say: Any, result: EvaluatorResult, source: EvaluatorSource | None, e: Explained, full: bool) -> None:
    """What a judge (or any evaluator but field_accuracy) was sent, summarised, and what it said."""
    row = e.row
    say("")
    say(f"{result.name} ({result.type}): {result.status}, score {_num(result.score)}, weight {result.weight:g}")
    if source is not None:
        say(f"  config: {source.where}")
        config = source.config
        if isinstance(config, CodeJudgeConfig):
            say(f"  sent to: {' '.join(config.script) if isinstance(config.script, list) else config.script}")
        if isinstance(config, LlmJudgeConfig):
            prompt = config.prompt
            kind = "the default prompt" if prompt is None else f"prompt {shown(prompt, False)}"
            say(f"  asked: {kind}, target {config.target or '(the default judge)'}")
    answer = row.candidate_answer or ""
    first = answer.splitlines()[0] if answer else ""
    say(f"  sent: the answer ({len(answer)} characters; first line {shown(first, full)})")
    if e.expected is not None:
        say(f"  sent: the reference ({shown(e.expected, full)})")
    if result.reasoning:
        say(f"  replied: {shown(result.reasoning, full) if not full else visible(result.reasoning)}")
    for line in result.misses[: (None if full else 5)]:
        say(f"  miss: {visible(line)}")
    keys = list(result.details)
    for key in keys[: (None if full else DETAIL_KEYS)]:
        say(f"  details.{visible(str(key))}: {shown(result.details[key], full)}")
    if len(keys) > DETAIL_KEYS and not full:
        say(f"  ... {len(keys) - DETAIL_KEYS} more details keys (--full)")
    for child in result.evaluator_results:
        _render_judge(say, child, None, e, full)


# ----------------------------------------------------------------------------- a field


def find_field(row: ResultRow, name: str) -> tuple[int, EvaluatorResult, FieldOutcome]:
    """The field named `name` (its path); ExplainError listing the case's fields."""
    found = [(i, r, entry) for i, r, entry in fields_of(row) if entry.path == name]
    if found:
        return found[0]
    paths = list(dict.fromkeys(entry.path for _, _, entry in fields_of(row)))
    listed = ", ".join(paths) if paths else "none (no field_accuracy result)"
    raise ExplainError(f"case '{row.eval_id}' has no field '{name}'", hint=f"its fields: {listed}")


def normalised(entry: FieldOutcome, value: Any, options: Mapping[str, tuple[Any, str]]) -> str:
    """The value as the field's matcher compares it."""
    match = entry.match
    if match == "fuzzy" and isinstance(value, str):
        case_sensitive = bool(options.get("case_sensitive", (False, ""))[0])
        return json.dumps(normalize_text(value, case_sensitive), ensure_ascii=False) + (
            "" if case_sensitive else " (NFKC, whitespace collapsed, casefolded)"
        )
    if match == "numeric_tolerance":
        number = to_number(value)
        return f"{number!r}" if isinstance(number, float) else f"not a number ({number})"
    if match == "date":
        formats = options.get("formats", (list(DEFAULT_DATE_FORMATS), ""))[0] or list(DEFAULT_DATE_FORMATS)
        iso = parse_date(value, ())
        if iso is not None:  # ISO 8601 is read first, whatever the formats
            return f"{iso.isoformat()} (ISO 8601)"
        for fmt in formats:
            day = parse_date(value, (fmt,))
            if day is not None:
                return f"{day.isoformat()} (format {fmt})"
        return f"no date in the formats {', '.join(formats)}"
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return str(value)


def render_field(console: Any, explained: Explained, name: str, full: bool = False) -> None:
    from rich.text import Text

    row = explained.row
    index, result, entry = find_field(row, name)

    def say(text: str) -> None:
        console.print(Text(visible(text)), soft_wrap=True)

    source = explained.sources[index] if index < len(explained.sources) else None
    options = source.fields.get(name, {}) if source is not None else {}
    say(f"case {row.eval_id}, field {name} ({result.name}, {result.type})")
    _say_sources(say, explained)
    say(f"match: {entry.match}")
    if options:
        columns = [Column("option"), Column("value", wrap=True), Column("from")]
        table: list[list[Text | str]] = [
            [option, Text(shown(value, True)), Text(visible(where))] for option, (value, where) in options.items()
        ]
        print_table(console, "Options", columns, table)
    else:
        recorded = to_details(entry)
        for key in ("path", "expected", "actual", "status", "score", "reason"):
            recorded.pop(key, None)
        say(f"options as the row recorded them: {shown(recorded, full)}")
    say(f"expected: {shown(entry.expected, full)}")
    say(f"got:      {shown(entry.actual, full) if entry.answered else '(nothing)'}")
    if entry.match != "items":
        say(f"expected, normalised: {cut_text(normalised(entry, entry.expected, options), full)}")
        if entry.answered:
            say(f"got, normalised:      {cut_text(normalised(entry, entry.actual, options), full)}")
    score = entry.score
    say(f"status: {entry.status}, score {_num(score)}")
    if entry.reason:
        say(f"reason: {visible(entry.reason)}")
    shares = _shares(list(row.evaluator_results))
    field_share = _field_shares(_entries(result)).get(name, 0.0)
    weight = entry.weight
    case_share = shares[index] * field_share
    lost = case_share * (1 - score) if score is not None else 0.0
    say(
        f"weight {weight}: {field_share:.0%} of {result.name}'s score, which is {shares[index]:.0%} of the case "
        f"score; this field is {case_share:.1%} of the case score and cost it {lost:.3f}"
    )
    if entry.match == "items":
        _render_items(console, say, entry, full)


def _render_items(console: Any, say: Any, entry: FieldOutcome, full: bool) -> None:
    from rich.text import Text

    alignment = entry.alignment
    expected, actual = entry.expected, entry.actual
    if alignment is None or not isinstance(expected, list):
        return
    key = alignment.key or ["description"]
    say(f"items: paired by {', '.join(key)} (threshold {alignment.threshold}, {alignment.algorithm})")
    answer = actual if isinstance(actual, list) else []
    objects = [j for j, item in enumerate(answer) if isinstance(item, dict)]
    if expected and objects:
        matrix = similarity_matrix(expected, [answer[j] for j in objects], key)
        say("similarity of the keys (rows: expected items, columns: answer items):")
        shown_cols = objects[:MATRIX]
        columns = [Column(""), *(Column(f"[{j}]", justify="right") for j in shown_cols)]
        table = [
            [f"[{i}]", *(f"{value:.2f}" for value in similarities[: len(shown_cols)])]
            for i, similarities in enumerate(matrix[:MATRIX])
        ]
        print_table(console, None, columns, table)
        left = max(len(expected) - MATRIX, 0), max(len(objects) - MATRIX, 0)
        if any(left):
            say(f"({left[0]} expected and {left[1]} answer items not shown)")
    say("assignment:")
    for pair in alignment.pairs:
        say(
            f"  expected[{pair.expected}] ~ answer[{pair.actual}]: similarity {pair.similarity}, "
            f"{pair.status}, score {pair.score}"
        )
        for sub in pair.fields:
            line = f"    {sub.path}: {sub.status}, expected {shown(sub.expected, full)}"
            line += f", got {shown(sub.actual, full)}" if sub.status != "hit" else ""
            say(line + (f" ({sub.reason})" if sub.reason else ""))
    for label, ids, items in (("missing", alignment.missing, expected), ("extra", alignment.extra, answer)):
        for i in ids:
            value = items[i] if 0 <= i < len(items) else None
            console.print(Text(visible(f"  {label} [{i}]: ") + shown(value, full)))
    if alignment.truncated:
        say("  (the row lists the first pairs only)")
