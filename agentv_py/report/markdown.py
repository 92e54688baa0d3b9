"""A run's Markdown summary (`agentv eval --summary-md`, and `$GITHUB_STEP_SUMMARY` in GitHub Actions).

Totals, the gate, the worst fields (by miss count, from `field_accuracy` details) and the cases
that did not pass with their first misses, all bounded whatever the size of the run. Values are
data: every one goes through `cell`, so a case id or a miss cannot break a table, start a code
span or a link, or inject HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentv_py.models.results import ResultRow
from agentv_py.report.junit import field_outcomes
from agentv_py.report.summary import GateResult, RunSummary
from agentv_py.scoring.intervals import wilson

__all__ = ["FieldTally", "cell", "summary_markdown", "tally_fields"]

FAILED_CASES = 20
MISSES_PER_CASE = 3
WORST_FIELDS = 10
CELL_CHARS = 200

_LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x85\u2028\u2029]")
# control characters, lone surrogates, and the bidi marks, embeddings, overrides and isolates that
# reorder what a reader sees (`report.render` escapes the same on a terminal)
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Markdown punctuation that can start emphasis, a code span, a link or image, strikethrough or a table
# cell anywhere in a line (a cell never starts a line, so `#`, `-`, `+`, `>` do not need it).
_PUNCTUATION = re.compile(r"([\\`*_\[\]~|])")


def cell(value: str, limit: int = CELL_CHARS) -> str:
    """`value` as inert Markdown text on one line: line breaks become a visible `↵`, control
    characters and bidi controls `�`, Markdown punctuation is backslash-escaped and `&`, `<`, `>` are entities."""
    text = _LINE_BREAKS.sub("↵", value)
    text = _CONTROL.sub("\ufffd", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _PUNCTUATION.sub(r"\\\1", text)


@dataclass
class FieldTally:
    """Per field path: cases where `field_accuracy` scored it, and misses among them."""

    scored: int = 0
    misses: int = 0
    errors: int = 0


def tally_fields(rows: Iterable[ResultRow]) -> dict[str, FieldTally]:
    """One pass over the rows; memory grows with the number of field paths only."""
    tallies: dict[str, FieldTally] = {}
    for row in rows:
        for path, outcome in field_outcomes(row).items():
            tally = tallies.setdefault(path, FieldTally())
            if outcome.status in ("hit", "miss"):
                tally.scored += 1
            if outcome.status == "miss":
                tally.misses += 1
            elif outcome.status == "error":
                tally.errors += 1
    return tallies


def summary_markdown(
    summary: RunSummary,
    gate: GateResult,
    fields: dict[str, FieldTally] | None,
    *,
    dataset: str,
    target: str | None = None,
) -> str:
    """The Markdown summary of a run. `fields`: `tally_fields` of its rows (None: not available,
    the rows went to stdout)."""
    title = f"## agentv: {cell(dataset)}" + (f" against {cell(target)}" if target else "")
    verdict = {
        "ok": "✅ gate passed",
        "gate_failed": "❌ gate failed",
        "errors": "⚠️ errors",
        "interrupted": "⏹️ interrupted",
    }.get(gate.outcome, gate.outcome)
    # The gate's rule and message are agentv's own words (counts, the threshold), never data.
    out = [title, "", f"**{verdict}** ({gate.rule})" + (f": {gate.message}" if gate.message else ""), ""]
    if gate.checks:  # names quote field paths and evaluator names: data, escaped
        out += ["| gate | value | limit | result |", "|---|---:|---|---|"]
        for check in gate.checks:
            value = cell(check.shown)
            result = ("✅ passed" if check.passed else "❌ failed") + (
                f": {cell(check.detail)}" if check.detail else ""
            )
            out += [f"| {cell(check.name)} | {value} | {check.op} {check.limit:g} | {result} |"]
        out += [""]
    stats = summary.stats()
    out += ["| cases | passed | partial | failed | target errors | evaluator errors | mean score |"]
    out += ["|---:|---:|---:|---:|---:|---:|---:|"]
    mean = f"{stats.mean:.3f}" if stats is not None else "–"
    out += [
        f"| {summary.completed} | {summary.passed} | {summary.partial} | {summary.failed} | {summary.errored} "
        f"| {summary.evaluator_errors} | {mean} |",
        "",
    ]
    found = summary.headline()
    if found is not None:
        out += [cell(found.shown()), ""]
    repeats = summary.repeat_report()
    if repeats is not None:
        from agentv_py.report.repeats import summary_lines

        out += [f"- {cell(line)}" for line in summary_lines(repeats)] + [""]
    if summary.interrupted:
        out += [f"Interrupted after {summary.completed} of {summary.total_selected} cases.", ""]
    means = summary.evaluator_means()
    if means:
        out += ["| evaluator | mean score |", "|---|---:|"]
        out += [f"| {cell(name)} | {value:.3f} |" for name, value in means.items()]
        out += [""]
    out += _worst_fields(fields)
    out += _failed_cases(summary)
    out += _marked_cases(summary)
    if summary.results_path:
        out += [f"Results: {cell(summary.results_path)}", ""]
    return "\n".join(out)


def _worst_fields(fields: dict[str, FieldTally] | None) -> list[str]:
    if fields is None:
        return []
    worst = sorted(
        ((path, tally) for path, tally in fields.items() if tally.misses or tally.errors),
        key=lambda item: (-item[1].misses, -item[1].errors, item[0]),
    )
    if not worst:
        return ["Every scored field matched.", ""] if fields else []
    out = [f"### Worst fields ({min(len(worst), WORST_FIELDS)} of {len(worst)} with misses)", ""]
    out += ["| field | misses | of scored | miss rate [95%] | could not score |", "|---|---:|---:|---:|---:|"]
    out += [
        f"| {cell(path)} | {tally.misses} | {tally.scored} | {_miss_rate(tally)} | {tally.errors} |"
        for path, tally in worst[:WORST_FIELDS]
    ]
    return [*out, ""]


def _miss_rate(tally: FieldTally) -> str:
    """`0.25 [0.09, 0.53]`: the share of scored cases the field missed, with Wilson's interval."""
    interval = wilson(tally.misses, tally.scored)
    return cell(interval.shown(tally.misses / tally.scored)) if interval is not None else "–"


def _marked_cases(summary: RunSummary) -> list[str]:
    """The cases the dataset marks (`xfail:`, `skip:`) with their reasons: XPASS, XFAIL, SKIPPED."""
    marked = [
        (label, case_id, reason)
        for label, cases in (("XPASS", summary.xpassed), ("XFAIL", summary.xfailed), ("SKIPPED", summary.skipped))
        for case_id, reason in cases
    ]
    if not marked:
        return []
    out = [f"### Marked cases ({len(marked)})", "", "| case | mark | reason |", "|---|---|---|"]
    out += [f"| {cell(case_id)} | {label} | {cell(reason)} |" for label, case_id, reason in marked[:FAILED_CASES]]
    if len(marked) > FAILED_CASES:
        out += ["", f"(+{len(marked) - FAILED_CASES} more)"]
    return [*out, ""]


def _failed_cases(summary: RunSummary) -> list[str]:
    lines = summary.problem_lines[:FAILED_CASES]
    if not lines:
        return []
    out = [f"### Cases that did not pass ({len(lines)} of {summary.problems} shown)", ""]
    out += ["| case | score | verdict | misses |", "|---|---:|---|---|"]
    for line in lines:
        if line.status == "error":
            what = cell(f"error: {line.error or 'the target call failed'}")
            verdict = "error"
        else:
            shown = [cell(str(miss)) for miss in line.misses[:MISSES_PER_CASE]]
            more = line.miss_count - len(shown)
            what = "<br>".join(shown + ([f"(+{more} more)"] if more > 0 else []))
            verdict = line.verdict
        out.append(f"| {cell(line.eval_id)} | {line.score:.3f} | {verdict} | {what} |")
    return [*out, ""]
