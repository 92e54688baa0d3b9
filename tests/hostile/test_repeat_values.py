"""Hostile `repeat` and `rejudge` values in a results file are data: a value the row model does not
take (0, negative, text, a boolean, a float) makes the line a skipped or refused line, never a
crash; any number of runs per case, and huge run numbers, are read as they are; the noise
computed from any rows never raises (hypothesis)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.scoring.repeats import MixedRows, RepeatTally
from tests.cli.test_eval import invoke


def _row(eval_id: str, **extra: object) -> str:
    row = {"timestamp": "t", "eval_id": eval_id, "dataset": "d", "target": "t", "status": "ok", "score": 1.0}
    row |= {"verdict": "pass", "evaluator_results": [], **extra}
    return json.dumps(row)


@pytest.mark.parametrize("value", [0, -1, "2", True, 1.5, None, [1], {"a": 1}], ids=repr)
def test_a_bad_repeat_value_is_a_skipped_line_in_metrics_and_refused_by_compare(tmp_path, value):
    path = tmp_path / "run.jsonl"
    good = [_row("c1", repeat=1), _row("c1", repeat=2)]
    path.write_text("\n".join([*good, _row("c2", repeat=value)]) + "\n")
    metrics = invoke("metrics", str(path), "-f", "json")
    assert metrics.exit_code in (1, 2), metrics.output  # no field counts (1), or the mix refused (2): no crash
    assert "Traceback" not in metrics.output
    compare = invoke("compare", str(path), str(path))
    assert compare.exit_code == 2 and "Traceback" not in compare.output
    report = invoke("report", str(path), "--out", str(tmp_path / "page.html"))
    assert report.exit_code in (0, 2) and "Traceback" not in report.output


def test_huge_run_numbers_and_many_runs_are_read_as_they_are(tmp_path):
    path = tmp_path / "run.jsonl"
    lines = [_row("c1", repeat=10**30), *(_row("c2", repeat=r) for r in range(1, 501))]
    path.write_text("\n".join(lines) + "\n")
    result = invoke("explain", str(path), "c2", "--run", "500")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith("runs: 500 of 500 passed (pass^500 yes, pass@500 yes)")
    huge = invoke("explain", str(path), "c1")
    assert huge.exit_code == 0 and "explaining run #1000000000000000000000000000000" in huge.stdout


_IDS = st.text(min_size=1, max_size=4)
_INDEX = st.one_of(st.none(), st.integers(min_value=1, max_value=10**20))
_OUTCOMES = st.dictionaries(st.text(max_size=3), st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_IDS, _INDEX, _INDEX, st.booleans(), _OUTCOMES), max_size=30), st.floats(0.5, 0.99))
def test_any_rows_give_a_report_or_the_mixed_refusal(rows, level):
    tally = RepeatTally()
    try:
        for line, (eval_id, repeat, rejudge, passed, outcomes) in enumerate(rows, 1):
            tally.add(line, eval_id, repeat, rejudge, passed, outcomes)
    except MixedRows:
        return
    report = tally.report(level)
    if report is None:
        assert all(r is None and j is None for _, r, j, _, _ in rows)
        return
    assert 0 <= report.pass_all <= report.pass_any <= 1 or report.complete == 0
    assert 0 <= report.pass_rate <= 1
    assert report.extractor.flipped <= report.extractor.units <= report.cases
    for flips in report.extractor.fields.values():
        assert 0 <= flips.flipped <= flips.documents
