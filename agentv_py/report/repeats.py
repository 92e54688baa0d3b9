"""What a repeated run's noise looks like in text (`scoring.repeats.RepeatReport`): the lines the
eval summary, `agentv metrics`, `agentv report` and `agentv explain` show, and the flip table.
Case ids and field names are data: shown through `visible`, never as markup."""

from __future__ import annotations

from typing import Any

from agentv_py.models.results import ResultRow
from agentv_py.report.text import plural, visible
from agentv_py.scoring.intervals import Interval
from agentv_py.scoring.metrics import row_field_counts
from agentv_py.scoring.repeats import FLAKY_SHOWN, MIXED_HINT, Noise, RepeatReport, mixed_message

__all__ = ["MIXED_HINT", "headline", "mixed_message", "noise_lines", "render_flips", "run_lines", "summary_lines"]


def _rate(value: float | None, interval: Interval | None) -> str:
    if value is None:
        return "-"
    return interval.shown(value) if interval is not None else f"{value:.2f}"


def headline(report: RepeatReport) -> str:
    """`3 runs of each of 12 cases: pass^3 0.58 [0.32, 0.81], pass@3 0.92 [...], runs passed 0.78 [...]`."""
    k = report.repeats
    cases = plural(report.complete, "case")
    incomplete = report.cases - report.complete
    parts = [
        f"pass^{k} {_rate(report.pass_all, report.pass_all_interval)}",
        f"pass@{k} {_rate(report.pass_any, report.pass_any_interval)}",
        f"runs passed {_rate(report.pass_rate, report.pass_rate_interval)}",
    ]
    line = f"{plural(k, 'run')} of each of {cases}: " + ", ".join(parts)
    line += f" ({report.level:.0%} intervals over the cases, each with all its runs)"
    if incomplete:
        line += f"; {plural(incomplete, 'case')} with fewer runs left out of pass^{k} and pass@{k}"
    return line


def noise_lines(noise: Noise, what: str, limit: int | None = FLAKY_SHOWN) -> list[str]:
    """`Flaky cases (runs): 2 of 12 flipped: a (2 of 3 passed), b (1 of 3)`; flaky fields likewise."""
    lines = []
    if noise.units:
        shown = noise.flaky if limit is None else noise.flaky[:limit]
        listed = ", ".join(f"{visible(case.eval_id)} ({case.passed} of {case.runs} passed)" for case in shown)
        more = len(noise.flaky) - len(shown)
        lines.append(
            f"Flaky cases ({what}): {noise.flipped} of {noise.units} flipped"
            + (f": {listed}" if listed else "")
            + (f" and {more} more" if more > 0 else "")
        )
    flaky = noise.flaky_fields()
    if flaky:
        shown_fields = flaky if limit is None else flaky[:limit]
        listed = ", ".join(
            f"{visible(name)} {_rate(noise.fields[name].rate, noise.fields[name].interval)}" for name in shown_fields
        )
        more = len(flaky) - len(shown_fields)
        lines.append(f"Flaky fields ({what}, flip rate): {listed}" + (f" and {more} more" if more > 0 else ""))
    elif noise.fields:
        lines.append(f"Flaky fields ({what}): none of {plural(len(noise.fields), 'field')} flipped")
    return lines


def summary_lines(report: RepeatReport, limit: int | None = FLAKY_SHOWN) -> list[str]:
    """Everything the text summaries say of a repeated run."""
    lines = ["Repeats: " + headline(report)] if report.repeats > 1 else []
    if report.repeats > 1:
        lines += noise_lines(report.extractor, "between runs", limit)
    if report.judge is not None:
        lines.append(
            f"Judge noise (--rejudge {report.rejudges}): "
            + (f"{report.judge.flipped} of {report.judge.units} answers got another verdict from another scoring")
        )
        lines += noise_lines(report.judge, "between scorings", limit)
    return lines


def render_flips(console: Any, report: RepeatReport) -> None:
    """The flip rate of every field as a table: between runs, and between scorings with --rejudge."""
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table

    for line in summary_lines(report):
        console.print(Text(line))
    short = [(i, passed, runs) for i, (passed, runs) in report.per_case.items() if passed < runs]
    if short:
        k = report.repeats
        listed = ", ".join(
            f"{visible(i)} ({passed} of {runs}: pass^{k} no, pass@{k} {'yes' if passed else 'no'})"
            for i, passed, runs in short[:FLAKY_SHOWN]
        )
        more = f" and {len(short) - FLAKY_SHOWN} more" if len(short) > FLAKY_SHOWN else ""
        console.print(Text(f"Cases not passing every run: {listed}{more} (--format json lists every case)"))
    noises = [("between runs", report.extractor)] if report.repeats > 1 else []
    if report.judge is not None:
        noises.append(("between scorings", report.judge))
    for what, noise in noises:
        if not noise.fields:
            continue
        columns = [Column("field"), Column("documents", justify="right"), Column("flipped", justify="right")]
        columns.append(Column("flip rate", justify="right"))
        rows: list[list[Text | str]] = [
            [Text(visible(name)), str(flips.documents), str(flips.flipped), _rate(flips.rate, flips.interval)]
            for name, flips in sorted(noise.fields.items(), key=lambda item: (-(item[1].rate or 0.0), item[0]))
        ]
        print_table(console, f"Flips {what} (share of documents whose outcome of the field differed)", columns, rows)


def run_lines(runs: list[ResultRow], shown: ResultRow) -> list[str]:
    """`agentv explain` of a repeated case: its runs, the fields that differed, the run explained."""
    k = len(runs)
    passed = sum(r.status == "ok" and r.verdict == "pass" for r in runs)
    each = ", ".join(f"#{r.repeat or 1} {r.verdict if r.status == 'ok' else 'error'} {r.score:.3f}" for r in runs)
    lines = [
        f"runs: {passed} of {k} passed (pass^{k} {'yes' if passed == k else 'no'}, "
        f"pass@{k} {'yes' if passed else 'no'}): {each}"
    ]
    outcomes: dict[str, list[str]] = {}
    for position, row in enumerate(runs):
        for (_, name), counts in row_field_counts(row.evaluator_results).items():
            said = "hit" if counts.tp and not (counts.fp or counts.fn) else "miss" if counts.fp or counts.fn else "-"
            outcomes.setdefault(name, ["-"] * k)[position] = said
    differed = [
        f"{visible(name)} (" + ", ".join(f"#{runs[i].repeat or 1} {said}" for i, said in enumerate(saids)) + ")"
        for name, saids in outcomes.items()
        if len(set(saids)) > 1
    ]
    lines.append("fields that differed between runs: " + ("; ".join(differed) if differed else "none"))
    chosen = shown.repeat or 1
    failed_first = shown.verdict != "pass" or shown.status != "ok"
    why = " (the first that did not pass)" if failed_first and chosen != 1 else ""
    lines.append(f"explaining run #{chosen}{why}; --run N explains another")
    return lines
