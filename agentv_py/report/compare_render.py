"""`agentv compare`'s views of a `Comparison`: the summary lines, the terminal table and the
Markdown (the JSON is `Comparison.write_json`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentv_py.report.compare import Comparison
from agentv_py.report.compare_fields import ranked
from agentv_py.report.text import visible

SHOWN = 10  # cases (and case ids per field) listed in the table and Markdown; JSON has them all


def _num(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _ids(ids: Iterable[str], total: int) -> str:
    shown = ", ".join(ids)
    return shown + (f" (+{total - SHOWN} more)" if total > SHOWN else "")


def summary_lines(result: Comparison, alpha: float) -> list[str]:
    """The headline numbers, one per line (the table's and the Markdown's first lines)."""
    lines = [f"{result.paired} cases in both files"]
    if result.paired:
        low, high = result.ci95 or (0.0, 0.0)
        lines.append(
            f"mean score {_num(result.base_mean)} -> {_num(result.new_mean)} "
            f"(delta {_num(result.mean_delta, sign=True)}, 95% CI {low:+.3f} .. {high:+.3f})"
        )
        lines.append(f"pass rate {_num(result.base_pass_rate)} -> {_num(result.new_pass_rate)}")
    lines.append(
        f"McNemar: {result.pass_to_fail} pass->fail, {result.fail_to_pass} fail->pass, "
        f"p = {result.p_value:.4g} (alpha {alpha:g})"
    )
    for label, side, total in (
        ("only in BASE", "base", result.only_in_base_count),
        ("only in NEW", "new", result.only_in_new_count),
    ):
        if total:
            lines.append(f"{total} {label}: {_ids(result.only_in(side, SHOWN), total)}")
    if result.errored_count:
        ids = (eval_id for eval_id, _ in result.errored(SHOWN))
        lines.append(f"{result.errored_count} errored (not compared): {_ids(ids, result.errored_count)}")
    return lines


def render_table(console: Any, result: Comparison, alpha: float) -> None:
    """Rich tables (lists when they do not fit): headline, changed cases (worst first, SHOWN of
    them), changed fields. Data (ids, field paths) goes through `visible` and is printed as plain
    text, never as markup."""
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table, print_wrapped

    for line in summary_lines(result, alpha):
        print_wrapped(console, Text(visible(line)))
    if result.changed_count:
        columns = [Column("case"), *(Column(name, justify="right") for name in ("base", "new", "delta"))]
        columns.append(Column("verdict"))
        rows: list[list[Text | str]] = []
        for change in result.changed(SHOWN):
            verdict = change.new_verdict
            if change.base_verdict != change.new_verdict:
                verdict = f"{change.base_verdict} -> {change.new_verdict}"
            rows.append(
                [
                    Text(visible(change.eval_id)),
                    _num(change.base_score),
                    _num(change.new_score),
                    _num(change.delta, sign=True),
                    verdict,
                ]
            )
        print_table(console, f"Changed cases ({result.changed_count}, worst first)", columns, rows)
        if result.changed_count > SHOWN:
            console.print(Text(f"{result.changed_count - SHOWN} more changed cases: --format json lists them all"))
    if result.fields:
        names = ("hit->miss", "miss->hit", "F1 base", "F1 new", "F1 delta [95%]", "p", "p adj.")
        columns = [Column("field"), *(Column(name, justify="right") for name in names)]
        fields: list[list[Text | str]] = [
            [
                Text(visible(name)),
                str(moved.hit_to_miss),
                str(moved.miss_to_hit),
                _num(moved.base.f1),
                _num(moved.new.f1),
                _delta(moved),
                _p(moved.p_value),
                _p(moved.p_adjusted),
            ]
            for name, moved in ((name, result.fields[name]) for name in ranked(result.fields))
        ]
        print_table(console, "Fields", columns, fields)
        note = f"fields by evidence of change; McNemar p adjusted across fields: {_CORRECTION[result.correction]}"
        print_wrapped(console, Text(note))
        for name, moved in sorted(result.fields.items()):
            if moved.hit_to_miss:
                ids = _ids(result.hit_to_miss(name, SHOWN), moved.hit_to_miss)
                print_wrapped(console, Text(visible(f"{name} hit->miss: {ids}")))
    print_wrapped(console, Text(_verdict_line(result)))


_CORRECTION = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _delta(moved: Any) -> str:
    """`-0.120 [-0.21, -0.04]`: the F1 delta and its paired bootstrap interval."""
    value, interval = moved.f1_delta, moved.f1_delta_ci
    if value is None or interval is None:
        return _num(value, sign=True)
    return f"{value:+.3f} [{interval.low:+.2f}, {interval.high:+.2f}]"


def _verdict_line(result: Comparison) -> str:
    if not result.regressions:
        return "no regression"
    return "regression: " + "; ".join(visible(reason) for reason in result.regressions)


def _md(text: str) -> str:
    """Inert Markdown (`report.markdown.cell`): a case id or a field path never becomes an image,
    a link, raw HTML or a table cell of its own."""
    from agentv_py.report.markdown import cell

    return cell(text, limit=1_000)


def render_markdown(result: Comparison, alpha: float) -> str:
    """The comparison as GitHub-flavoured Markdown (a PR comment, a step summary)."""
    out = [f"## Compare {_md(result.base)} -&gt; {_md(result.new)}", ""]
    out += [f"- {_md(line)}" for line in summary_lines(result, alpha)]
    out += ["", f"**{_md(_verdict_line(result))}**", ""]
    if result.changed_count:
        out += [f"### Changed cases ({result.changed_count}, worst first)", ""]
        out += ["| case | base | new | delta | verdict |", "|---|---:|---:|---:|---|"]
        for change in result.changed(SHOWN):
            out.append(
                f"| {_md(change.eval_id)} | {_num(change.base_score)} | {_num(change.new_score)} "
                f"| {_num(change.delta, sign=True)} | {change.base_verdict} -> {change.new_verdict} |"
            )
        if result.changed_count > SHOWN:
            out.append(f"\n{result.changed_count - SHOWN} more (see `--format json`).")
        out.append("")
    if result.fields:
        out += [f"### Fields (by evidence of change; p adjusted: {_CORRECTION[result.correction]})", ""]
        out.append("| field | hit->miss | miss->hit | F1 base | F1 new | F1 delta [95%] | p | p adj. |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name in ranked(result.fields):
            moved = result.fields[name]
            out.append(
                f"| {_md(name)} | {moved.hit_to_miss} | {moved.miss_to_hit} | {_num(moved.base.f1)} "
                f"| {_num(moved.new.f1)} | {_delta(moved)} | {_p(moved.p_value)} | {_p(moved.p_adjusted)} |"
            )
        out.append("")
    return "\n".join(out)
