"""`agentv compare BASE NEW`: score, verdict and field changes between two runs, with paired
statistics; exit 1 on a regression (report/regressions.py: by default any flip, new error, or fall
of the mean or a field's F1; options loosen it)."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentv_py.cli.base import EXIT_GATE_FAILED, EXIT_OK, CompareCommand, app, boundary

if TYPE_CHECKING:
    from agentv_py.report.compare import Comparison
    from agentv_py.report.compare_repeats import RepeatComparison
    from agentv_py.report.regressions import Rules


@app.command(cls=CompareCommand, short_help="Compare two results files: deltas, field changes, McNemar, bootstrap CI.")
@boundary
def compare(
    base: Path = typer.Argument(
        ...,
        metavar="BASE",
        help="The earlier results file (JSONL), or an AgentV run folder or its index.jsonl.",
        show_default=False,
    ),
    new: Path = typer.Argument(
        ..., metavar="NEW", help="The results file (or AgentV run) to judge against BASE.", show_default=False
    ),
    output_format: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json or md."),
    max_drop: float | None = typer.Option(
        None,
        "--max-drop",
        metavar="X",
        help="Let the mean score, and each field's F1, fall by up to X (0-1) [default: 0, any fall fails].",
        show_default=False,
    ),
    allow_flips: int = typer.Option(
        0, "--allow-flips", metavar="N", help="Let up to N cases go from pass to not pass."
    ),
    significant_only: bool = typer.Option(
        False,
        "--significant-only",
        help="Fail only on changes the paired tests call significant at --alpha (McNemar on pass/fail and on "
        "each field's hit/miss; the mean's 95% interval below -X), not on any change. New errors still fail.",
    ),
    alpha: float = typer.Option(0.05, "--alpha", metavar="A", help="The significance level of --significant-only."),
    correction: str = typer.Option(
        "holm",
        "--correction",
        metavar="METHOD",
        help="How the fields' McNemar p-values are adjusted for testing them together: holm (the chance of any "
        "false alarm) or bh (Benjamini-Hochberg: the share of false alarms).",
    ),
    force: bool = typer.Option(False, "--force", help="Compare runs of different datasets (or disjoint case ids)."),
    by: str | None = typer.Option(
        None,
        "--by",
        metavar="KEY",
        help="Also the comparison within each value of this metadata key of the cases (`metadata: {doc_type: "
        "receipt}`), each gated by the same rules; cases without it form the slice (none).",
    ),
) -> int:
    """Per-case score deltas and verdict changes, per-field hit/miss changes and F1 deltas, an exact
    McNemar test on pass/fail and a paired bootstrap 95% CI on the mean score delta.

    Gates like a golden test: exit 1 when any case went from pass to not pass, any case has a new
    error, the mean score fell, or any field's F1 fell (a field NEW no longer gets right, or no
    longer scores, falls to 0); each is named. Loosen it explicitly: --max-drop lets the mean and
    each F1 fall by X, --allow-flips tolerates N pass -> not pass, --significant-only fails only on
    what the paired tests call real. For example:

    \b
      agentv compare main.jsonl pr.jsonl
      agentv compare main.jsonl pr.jsonl --max-drop 0.02
      agentv compare main.jsonl pr.jsonl --allow-flips 1
      agentv compare main.jsonl pr.jsonl --significant-only
    """
    from agentv_py.errors import AgentvError
    from agentv_py.report.agentv_rows import readable_results, same_run
    from agentv_py.report.compare import compare as run_compare
    from agentv_py.report.compare_store import CompareError
    from agentv_py.report.jsonl import UnusableInput
    from agentv_py.report.regressions import Rules
    from agentv_py.report.text import visible

    if output_format not in ("table", "json", "md"):
        raise AgentvError(f"invalid --format {output_format!r}: choose table, json or md")
    if max_drop is not None and not 0 <= max_drop <= 1:
        raise AgentvError(f"invalid --max-drop {max_drop:g}: a score drop between 0 and 1")
    if not 0 < alpha < 1:
        raise AgentvError(f"invalid --alpha {alpha:g}: a significance level between 0 and 1 (exclusive)")
    if allow_flips < 0:
        raise AgentvError(f"invalid --allow-flips {allow_flips}: a number of cases, 0 or more")
    if correction not in ("holm", "bh"):
        raise AgentvError(f"invalid --correction {correction!r}: choose holm or bh")
    if by is not None and not by.strip():
        raise AgentvError("--by needs a metadata key, e.g. --by doc_type")
    rules = Rules(max_drop or 0.0, allow_flips, significant_only, alpha, correction)
    with ExitStack() as stack:
        try:
            base_file = stack.enter_context(readable_results(base, "BASE results file"))
            new_file = stack.enter_context(readable_results(new, "NEW results file"))
            if (base_file, new_file) != (base, new) and same_run(base, new):
                raise CompareError(
                    f"BASE and NEW are the same AgentV run: {base}",
                    hint="compare a run with another run of the same dataset",
                )
            result = run_compare(base_file, new_file, rules=rules, force=force)
        except UnusableInput as exc:
            raise AgentvError(exc.message, hint=exc.hint) from None  # exit 2
        result.base, result.new = str(base), str(new)  # as given, not the converted AgentV runs' files
        if output_format == "json" and by is not None:
            sys.stdout.write(f'{{"by": {json.dumps(by)}, "whole": ')
        found = _show(result, rules, output_format, alpha)
        if by is not None:
            found += _show_slices(base_file, new_file, by, rules, output_format, alpha)
    for reason in found:
        print(f"regression: {visible(reason)}", file=sys.stderr)
    return EXIT_GATE_FAILED if found else EXIT_OK


def _show(result: Comparison | RepeatComparison, rules: Rules, output_format: str, alpha: float) -> list[str]:
    """Print the comparison as asked; its regressions."""
    from agentv_py.report.compare_render import render_markdown, render_table
    from agentv_py.report.compare_repeats import RepeatComparison, render_lines
    from agentv_py.report.render import stdout_console
    from agentv_py.report.text import visible

    with result:
        for message in result.forced:
            print(f"warning: {visible(message)} (--force)", file=sys.stderr)
        if output_format == "json":
            result.write_json(sys.stdout, rules)
        elif isinstance(result, RepeatComparison):
            lines = [visible(line) for line in render_lines(result)]
            sys.stdout.write(
                "\n".join(f"- {line}" for line in lines) + "\n" if output_format == "md" else "\n".join(lines) + "\n"
            )
        elif output_format == "md":
            sys.stdout.write(render_markdown(result, alpha) + "\n")
        else:
            render_table(stdout_console(), result, alpha)
        return list(result.regressions)


def _show_slices(base: Path, new: Path, key: str, rules: Rules, output_format: str, alpha: float) -> list[str]:
    """The comparison within each slice of `key` (report/compare_slices.py), each regression named
    with its slice; JSON closes the document `compare` opened."""
    from agentv_py.report.compare import compare as run_compare
    from agentv_py.report.compare_slices import sliced_files
    from agentv_py.report.text import visible

    found: list[str] = []
    with sliced_files(base, new, key) as slices:
        if output_format == "json":
            sys.stdout.write(', "slices": {')
        for index, (label, (base_part, new_part)) in enumerate(slices.items()):
            name = f"{key} = {label}"
            if output_format == "json":
                sys.stdout.write(("" if index == 0 else ", ") + json.dumps(label) + ": ")
            else:
                heading = f"### {name}" if output_format == "md" else f"── {name} ──"
                sys.stdout.write(f"\n{visible(heading)}\n")
            lone = "BASE" if not new_part.stat().st_size else "NEW" if not base_part.stat().st_size else None
            if lone is not None:
                if output_format == "json":
                    sys.stdout.write(json.dumps({"only_in": lone.lower()}))
                else:
                    sys.stdout.write(f"only in {lone}: nothing to compare\n")
                continue
            result = run_compare(base_part, new_part, rules=rules, force=True)
            result.base, result.new = f"{base} [{name}]", f"{new} [{name}]"
            result.forced.clear()  # a slice's cases may be in one run only: the whole comparison said so
            found += [f"[{name}] {reason}" for reason in _show(result, rules, output_format, alpha)]
        if output_format == "json":
            sys.stdout.write("}}\n")
    return found
