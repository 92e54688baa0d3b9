"""Terminal output, rendered into a plain 100-column console and compared as text."""

from __future__ import annotations

import io

from rich.console import Console

from agentv_py.evaluators.base import processed_result
from agentv_py.models.results import ResultRow
from agentv_py.report.render import PlainProgress, render_summary
from agentv_py.report.summary import RunSummary
from tests.conftest import make_row

INTERVALS = "Intervals: pass rate 0.25 [0.05, 0.70]  mean score 0.56 [0.12, 0.88]  (95% intervals, 4 cases)"
NARROW_INTERVALS = [
    "Intervals: pass rate 0.25 [0.05, 0.70]",
    "           mean score 0.56 [0.12, 0.88]",
    "           (95% intervals, 4 cases)",
]


def row(eval_id: str, score: float, misses: list[str] = (), error: str | None = None) -> ResultRow:
    from agentv_py.scoring.case import verdict_for

    results = (
        [] if error else [processed_result(name="fields", type="field_accuracy", score=score, misses=list(misses))]
    )
    return make_row(
        timestamp="2026-01-01T00:00:00.000Z",
        eval_id=eval_id,
        dataset="ds",
        status="error" if error else "ok",
        score=score,
        verdict="fail" if error else verdict_for(score),
        misses=list(misses) if not error else [error],
        error=error,
        evaluator_results=results,
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
    summary.add(
        row("inv-4", 0.5, ["a (value mismatch)", "b (value mismatch)", "c (value mismatch)", "d (value mismatch)"]), 3
    )
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
        "Totals: 4 cases  1 passed  1 partial  1 failed  1 target error",
        "Scores: mean 0.562  median 0.625  min 0.000  max 1.000  std 0.370",
        INTERVALS,
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
    progress = PlainProgress(12, buffer, width=100)
    progress.advance(row("inv-1", 1.0))
    progress.advance(row("inv-2", 0.0, error="target 't' failed: timed out after 30s"))
    progress.advance(row("inv-3", 0.0, error="target 't' failed: exit code 1: " + "x" * 100))
    assert buffer.getvalue().splitlines() == [
        "[ 1/12] pass    1.000  inv-1",
        "[ 2/12] error   0.000  inv-2  target error: target 't' failed: timed out after 30s",
        "[ 3/12] error   0.000  inv-3  target error: target 't' failed: exit code 1: " + "x" * 23 + "…",
    ]
    assert len(buffer.getvalue().splitlines()[2]) == 100  # shortened to one line of the terminal's width


def test_progress_shows_an_evaluator_error_with_its_reason():
    from agentv_py.evaluators.base import error_result

    failed = error_result(name="judge", type="code_judge", message="code_judge 'judge': exit code 2: oops")
    case = row("inv-1", 0.5).model_copy(update={"evaluator_results": [failed], "verdict": "fail"})
    buffer = io.StringIO()
    PlainProgress(3, buffer, width=100).advance(case)
    assert (
        buffer.getvalue()
        == "[1/3] fail    0.500  inv-1  evaluator error: judge: code_judge 'judge': exit code 2: oops\n"
    )
    summary = RunSummary(total_selected=1)
    summary.add(case, 0)
    assert "Totals: 1 case  0 passed  0 partial  1 failed  0 target errors  1 evaluator error" in render(summary)


def render_at(summary: RunSummary, width: int, verbose: bool = False) -> str:
    buffer = io.StringIO()
    render_summary(Console(width=width, file=buffer, color_system=None), summary, verbose=verbose)
    return buffer.getvalue()


def test_summary_text_at_60_columns_lists_misses_under_each_case():
    summary = RunSummary(total_selected=4, results_path="out.jsonl")
    summary.add(row("inv-2", 0.75, ["invoice_number (required, missing)"]), 1)
    summary.add(row("inv-1", 1.0), 0)
    summary.add(row("inv-3", 0.0, error="target 't' failed: exit code 3: the model server closed the connection"), 2)
    summary.add(
        row(
            "inv-4",
            0.5,
            [
                "line_items[1].description (similarity 0.71 < 0.90)",
                "b (value mismatch)",
                "c (value mismatch)",
                "d (value mismatch)",
            ],
        ),
        3,
    )
    text = render_at(summary, 60)
    assert text.splitlines() == [
        "Cases",
        "  case   score  verdict",
        "  inv-1  1.000  pass",
        "  inv-2  0.750  partial",
        "    - invoice_number (required, missing)",
        "  inv-3  0.000  error",
        "    error: target 't' failed: exit code 3: the model server",
        "           closed the connection",
        "  inv-4  0.500  fail",
        "    - line_items[1].description (similarity 0.71 < 0.90)",
        "    - b (value mismatch)",
        "    - c (value mismatch)",
        "    - … 1 more (--verbose, or see the JSONL)",
        "Totals: 4 cases  1 passed  1 partial  1 failed",
        "        1 target error",
        "Scores: mean 0.562  median 0.625  min 0.000  max 1.000",
        "        std 0.370",
        *NARROW_INTERVALS,
        "Histogram:",
        "  [0.0, 0.2) ██████████████████████████████ 1",
        "  [0.2, 0.4)                                0",
        "  [0.4, 0.6) ██████████████████████████████ 1",
        "  [0.6, 0.8) ██████████████████████████████ 1",
        "  [0.8, 1.0] ██████████████████████████████ 1",
        "Evaluator means: fields 0.750",
        "Results written to: out.jsonl",
    ]
    assert all(len(line) <= 60 for line in text.splitlines())


def test_long_case_ids_stay_whole_in_the_narrow_layout():
    long_id = "supplier-invoice-with-a-rather-long-identifier-0042"  # too long for a boxed table even at 100
    summary = RunSummary(total_selected=2)
    summary.add(row("short", 1.0), 0)
    summary.add(row(long_id, 0.5, ["x (value mismatch)"]), 1)
    narrow = render_at(summary, 60).splitlines()
    assert narrow[1:6] == [
        "  case   score  verdict",
        "  short  1.000  pass",
        f"  {long_id}",  # a line of its own, whole
        "         0.500  fail",
        "    - x (value mismatch)",
    ]
    wide = render_at(summary, 100).splitlines()
    assert f"  {long_id}  0.500  fail" in wide and "┏" not in "".join(wide)
    assert all(len(line) <= 60 for line in narrow) and all(len(line) <= 100 for line in wide)


def many_evaluator_rows() -> list[tuple[ResultRow, int]]:
    """(row, position in dataset order) for cases whose evaluator lists differ."""
    from agentv_py.scoring.case import verdict_for

    def case(eval_id: str, scores: dict[str, float], misses: list[str] = ()) -> ResultRow:
        results = [processed_result(name=name, type="code_judge", score=score) for name, score in scores.items()]
        score = sum(scores.values()) / len(scores)
        return make_row(
            eval_id=eval_id,
            dataset="ds",
            score=score,
            verdict=verdict_for(score),
            misses=list(misses),
            evaluator_results=results,
        )

    declared = [
        case("inv-1", {"invoice_fields": 0.1, "names_fuzzy": 1.0}),
        case("inv-2", {"invoice_fields": 0.2, "line_items": 0.5}, ["line_items[1].amount (value mismatch)"]),
        case("inv-3", {"invoice_fields": 0.3}),
        case("inv-4", {"summary_similarity": 0.976}),
    ]
    return [(r, i) for i, r in enumerate(declared)]


def test_summary_does_not_depend_on_the_order_cases_finish_in():
    rows = many_evaluator_rows()
    texts = {}
    for name, finish_order in {
        "dataset order": rows,
        "reversed": rows[::-1],
        "shuffled": [rows[2], rows[0], rows[3], rows[1]],
    }.items():
        summary = RunSummary(total_selected=len(rows), results_path="out.jsonl")
        for result_row, position in finish_order:
            summary.add(result_row, position)
        texts[name] = (render_at(summary, 100), render_at(summary, 60), summary.evaluator_means())
    assert texts["dataset order"] == texts["reversed"] == texts["shuffled"]
    text_100, text_60, means = texts["reversed"]
    assert list(means) == ["invoice_fields", "names_fuzzy", "line_items", "summary_similarity"]  # as declared
    assert (
        "Evaluator means: invoice_fields 0.200  names_fuzzy 1.000  line_items 0.500  summary_similarity 0.976"
        in text_100
    )
    assert (
        "Evaluator means: invoice_fields 0.200  names_fuzzy 1.000\n"
        "                 line_items 0.500  summary_similarity 0.976\n" in text_60
    )


def test_cases_listed_in_a_large_run_do_not_depend_on_finish_order():
    import random

    rows = [(row(f"c{i}", 0.5 if i % 2 else 1.0), i) for i in range(130)]  # 65 did not pass: 50 are listed
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    texts = []
    for finish_order in (rows, shuffled):
        summary = RunSummary(total_selected=len(rows))
        for result_row, position in finish_order:
            summary.add(result_row, position)
        texts.append(render_at(summary, 100))
    assert texts[0] == texts[1]
    assert "│ c1 " in texts[0] and "│ c99 " in texts[0] and "│ c101 " not in texts[0]  # the first 50 in dataset order
    assert "80 cases not listed: 65 passing, 15 more that did not pass" in texts[0]
