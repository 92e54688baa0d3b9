"""`agentv explain`'s terminal view (pure: a row, its evaluator configs and sources, a console).

A case: its score, each evaluator's score, weight and share of the case score, every
`field_accuracy` field in one table, and for judges what they were sent (summarised) and what
they replied. A field: raw and normalised expected and got, the matcher and each option with
where it came from, score, weight, its share of the case score and what it cost; for `match:
items`, the similarity matrix, the assignment and the unmatched items (`report.explain_items`).
Every value from a run is printed as text (`visible`, `rich.text.Text`), never as markup, and
shortened unless `full`; every line is wrapped between words (`report.explain_text.Say`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentv_py.models.conversation import TRANSCRIPT_TYPE, TURN_TYPE
from agentv_py.models.evaluators import CodeJudgeConfig, EvaluatorConfig
from agentv_py.models.field_results import FieldOutcome, to_details
from agentv_py.models.fields import DEFAULT_DATE_FORMATS
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.explain_items import render_items
from agentv_py.report.explain_text import Say, cut_text, shown
from agentv_py.report.explain_text import num as _num
from agentv_py.report.layout import Column, print_table
from agentv_py.report.text import visible
from agentv_py.scoring.dates import parse_date
from agentv_py.scoring.match import normalize_text, to_number

DETAIL_KEYS = 12  # keys of a judge's details listed
STDERR_LINES = 10  # lines of a target's stderr a case view shows (all with --full)


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
    runs: list[ResultRow] = field(default_factory=list)  # a repeated run: every run of the case (`row` is one)


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


def _say_mark(say: Say, row: ResultRow) -> None:
    """An `xfail:` case's mark and reason: XFAIL (it did not pass, as expected) or XPASS."""
    outcome = row.expected_outcome
    if outcome == "xfail":
        say(row.xfail or "", "XFAIL: ")
    elif outcome == "xpass":
        say(f"{row.xfail} (it passed: the xfail: mark may be stale)", "XPASS: ")


def say_runs(say: Say, runs: list[ResultRow], row: ResultRow) -> None:
    from agentv_py.report.repeats import run_lines

    for line in run_lines(runs, row):
        say(line)


def render_case(console: Any, explained: Explained, full: bool = False) -> None:
    from rich.text import Text

    row = explained.row
    say = Say(console)
    say(f"case {row.eval_id}: {row.status}, {row.verdict}, score {row.score:.3f}")
    if explained.runs:
        say_runs(say, explained.runs, row)
    _say_mark(say, row)
    say(f"target {row.target}, {row.duration_ms:.0f} ms, {row.attempts} attempt{'s' if row.attempts != 1 else ''}")
    if row.error:
        say(shown(row.error, full), "error: ")
    if row.trace.stderr:
        lines = row.trace.stderr.splitlines()
        kept = lines if full else lines[-STDERR_LINES:]
        left = f"; {len(lines) - len(kept)} earlier lines with --full" if len(kept) < len(lines) else ""
        say(f"the target's stderr (its last {len(kept)} line{'s' if len(kept) != 1 else ''}{left}):")
        for line in kept:
            say(line, "| ", "  ")  # each line made terminal-safe and wrapped by `say`
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
    print_table(console, f"Evaluators (case score = {_how_scored(results)})", columns, table)
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
            _render_judge(say, result, explained.sources[index], explained, full, _answer_sent(row, result))


def _how_scored(results: list[EvaluatorResult]) -> str:
    """How the row's score came from its results: a weighted mean, or a conversation's aggregation."""
    how = next((r.details.get("aggregation") for r in results if r.type == TURN_TYPE), None)
    if how is None:
        return "weighted mean of their scores"
    return f"{how} of the turn scores and the conversation's" if how in ("mean", "min", "max") else "weighted mean"


def _answer_sent(row: ResultRow, result: EvaluatorResult) -> str:
    """What `result` scored: the case's answer; a conversation turn's own answer (its place among
    the answers of `output_messages`); the whole conversation for the transcript's evaluators."""
    answers = [
        m.get("content") for m in row.output_messages or [] if isinstance(m, dict) and m.get("role") == "assistant"
    ]
    if result.type == TURN_TYPE and result.name.startswith("turn-") and result.name[5:].isdigit():
        number = int(result.name[5:])
        found = answers[number - 1] if 0 < number <= len(answers) else None
        return found if isinstance(found, str) else ""
    if result.type == TRANSCRIPT_TYPE:
        return f"(the whole conversation, {len(row.output_messages or [])} messages)"
    return row.candidate_answer or ""


def _say_sources(say: Say, explained: Explained) -> None:
    if explained.why_no_dataset is not None:
        say(f"dataset not available ({explained.why_no_dataset})", "option sources: ")
    elif explained.dataset_display is not None:
        say(explained.dataset_display, "dataset: ")


def _render_judge(
    say: Say, result: EvaluatorResult, source: EvaluatorSource | None, e: Explained, full: bool, answer: str
) -> None:
    """What a judge (or any evaluator but field_accuracy) was sent (`answer`), summarised, and what it said."""
    say("")
    say(f"{result.name} ({result.type}): {result.status}, score {_num(result.score)}, weight {result.weight:g}")
    if source is not None:
        say(source.where, "config: ", "  ")
        config = source.config
        if isinstance(config, CodeJudgeConfig):
            say(" ".join(config.script) if isinstance(config.script, list) else config.script, "sent to: ", "  ")
        if isinstance(config, LlmJudgeConfig):
            prompt = config.prompt
            kind = "the default prompt" if prompt is None else f"prompt {shown(prompt, False)}"
            say(f"{kind}, target {config.target or '(the default judge)'}", "asked: ", "  ")
    first = answer.splitlines()[0] if answer else ""
    say(f"the answer ({len(answer)} characters; first line {shown(first, full)})", "sent: ", "  ")
    if e.expected is not None:
        say(f"the reference ({shown(e.expected, full)})", "sent: ", "  ")
    if result.reasoning:
        say(shown(result.reasoning, full) if not full else result.reasoning, "replied: ", "  ")
    for line in result.misses[: (None if full else 5)]:
        say(line, "miss: ", "  ")
    keys = list(result.details)
    for key in keys[: (None if full else DETAIL_KEYS)]:
        say(shown(result.details[key], full), f"details.{key}: ", "  ")
    if len(keys) > DETAIL_KEYS and not full:
        say(f"... {len(keys) - DETAIL_KEYS} more details keys (--full)", indent="  ")
    for child in result.evaluator_results:
        _render_judge(say, child, None, e, full, answer)


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
        return json.dumps(value, ensure_ascii=False, sort_keys=True)  # spaced: it wraps between words
    except (TypeError, ValueError, RecursionError):
        return str(value)


def render_field(console: Any, explained: Explained, name: str, full: bool = False, every: bool = False) -> None:
    """One field (`every`: a line-items field's sub-fields with no value on either side listed
    one by one, not folded)."""
    from rich.text import Text

    row = explained.row
    index, result, entry = find_field(row, name)
    say = Say(console)
    source = explained.sources[index] if index < len(explained.sources) else None
    options = source.fields.get(name, {}) if source is not None else {}
    say(f"case {row.eval_id}, field {name} ({result.name}, {result.type})")
    _say_mark(say, row)
    _say_sources(say, explained)
    say(entry.match, "match: ")
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
        say(shown(recorded, full), "options as the row recorded them: ")
    say(shown(entry.expected, full), "expected: ")
    say(shown(entry.actual, full) if entry.answered else "(nothing)", "got:      ")
    if entry.match != "items":
        say(cut_text(normalised(entry, entry.expected, options), full), "expected, normalised: ")
        if entry.answered:
            say(cut_text(normalised(entry, entry.actual, options), full), "got, normalised:      ")
    score = entry.score
    say(f"{entry.status}, score {_num(score)}", "status: ")
    if entry.reason:
        say(entry.reason, "reason: ")
    shares = _shares(list(row.evaluator_results))
    field_share = _field_shares(_entries(result)).get(name, 0.0)
    weight = entry.weight
    case_share = shares[index] * field_share
    lost = case_share * (1 - score) if score is not None else 0.0
    say(
        f"weight {weight}: {field_share:.0%} of the score of evaluator {result.name}, which is {shares[index]:.0%} "
        f"of the case score; this field is {case_share:.1%} of the case score and cost it {lost:.3f}"
    )
    if entry.match == "items":
        render_items(console, say, entry, full, every)
