"""Terminal output, rendered into a plain 100-column console and compared as text."""

from __future__ import annotations

import io

from rich.console import Console

from agentv_py.evaluators.base import processed_result
from agentv_py.models.results import ResultRow
from agentv_py.report.render import PlainProgress, render_summary
from agentv_py.report.summary import RunSummary


def row(eval_id: str, score: float, misses: list[str] = (), error: str | None = None) -> ResultRow:
    from agentv_py.scoring.case import verdict_for

    results = [] if error else [processed_result(name="fields", type="field_accuracy", score=score, misses=list(misses))]
    return ResultRow(
        timestamp="2026-01-01T00:00:00.000Z", eval_id=eval_id, dataset="ds", target="t",
        status="error" if error else "ok", score=score, verdict="fail" if error else verdict_for(score),
        misses=list(misses) if not error else [error], error=error, evaluator_results=results,
    )


def render(summary: RunSummary, verbose: bool = False) -> str:
    buffer = io.StringIO()
    render_summary(Console(width=100, file=buffer, color_system=None), summary, verbose=verbose)
    return buffer.getvalue()


def test_summary_text():
    summary = RunSummary(total_selected=4, results_path="out.jsonl")
    summary.add(row("inv-2", 0.75, ["invoice_number (required, missing)"]), 1)
    summary.add(row("inv-1", 1.0), 0)
    summary.add(row("inv-3", 0.0, error="target 't' failed: exit code 3: boom"), 2)
    summary.add(row("inv-4", 0.5, ["a (value mismatch)", "b (value mismatch)", "c (value mismatch)", "d (value mismatch)"]), 3)
    assert [line.rstrip() for line in render(summary).splitlines()] == [
        "Cases",
        "┏━━━━━━━┳━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
        "┃ case  ┃ score ┃ verdict ┃ misses / error                                                         ┃",
        "┡━━━━━━━╇━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩",
        "│ inv-1 │ 1.000 │ pass    │                                                                        │",
        "│ inv-2 │ 0.750 │ partial │ invoice_number (required, missing)                                     │",
        "│ inv-3 │ 0.000 │ error   │ target 't' failed: exit code 3: boom                                   │",
        "│ inv-4 │ 0.500 │ fail    │ a (value mismatch); b (value mismatch); c (value mismatch); … 1 more   │",
        "│       │       │         │ (--verbose, or see the JSONL)                                          │",
        "└───────┴───────┴─────────┴────────────────────────────────────────────────────────────────────────┘",
        "Totals: 4 cases  1 passed  1 partial  1 failed  1 errored",
        "Scores: mean 0.562  median 0.625  min 0.000  max 1.000  std 0.370",
        "Histogram:",
        "  [0.0, 0.2) ██████████████████████████████ 1",
        "  [0.2, 0.4)                                0",
        "  [0.4, 0.6) ██████████████████████████████ 1",
        "  [0.6, 0.8) ██████████████████████████████ 1",
        "  [0.8, 1.0] ██████████████████████████████ 1",
        "Evaluator means: fields 0.750",
        "Results written to: out.jsonl",
    ]


def test_large_runs_list_only_cases_that_did_not_pass():
    summary = RunSummary(total_selected=120)
    for i in range(120):
        summary.add(row(f"c{i}", 0.5 if i % 40 == 0 else 1.0), i)
    text = render(summary)
    assert "Cases that did not pass (3 shown)" in text
    assert "117 passing cases not listed (use --verbose to list every case)" in text
    assert "│ c1 " not in text and "│ c40 " in text


def test_errored_cases_count_in_the_score_statistics():
    summary = RunSummary(total_selected=2)
    summary.add(row("ok", 1.0), 0)
    summary.add(row("broken", 0.0, error="target failed"), 1)
    assert summary.stats().mean == 0.5 and summary.errored == 1


def test_plain_progress_lines():
    buffer = io.StringIO()
    progress = PlainProgress(12, buffer)
    progress.advance(row("inv-1", 1.0))
    progress.advance(row("inv-2", 0.0, error="target 't' failed: timed out after 30s"))
    assert buffer.getvalue() == (
        "[ 1/12] pass    1.000  inv-1\n"
        "[ 2/12] error   0.000  inv-2  target 't' failed: timed out after 30s\n"
    )
