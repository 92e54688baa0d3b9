"""`agentv compare`: real eval runs compared, the statistics against known values, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from agentv_py.evaluators.base import processed_result
from agentv_py.scoring.stats import bootstrap_ci, mcnemar_p
from tests.cli.test_eval import invoke
from tests.conftest import make_row

BASE_ANSWERS = {"c1": {"a": 1, "b": 2}, "c2": {"a": 1, "b": 2}, "c3": {"a": 0, "b": 2}, "c4": {"a": 1, "b": 2}}
NEW_ANSWERS = {"c1": {"a": 1, "b": 2}, "c2": {"a": 1, "b": 0}, "c3": {"a": 1, "b": 2}, "c4": {"a": 1, "b": 9}}
EXPECTED = {"a": 1, "b": 2}


@pytest.mark.parametrize(
    ("pass_to_fail", "fail_to_pass", "p"),
    [
        (8, 1, 0.0390625),  # 2 * (1 + 9) / 2**9
        (1, 8, 0.0390625),  # symmetric
        (10, 2, 0.03857421875),  # 2 * (1 + 12 + 66) / 2**12
        (5, 0, 0.0625),  # 2 / 2**5
        (1, 1, 1.0),
        (0, 0, 1.0),  # no discordant pair: nothing changed
    ],
    ids=["b8-c1", "b1-c8", "b10-c2", "b5-c0", "b1-c1", "none"],
)
def test_mcnemar_exact_p(pass_to_fail, fail_to_pass, p):
    assert mcnemar_p(pass_to_fail, fail_to_pass) == pytest.approx(p, abs=1e-12)


@pytest.mark.parametrize(
    ("pass_to_fail", "fail_to_pass"),
    [(100, 80), (3000, 2900), (0, 40), (50_000, 49_000), (7, 7), (1, 0)],
    ids=["100-80", "3000-2900", "0-40", "50k-49k", "tie", "one"],
)
def test_mcnemar_agrees_with_scipy_binomtest(pass_to_fail, fail_to_pass):
    from scipy.stats import binomtest

    expected = binomtest(pass_to_fail, pass_to_fail + fail_to_pass, 0.5).pvalue
    assert mcnemar_p(pass_to_fail, fail_to_pass) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(
    ("deltas", "interval"),
    [
        ([], None),
        ([0.25] * 7, (0.25, 0.25)),  # no spread: the interval is the point
        ([-1.0], (-1.0, -1.0)),
    ],
    ids=["no-cases", "constant", "one-case"],
)
def test_bootstrap_degenerate_intervals(deltas, interval):
    assert bootstrap_ci(deltas) == interval


def test_bootstrap_is_reproducible_and_brackets_the_mean():
    deltas = [0.0] * 50 + [-1.0] * 10 + [0.5] * 40  # mean 0.1
    low, high = bootstrap_ci(deltas)
    assert bootstrap_ci(deltas) == (low, high)  # a fixed seed
    assert low < 0.1 < high and low > -0.2 and high < 0.4
    assert bootstrap_ci(deltas, seed=1) != (low, high)


def run(ws, answers: dict[str, dict], out: str, dataset: str = "dataset.yaml") -> None:
    cases = [(case_id, answer, EXPECTED) for case_id, answer in answers.items()]
    ws.cases_dataset(cases, name=dataset)
    result = invoke("eval", dataset, "--out", out)
    assert result.exit_code in (0, 1), result.output


@pytest.fixture
def two_runs(ws):
    """Two real runs of one dataset by a cli target printing each case's file; the answers change between them."""
    ws.cli_target("cat {FILES}")
    run(ws, BASE_ANSWERS, "base.jsonl")
    run(ws, NEW_ANSWERS, "new.jsonl")
    return ws


def test_json_of_two_real_runs(two_runs):
    result = invoke("compare", "base.jsonl", "new.jsonl", "--format", "json")
    assert result.exit_code == 1, result.output  # by default every fall is a regression
    data = json.loads(result.stdout)
    assert list(data) == [
        "base",
        "new",
        "paired_cases",
        "mean_score",
        "pass_rate",
        "mcnemar",
        "verdict_changes",
        "cases",
        "only_in_base",
        "only_in_new",
        "errored",
        "fields",
        "field_tests",
        "gate",
        "forced",
    ]
    assert data["paired_cases"] == 4
    mean = data["mean_score"]
    assert (mean["base"], mean["new"], mean["delta"]) == (0.875, 0.75, -0.125)
    assert mean["resamples"] == 2000 and mean["ci95"][0] <= -0.125 <= mean["ci95"][1]
    assert data["pass_rate"] == {"base": 0.75, "new": 0.5}
    assert data["mcnemar"] == {"pass_to_fail": 2, "fail_to_pass": 1, "p_value": 1.0}
    assert data["verdict_changes"] == {"fail->pass": 1, "pass->fail": 2}
    assert [(c["eval_id"], c["delta"], c["base_verdict"], c["new_verdict"]) for c in data["cases"]] == [
        ("c2", -0.5, "pass", "fail"),
        ("c4", -0.5, "pass", "fail"),
        ("c3", 0.5, "fail", "pass"),
    ]
    # field_accuracy's counts: a went from 3 TP, 1 FP+FN (F1 0.75) to 4 TP; b from 4 TP to 2 TP, 2 FP+FN
    tests = {
        name: (f.pop("p_value"), f.pop("p_adjusted"), f.pop("f1_delta_ci95")) for name, f in data["fields"].items()
    }
    assert data["fields"] == {
        "a": {"hit_to_miss": [], "miss_to_hit": ["c3"], "base_f1": 0.75, "new_f1": 1.0, "f1_delta": 0.25},
        "b": {"hit_to_miss": ["c2", "c4"], "miss_to_hit": [], "base_f1": 1.0, "new_f1": 0.5, "f1_delta": -0.5},
    }
    assert list(data["fields"]) == ["b", "a"]  # by evidence of change: adjusted p (both 1), then |F1 delta|
    assert tests["a"][:2] == (1.0, 1.0) and tests["b"][:2] == (0.5, 1.0)  # Holm: 2 x 0.5
    low, high = tests["b"][2]["low"], tests["b"][2]["high"]
    assert low <= -0.5 <= high and tests["b"][2]["method"] == "bootstrap"
    assert data["field_tests"] == {"test": "exact McNemar", "correction": "holm", "seed": 20260227, "level": 0.95}
    assert data["gate"] == {
        "max_drop": 0.0,
        "allow_flips": 0,
        "significant_only": False,
        "alpha": 0.05,
        "passed": False,
        "regressions": [
            "2 cases went from pass to not pass (> --allow-flips 0): c2, c4",
            "mean score fell by 0.1250 (> --max-drop 0)",
            "field b: F1 fell by 0.5000 (> --max-drop 0)",
        ],
    }
    assert data["only_in_base"] == data["only_in_new"] == [] and data["errored"] == {} and data["forced"] == []


def test_table_and_markdown(two_runs):
    table = invoke("compare", "base.jsonl", "new.jsonl", "--significant-only")
    assert table.exit_code == 0, table.output
    lines = [line.rstrip() for line in table.stdout.splitlines()]
    assert lines[0] == "4 cases in both files"
    assert lines[1].startswith("mean score 0.875 -> 0.750 (delta -0.125, 95% CI ")
    assert "pass rate 0.750 -> 0.500" in lines
    assert "McNemar: 2 pass->fail, 1 fail->pass, p = 1 (alpha 0.05)" in lines
    body = [" ".join(line.replace("│", " ").split()) for line in lines if line.startswith("│")]
    assert body[:3] == [
        "c2 1.000 0.500 -0.500 pass -> fail",
        "c4 1.000 0.500 -0.500 pass -> fail",
        "c3 0.500 1.000 +0.500 fail -> pass",
    ]
    # ranked by evidence of change (Holm-adjusted p: 1 both, then |F1 delta|), with the F1 delta's interval
    assert [row.split(" [")[0] for row in body[3:]] == ["b 2 0 1.000 0.500 -0.500", "a 0 1 0.750 1.000 +0.250"]
    assert body[3].endswith("0.5 1") and "fields by evidence of change; McNemar p adjusted across fields: Holm" in lines
    assert "b hit->miss: c2, c4" in lines and lines[-1] == "no regression", lines

    md = invoke("compare", "base.jsonl", "new.jsonl", "--format", "md", "--significant-only")
    assert md.exit_code == 0, md.output
    assert md.stdout.startswith("## Compare base.jsonl -&gt; new.jsonl\n\n- 4 cases in both files\n")
    assert "| c2 | 1.000 | 0.500 | -0.500 | pass -> fail |" in md.stdout
    assert "| b | 2 | 0 | 1.000 | 0.500 | -0.500 [" in md.stdout and "**no regression**" in md.stdout
    assert "| field | hit->miss | miss->hit | F1 base | F1 new | F1 delta [95%] | p | p adj. |" in md.stdout


@pytest.mark.parametrize(
    ("options", "code", "reason"),
    [
        ([], 1, "regression: 2 cases went from pass to not pass (> --allow-flips 0): c2, c4"),
        ([], 1, "regression: mean score fell by 0.1250 (> --max-drop 0)"),
        ([], 1, "regression: field b: F1 fell by 0.5000 (> --max-drop 0)"),
        (["--max-drop", "0.5", "--allow-flips", "2"], 0, None),  # the mean fell 0.125, b's F1 0.5, 2 flips
        (["--max-drop", "0.5"], 1, "regression: 2 cases went from pass to not pass (> --allow-flips 0): c2, c4"),
        (["--max-drop", "0.2", "--allow-flips", "2"], 1, "regression: field b: F1 fell by 0.5000 (> --max-drop 0.2)"),
        (["--max-drop", "0.1", "--allow-flips", "2"], 1, "regression: mean score fell by 0.1250 (> --max-drop 0.1)"),
        (["--significant-only"], 0, None),  # McNemar p = 1, b's 2 hit->miss p = 0.5, the interval holds 0
        # b's 2 hit->miss give p = 0.5, adjusted across the 2 fields to 1 (Holm's and BH's alike)
        (["--significant-only", "--alpha", "0.6"], 0, None),
        (["--significant-only", "--alpha", "0.6", "--correction", "bh"], 0, None),
    ],
    ids=[
        "default-flips",
        "default-mean",
        "default-field",
        "loosened",
        "flips-still-gated",
        "field-f1-drop",
        "mean-drop",
        "not-significant",
        "field-adjusted-holm",
        "field-adjusted-bh",
    ],
)
def test_gate_on_real_runs(two_runs, options, code, reason):
    result = invoke("compare", "base.jsonl", "new.jsonl", *options)
    assert result.exit_code == code, result.output
    assert (reason in result.stderr) if reason else ("regression" not in result.stderr)


def write_rows(path: Path, rows: list) -> str:
    path.write_bytes(b"".join(orjson.dumps(row.to_json_dict()) + b"\n" for row in rows))
    return str(path)


def scored(eval_id: str, verdict: str, metrics: dict | None = None, **fields):
    results = [processed_result(name="j", type="code_judge", score=1.0, details={"metrics": metrics or {}})]
    score = {"pass": 1.0, "fail": 0.0}[verdict]
    return make_row(eval_id=eval_id, score=score, verdict=verdict, evaluator_results=results, **fields)


def test_mcnemar_significance_fails_the_gate(tmp_path):
    base = write_rows(tmp_path / "b.jsonl", [scored(f"c{i}", "pass") for i in range(9)])
    new = write_rows(tmp_path / "n.jsonl", [scored(f"c{i}", "fail" if i < 8 else "pass") for i in range(9)])
    # 8 pass->fail, 0 fail->pass: p = 2 / 2**8
    result = invoke("compare", base, new, "--format", "json", "--significant-only")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["mcnemar"] == {"pass_to_fail": 8, "fail_to_pass": 0, "p_value": 0.0078125}
    assert "regression: 8 pass->not pass vs 0 back: McNemar p = 0.007812 < --alpha 0.05" in result.stderr
    assert invoke("compare", base, new, "--significant-only", "--alpha", "0.001").exit_code == 1  # the mean's interval
    assert invoke("compare", base, new, "--significant-only", "--alpha", "0.001", "--max-drop", "1").exit_code == 0


def test_field_f1_drop_from_details_metrics(tmp_path):
    good = {"total": {"tp": 1, "tn": 0, "fp": 0, "fn": 0}}
    bad = {"total": {"tp": 0, "tn": 0, "fp": 1, "fn": 1}}
    base = write_rows(tmp_path / "b.jsonl", [scored(f"c{i}", "pass", good) for i in range(4)])
    new = write_rows(tmp_path / "n.jsonl", [scored(f"c{i}", "pass", good if i else bad) for i in range(4)])
    result = invoke("compare", base, new, "--format", "json", "--max-drop", "0.1")
    assert result.exit_code == 1, result.output
    field = json.loads(result.stdout)["fields"]["total"]
    assert (field["base_f1"], round(field["new_f1"], 6), round(field["f1_delta"], 6)) == (1.0, 0.75, -0.25)
    assert "regression: field total: F1 fell by 0.2500 (> --max-drop 0.1)" in result.stderr


def test_cases_in_one_file_and_error_rows_are_listed_not_compared(tmp_path):
    base = write_rows(tmp_path / "b.jsonl", [scored("c1", "pass"), scored("c2", "pass"), scored("gone", "pass")])
    errored = make_row(eval_id="c2", status="error", score=0.0, verdict="fail", error="target failed")
    new = write_rows(tmp_path / "n.jsonl", [scored("c1", "pass"), errored, scored("added", "fail")])
    result = invoke("compare", base, new)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == ["regression: 1 case with a new error: c2"]  # fails in every mode
    assert invoke("compare", base, new, "--significant-only", "--max-drop", "1").exit_code == 1
    assert result.stdout.splitlines()[:5] == [
        "1 cases in both files",
        "mean score 1.000 -> 1.000 (delta +0.000, 95% CI +0.000 .. +0.000)",
        "pass rate 1.000 -> 1.000",
        "McNemar: 0 pass->fail, 0 fail->pass, p = 1 (alpha 0.05)",
        "1 only in BASE: gone",
    ]
    assert "1 only in NEW: added" in result.stdout and "1 errored (not compared): c2" in result.stdout
    data = json.loads(invoke("compare", base, new, "--format", "json").stdout)
    assert data["errored"] == {"c2": "new"} and data["only_in_new"] == ["added"]


def test_bad_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_rows(tmp_path / "a.jsonl", [scored("c1", "pass")])
    write_rows(tmp_path / "other.jsonl", [scored("x1", "pass")])
    (tmp_path / "cut.jsonl").write_bytes((tmp_path / "a.jsonl").read_bytes()[:-20])
    cases = [
        (["a.jsonl", "a.jsonl"], "error: BASE and NEW are the same file: a.jsonl"),
        (["a.jsonl", "nope.jsonl"], "error: NEW results file not found: nope.jsonl"),
        (
            ["a.jsonl", "other.jsonl"],
            "error: no case id is in both files (1 in BASE, 1 in NEW): not the same dataset\n"
            "hint: compare runs of one dataset, or pass --force to compare them anyway",
        ),
        (["a.jsonl", "a.jsonl", "--format", "csv"], "error: invalid --format 'csv': choose table, json or md"),
        (["a.jsonl", "other.jsonl", "--max-drop", "2"], "error: invalid --max-drop 2: a score drop between 0 and 1"),
        (["a.jsonl", "other.jsonl", "--alpha", "0"], "error: invalid --alpha 0: a significance level between 0 and 1"),
        (
            ["a.jsonl", "other.jsonl", "--allow-flips", "-1"],
            "error: invalid --allow-flips -1: a number of cases, 0 or more",
        ),
    ]
    for args, message in cases:
        result = invoke("compare", *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(message), (args, result.stderr)
    cut = invoke("compare", "a.jsonl", "cut.jsonl")
    assert cut.exit_code == 2
    assert cut.stderr.startswith("error: NEW cut.jsonl:1: not JSON: ")
    assert "hint: the file was cut short or is not a results file" in cut.stderr
    forced = invoke("compare", "a.jsonl", "other.jsonl", "--force")
    assert forced.exit_code == 0, forced.output
    assert "warning: no case id is in both files (1 in BASE, 1 in NEW): not the same dataset (--force)" in forced.stderr


def test_runs_of_different_datasets_are_refused_by_manifest(ws):
    ws.cli_target("cat {FILES}")
    run(ws, BASE_ANSWERS, "base.jsonl")
    run(ws, BASE_ANSWERS, "other.jsonl", dataset="other.yaml")
    result = invoke("compare", "base.jsonl", "other.jsonl")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: different datasets: BASE ran 'dataset' ({ws.root}/dataset.yaml), "
        f"NEW ran 'other' ({ws.root}/other.yaml)"
    )
    assert invoke("compare", "base.jsonl", "other.jsonl", "--force").exit_code == 0


def field_row(eval_id: str, **statuses: str):
    """A field_accuracy row: each keyword a field and its status (hit or miss)."""
    fields = [
        {"path": path, "match": "exact", "expected": 1, "actual": 1 if status == "hit" else 2, "status": status}
        for path, status in statuses.items()
    ]
    score = sum(status == "hit" for status in statuses.values()) / len(statuses)
    results = [processed_result(name="fa", type="field_accuracy", score=score, details={"fields": fields})]
    return make_row(eval_id=eval_id, score=score, verdict="pass" if score == 1 else "fail", evaluator_results=results)


def test_hostile_case_ids_round_trip_and_stay_plain_text(tmp_path):
    ids = ["nul\x00id", "new\nline", "[bold]markup[/bold]", "ünï \u202e rtl", "x" * 5000, "a|b`c"]
    ids += ["![img](http://x/a.png)", "[link](javascript:alert(1))", "<img src=x onerror=alert(1)>"]
    base = write_rows(tmp_path / "b.jsonl", [field_row(i, f="hit") for i in ids])
    new = write_rows(tmp_path / "n.jsonl", [field_row(i, f="miss") for i in ids])
    data = json.loads(invoke("compare", base, new, "--format", "json").stdout)
    assert sorted(c["eval_id"] for c in data["cases"]) == sorted(ids)
    assert data["fields"]["f"]["hit_to_miss"] == sorted(ids)
    table = invoke("compare", base, new)
    assert "[bold]markup[/bold]" in table.stdout and "nul\\x00id" in table.stdout and "\x00" not in table.stdout
    markdown = invoke("compare", base, new, "--format", "md").stdout
    assert "a\\|b\\`c" in markdown and "new↵line" in markdown and "\u202e" not in markdown
    assert "![" not in markdown and "](" not in markdown.replace("\\](", "") and "<img" not in markdown
    assert "!\\[img\\](http://x/a.png)" in markdown and "&lt;img src=x onerror=alert(1)&gt;" in markdown


def test_the_last_row_of_a_case_counts(tmp_path):
    """A resumed run holds a case twice: its last row is the one compared, field moves included."""
    base = write_rows(tmp_path / "b.jsonl", [field_row("c1", f="hit", g="hit")])
    new = write_rows(
        tmp_path / "n.jsonl",
        [field_row("c1", f="miss", g="miss"), field_row("c1", f="hit", g="miss")],
    )
    data = json.loads(invoke("compare", base, new, "--format", "json").stdout)
    assert data["fields"]["f"]["hit_to_miss"] == [] and data["fields"]["g"]["hit_to_miss"] == ["c1"]
    assert data["fields"]["f"]["new_f1"] == 1.0  # counts from the last row only
    assert [c["new_score"] for c in data["cases"]] == [0.5]


def test_many_changes_are_streamed_in_order_and_the_store_is_deleted(tmp_path, monkeypatch):
    store_root = tmp_path / "tmp"
    store_root.mkdir()
    monkeypatch.setenv("TMPDIR", str(store_root))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    n = 5000
    base = write_rows(tmp_path / "b.jsonl", [field_row(f"c{i:05d}", f="hit", g="hit") for i in range(n)])
    new = write_rows(
        tmp_path / "n.jsonl", [field_row(f"c{i:05d}", f="miss" if i % 2 else "hit", g="hit") for i in range(n)]
    )
    result = invoke("compare", base, new, "--format", "json")
    data = json.loads(result.stdout)
    assert len(data["cases"]) == n // 2 and data["paired_cases"] == n
    assert data["fields"]["f"]["hit_to_miss"] == [f"c{i:05d}" for i in range(1, n, 2)]
    g = data["fields"]["g"]
    assert {key: g[key] for key in ("hit_to_miss", "miss_to_hit", "base_f1", "new_f1", "f1_delta", "p_value")} == {
        "hit_to_miss": [],
        "miss_to_hit": [],
        "base_f1": 1.0,
        "new_f1": 1.0,
        "f1_delta": 0.0,
        "p_value": 1.0,
    }
    assert list(store_root.iterdir()) == []
    assert invoke("compare", base, str(tmp_path / "missing.jsonl")).exit_code == 2
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(Path(new).read_bytes()[:-5])
    assert invoke("compare", base, str(cut)).exit_code == 2
    assert list(store_root.iterdir()) == []  # deleted on errors too


def test_a_field_wrong_in_every_case_is_a_regression_for_compare_and_the_baseline_gate(ws):
    """A field that collapses (F1 1 -> 0: wrong in every case, the rest right) fails `compare
    --max-drop` and `eval --baseline --max-drop`; before, its F1 was undefined and nothing failed."""
    ws.cli_target("cat {FILES}")
    run(ws, {c: {"a": 1, "b": 2} for c in ("c1", "c2", "c3")}, "base.jsonl")
    run(ws, {c: {"a": 1, "b": 3} for c in ("c1", "c2", "c3")}, "new.jsonl")
    compared = invoke("compare", "base.jsonl", "new.jsonl", "--max-drop", "0.05")
    assert compared.exit_code == 1, compared.output
    assert "regression: field b: F1 fell by 1.0000 (> --max-drop 0.05)" in compared.stderr
    gated = invoke("eval", "dataset.yaml", "--out", "again.jsonl", "--baseline", "base.jsonl", "--max-drop", "0.05")
    assert gated.exit_code == 1, gated.output
    lines = gated.stderr.splitlines()
    assert "gate field a f1 drop vs baseline: 0.000 (<= 0.05) passed" in lines
    assert "gate field b f1 drop vs baseline: 1.000 (<= 0.05) failed" in lines


def test_runs_of_which_one_has_no_field_results_are_refused(tmp_path):
    with_fields = {"total": {"tp": 1, "tn": 0, "fp": 0, "fn": 0}}
    base = write_rows(tmp_path / "b.jsonl", [scored(f"c{i}", "pass", with_fields) for i in range(3)])
    new = write_rows(tmp_path / "n.jsonl", [scored(f"c{i}", "pass") for i in range(3)])
    for args, message in (
        ([base, new], "error: NEW has no per-field result in its 3 scored rows, and BASE has them for 1 field"),
        ([new, base], "error: BASE has no per-field result in its 3 scored rows, and NEW has them for 1 field"),
    ):
        result = invoke("compare", *args)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [
            message + ": the runs were not scored by the same evaluators",
            "hint: compare runs of one evaluator configuration, or re-score one with the other's dataset "
            "(agentv rescore)",
        ]
