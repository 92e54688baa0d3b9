"""Gates as pure checks: `gate_checks`, `GateCheck`, `gate`'s outcome with gates, and `load_baseline`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_py.models.dataset import Gates
from agentv_py.models.results import EvaluatorResult
from agentv_py.report.gates import Baseline, BaselineError, GateCheck, gate_checks, load_baseline
from agentv_py.report.summary import RunSummary, gate
from agentv_py.scoring.metrics import Counts
from tests.conftest import make_row

FIELDS = {
    ("fa", "total"): Counts(tp=9, fp=1, fn=3),
    ("fa", "date"): Counts(tp=4),
    ("other", "total"): Counts(tp=1),
    ("fa", "method"): Counts(fp=12, fn=12),  # answered in all 12 documents, always wrong: collapsed
    ("fa", "po"): Counts(fn=5),  # expected 5 times, never answered
}


def checks(gates: dict[str, object] | None = None, **kwargs: object) -> list[tuple[str, float | None, bool]]:
    found = gate_checks(
        mean=kwargs.get("mean", 0.8),  # type: ignore[arg-type]
        pass_rate=kwargs.get("pass_rate", 0.5),  # type: ignore[arg-type]
        evaluator_means={"fa": 0.9},
        field_counts=FIELDS,
        threshold=kwargs.get("threshold"),  # type: ignore[arg-type]
        gates=Gates.model_validate(gates) if gates is not None else None,
        baseline=kwargs.get("baseline"),  # type: ignore[arg-type]
    )
    return [(c.name, None if c.value is None else round(c.value, 4), c.passed) for c in found]


@pytest.mark.parametrize(
    ("gates", "kwargs", "expected"),
    [
        pytest.param(None, {}, [], id="no-gates"),
        pytest.param(None, {"threshold": 0.8}, [("mean score", 0.8, True)], id="threshold-at-the-limit"),
        pytest.param({"min_mean_score": 0.81}, {}, [("mean score", 0.8, False)], id="mean-below"),
        pytest.param({"min_pass_rate": 0.5}, {}, [("pass rate", 0.5, True)], id="pass-rate"),
        pytest.param({"min_pass_rate": 0.5}, {"pass_rate": None}, [("pass rate", None, False)], id="no-cases-fails"),
        pytest.param(
            {"evaluators": {"fa": {"min_mean": 0.95}, "gone": {"min_mean": 0.1}}},
            {},
            [("evaluator fa mean", 0.9, False), ("evaluator gone mean", None, False)],
            id="evaluator-means",
        ),
        pytest.param(  # total: summed over both evaluators that score it (tp 10, fp 1, fn 3)
            {"fields": {"total": {"precision": 0.9, "recall": 0.8, "f1": 0.8}}},
            {},
            [
                ("field total precision", 0.9091, True),
                ("field total recall", 0.7692, False),
                ("field total f1", 0.8333, True),
            ],
            id="field-metrics",
        ),
        pytest.param({"fields": {"date": {"f1": 1}}}, {}, [("field date f1", 1.0, True)], id="field-f1-perfect"),
        pytest.param(
            None,
            {"baseline": Baseline("b", 0.05, 0.9, {("fa", "date"): Counts(tp=4), ("fa", "gone"): Counts(tp=1)})},
            [
                ("mean score drop vs baseline", 0.1, False),
                ("field date f1 drop vs baseline", 0.0, True),
                ("field gone f1 drop vs baseline", 1.0, False),  # scored before, not now: a full drop
            ],
            id="baseline-drops",
        ),
        pytest.param(
            {"fields": {"method": {"f1": 0.5, "precision": 0.5}, "po": {"precision": 0.5, "recall": 0.5}}},
            {},
            [
                ("field method precision", 0.0, False),
                ("field method f1", 0.0, False),  # a collapsed field is 0, never "nothing scored"
                ("field po precision", None, False),  # undefined: failed, with the reason
                ("field po recall", 0.0, False),
            ],
            id="collapsed-fields-fail",
        ),
        pytest.param(
            None,
            {"baseline": Baseline("b", 0.05, 0.8, {("fa", "method"): Counts(tp=12), ("fa", "po"): Counts(tp=5)})},
            [
                ("mean score drop vs baseline", 0.0, True),
                ("field method f1 drop vs baseline", 1.0, False),
                ("field po f1 drop vs baseline", 1.0, False),
            ],
            id="baseline-collapsed-fields",
        ),
        pytest.param(
            None,
            {"baseline": Baseline("b", 0.0, 0.7, {})},
            [("mean score drop vs baseline", -0.1, True)],
            id="baseline-improved",
        ),
    ],
)
def test_gate_checks(gates, kwargs, expected):
    assert checks(gates, **kwargs) == expected


@pytest.mark.parametrize(
    ("check", "line"),
    [
        pytest.param(GateCheck("mean score", 0.875, ">=", 0.8), "gate mean score: 0.875 (>= 0.8) passed", id="min"),
        pytest.param(GateCheck("d", 0.1 + 0.2, "<=", 0.3), "gate d: 0.300 (<= 0.3) passed", id="float-noise"),
        pytest.param(GateCheck("f", None, ">=", 0.5), "gate f: n/a (nothing scored) (>= 0.5) failed", id="no-value"),
        pytest.param(
            GateCheck("field po precision", None, ">=", 0.5, "undefined: the field was never answered"),
            "gate field po precision: n/a (undefined: the field was never answered) (>= 0.5) failed",
            id="undefined-rate",
        ),
    ],
)
def test_gate_check_lines(check, line):
    assert check.line == line


def summary_of(*verdicts: str) -> RunSummary:
    summary = RunSummary()
    for i, verdict in enumerate(verdicts):
        status = "error" if verdict == "error" else "ok"
        score = {"pass": 1.0, "fail": 0.0, "error": 0.0}[verdict]
        summary.add(make_row(f"c{i}", score=score, verdict="fail" if verdict == "error" else verdict, status=status))
    return summary


@pytest.mark.parametrize(
    ("verdicts", "gates", "outcome", "message"),
    [
        pytest.param(("pass", "fail"), {"min_pass_rate": 0.5}, "ok", "", id="gates-replace-every-case-passed"),
        pytest.param(
            ("pass", "fail"), {"min_pass_rate": 0.6}, "gate_failed", "gate failed: 1 gate of 1 failed", id="fail"
        ),
        pytest.param(
            ("pass", "error"),
            {"min_pass_rate": 0.1},
            "errors",
            "1 case had a target error (the target call failed)",
            id="errors-win",
        ),
    ],
)
def test_gate_outcome_with_gates(verdicts, gates, outcome, message):
    result = gate(summary_of(*verdicts), None, Gates.model_validate(gates))
    assert (result.outcome, result.message, result.rule) == (outcome, message, "every gate holds (1 gate)")
    assert len(result.checks) == 1


def test_threshold_alone_keeps_its_rule_and_lists_no_checks():
    result = gate(summary_of("pass", "fail"), 0.6)
    assert (result.outcome, result.message, result.rule, result.checks) == (
        "gate_failed",
        "gate failed: mean score 0.500 < threshold 0.6",
        "mean score >= 0.6",
        (),
    )


def scored(eval_id: str, **kw: object) -> object:
    """A row whose field_accuracy result scored field x right."""
    result = EvaluatorResult(
        name="fa",
        type="field_accuracy",
        status="processed",
        score=1.0,
        passed=True,
        verdict="pass",
        details={"fields": [{"path": "x", "status": "hit", "expected": 1, "actual": 1}]},
    )
    return make_row(eval_id, evaluator_results=[result], **kw)


def write_rows(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(row.model_dump(mode="json")) + "\n" for row in rows))  # type: ignore[attr-defined]
    return path


def test_load_baseline_keeps_the_last_row_of_a_case_and_skips_errors(tmp_path):
    path = write_rows(
        tmp_path / "base.jsonl",
        scored("a", score=0.0, verdict="fail"),
        scored("a", score=1.0),
        scored("b", score=0.5, verdict="partial"),
        scored("c", status="error", score=0.0, verdict="fail"),
        make_row("d", score=0.0, verdict="fail"),  # no evaluator results: not a scored case
    )
    baseline = load_baseline(path, 0.1, dataset_path=tmp_path / "d.yaml", dataset_name="d", case_ids=["a", "b"])
    assert (baseline.mean, baseline.max_drop) == (0.75, 0.1)
    assert baseline.field_counts == {("fa", "x"): Counts(tp=2)}
    assert baseline.passed == {"a"}  # its last row passed; b partial, c an error, d failed


def test_flips_are_counted_and_the_first_in_dataset_order_named():
    summary = RunSummary(total_selected=9, baseline_passed=frozenset(f"c{i}" for i in range(9)))
    for position in (8, 3, 0, 5, 7, 6, 1):  # arrival order is not dataset order
        summary.add(make_row(f"c{position}", score=0.0, verdict="fail"), position)
    summary.add(make_row("c2", score=1.0, verdict="pass"), 2)
    summary.add(make_row("zz", score=0.0, verdict="fail"), 4)  # not in the baseline: no flip
    assert summary.flips.count == 7 and summary.flips.shown == "c0, c1, c3, c5, c6 (and 2 more)"
    baseline = Baseline("base.jsonl", 0.0, mean=0.5, allow_flips=7)
    (check, *_) = gate(summary, None, None, baseline).checks
    assert check.line == "gate cases pass -> not pass vs baseline: 7 (<= 7) passed: c0, c1, c3, c5, c6 (and 2 more)"


@pytest.mark.parametrize(
    ("lines", "ids", "message"),
    [
        pytest.param(None, ["a"], "--baseline results file not found: {path}", id="missing"),
        pytest.param("{not json\n", ["a"], "--baseline {path}:1: ", id="not-a-results-file"),
        pytest.param(
            "ROW",
            ["zzz"],
            "--baseline {path} shares no case id with this run: a run of another dataset?",
            id="disjoint",
        ),
    ],
)
def test_load_baseline_refusals(tmp_path, lines, ids, message):
    path = tmp_path / "base.jsonl"
    if lines == "ROW":
        write_rows(path, scored("a"))
    elif lines is not None:
        path.write_text(lines)
    with pytest.raises(BaselineError) as info:
        load_baseline(path, 0.0, dataset_path=tmp_path / "d.yaml", dataset_name="d", case_ids=ids)
    assert info.value.message.startswith(message.format(path=path))


def test_a_field_the_baseline_scored_says_why_it_counts_as_a_full_drop():
    baseline = Baseline(
        "base.jsonl", 0.1, mean=0.5, field_counts={("fa", "a"): Counts(tp=2), ("fa", "b"): Counts(tp=1)}
    )
    checks = gate_checks(
        mean=0.5, pass_rate=1.0, evaluator_means={}, field_counts={("fa", "b"): Counts(tn=3)}, baseline=baseline
    )
    assert [c.line for c in checks[1:]] == [
        "gate field a f1 drop vs baseline: 1.000 (<= 0.1) failed: not scored in this run",
        "gate field b f1 drop vs baseline: 1.000 (<= 0.1) failed: nothing expected or answered in this run",
    ]


def test_the_markdown_summary_shows_a_count_as_a_count_with_its_cases():
    from agentv_py.report.markdown import summary_markdown, tally_fields

    summary = RunSummary(total_selected=2, baseline_passed=frozenset({"c1", "c2"}))
    rows = [make_row("c1", score=0.0, verdict="fail"), make_row("c2", score=1.0, verdict="pass")]
    for position, row in enumerate(rows):
        summary.add(row, position)
    result = gate(summary, None, None, Baseline("base.jsonl", 1.0, mean=1.0))
    text = summary_markdown(summary, result, tally_fields(rows), dataset="d", target="t")
    assert "| cases pass -&gt; not pass vs baseline | 1 | <= 0 | ❌ failed: c1 |" in text
