"""`agentv eval --repeat K / --rejudge J` (docs/statistics.md#repeats): every case run K times with
the rows saying which run, the summary's and metrics' pass^K, pass@K and flaky cases and fields,
the cache keyed by run, --resume finishing the missing runs, and every bad combination refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_eval import invoke, rows

# A target whose answer to a case depends on how often the case was asked: `flaky` cases get `b`
# wrong on every second call. Each call is counted in `calls/<case>` and logged in `calls.log`.
FLAKY = """
import json, pathlib, sys
case = pathlib.Path(sys.argv[1]).stem
answer = json.loads(pathlib.Path(sys.argv[1]).read_text())
calls = pathlib.Path("calls"); calls.mkdir(exist_ok=True)
counter = calls / case
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
with open("calls.log", "a") as log:
    log.write(case + "\\n")
if answer.pop("flaky", False) and n % 2 == 0:
    answer["b"] = -1
print(json.dumps(answer))
"""


@pytest.fixture
def flaky(ws):
    ws.file("flaky.py", FLAKY)
    ws.cli_target("python3 flaky.py {FILES}")
    ws.cases_dataset(
        [
            ("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2}),
            ("c2", {"a": 1, "b": 2, "flaky": True}, {"a": 1, "b": 2}),
            ("c3", {"a": 5, "b": 2}, {"a": 1, "b": 2}),
        ]
    )
    return ws


def _calls(ws) -> list[str]:
    log = ws.root / "calls.log"
    return log.read_text().split() if log.exists() else []


def _runs(path: str | Path) -> list[tuple[str, int | None, int | None]]:
    return [(row["eval_id"], row.get("repeat"), row.get("rejudge")) for row in rows(path)]


def test_each_case_runs_k_times_and_its_rows_say_which_run(flaky):
    result = invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "out.jsonl")
    assert result.exit_code == 1, result.output  # c3 fails every run, c2 one of three
    assert _runs("out.jsonl") == [(c, r, None) for r in (1, 2, 3) for c in ("c1", "c2", "c3")]
    verdicts = {(row["eval_id"], row["repeat"]): row["verdict"] for row in rows("out.jsonl")}
    assert [verdicts[("c2", r)] for r in (1, 2, 3)] == ["pass", "fail", "pass"]
    manifest = json.loads(Path("out.jsonl.meta.json").read_text())
    assert manifest["repeats"] == 3 and "rejudges" not in manifest and manifest["counts"]["selected"] == 9
    out = result.stdout
    assert "Totals: 9 rows of 3 cases  5 passed  0 partial  4 failed" in out
    assert "Repeats: 3 runs of each of 3 cases: pass^3 0.33 [" in out and "pass@3 0.67 [" in out
    assert "Flaky cases (between runs): 1 of 3 flipped: c2 (2 of 3 passed)" in out
    assert "Flaky fields (between runs, flip rate): b 0.33 [" in out
    assert "c2 #2" in out  # the table names the run
    assert "agentv: 3 cases of 'dataset' (3 runs each) against target 't'" in result.stderr


def test_metrics_of_a_repeated_run_list_pass_k_flip_rates_and_cluster_the_bootstrap(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "4", "--workers", "1", "--out", "out.jsonl")
    result = invoke("metrics", "out.jsonl", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    repeats = data["repeats"]
    assert (repeats["repeats"], repeats["cases"], repeats["complete_cases"]) == (4, 3, 3)
    assert (repeats["pass_all"], repeats["pass_any"]) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert repeats["runs"]["flaky"] == [{"eval_id": "c2", "passed": 2, "runs": 4}]
    assert repeats["per_case"] == {
        "c1": {"passed": 4, "runs": 4, "pass_all": True, "pass_any": True},
        "c2": {"passed": 2, "runs": 4, "pass_all": False, "pass_any": True},
        "c3": {"passed": 0, "runs": 4, "pass_all": False, "pass_any": False},
    }
    assert repeats["runs"]["fields"]["b"] == {
        "documents": 3,
        "flipped": 1,
        "flip_rate": pytest.approx(1 / 3),
        "interval": repeats["runs"]["fields"]["b"]["interval"],
    }
    assert repeats["runs"]["flaky_fields"] == ["b"]
    assert data["intervals"]["documents"] == 3  # a case's four runs are one document of the bootstrap
    table = invoke("metrics", "out.jsonl")
    assert "Flaky cases (between runs): 1 of 3 flipped: c2 (2 of 4 passed)" in table.stdout
    assert "Flips between runs" in table.stdout
    assert (
        "Cases not passing every run: c2 (2 of 4: pass^4 no, pass@4 yes), c3 (0 of 4: pass^4 no, pass@4 no)"
    ) in table.stdout.replace("\n", " ")


def test_the_cache_keeps_each_run_apart_and_replays_it(flaky):
    first = invoke("eval", "dataset.yaml", "--repeat", "2", "--workers", "1", "--cache", "--out", "a.jsonl")
    assert first.exit_code == 1 and len(_calls(flaky)) == 6
    again = invoke("eval", "dataset.yaml", "--repeat", "2", "--workers", "1", "--cache", "--out", "b.jsonl")
    assert len(_calls(flaky)) == 6, "every run came from the cache"
    assert "Cache: 6 of 6 answers from the cache" in again.stdout
    answers = {(r["eval_id"], r["repeat"]): r["candidate_answer"] for r in rows("a.jsonl")}
    assert {(r["eval_id"], r["repeat"]): r["candidate_answer"] for r in rows("b.jsonl")} == answers
    assert answers[("c2", 1)] != answers[("c2", 2)]  # run 2's own answer, not run 1's
    three = invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--cache", "--out", "c.jsonl")
    assert three.exit_code == 1 and len(_calls(flaky)) == 9  # only the third runs were asked


def test_resume_runs_only_the_missing_runs_of_a_repeated_run(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "out.jsonl")
    lines = Path("out.jsonl").read_text().splitlines(keepends=True)
    Path("out.jsonl").write_text("".join(lines[:4]))  # as if stopped after 4 of 9 rows
    result = invoke("eval", "dataset.yaml", "--resume", "out.jsonl", "--workers", "1")
    assert "resuming out.jsonl (4 rows kept): 5 case runs of 'dataset' (3 runs each)" in result.stderr
    assert sorted(_runs("out.jsonl")) == sorted((c, r, None) for r in (1, 2, 3) for c in ("c1", "c2", "c3"))
    assert len(_calls(flaky)) == 9 + 5
    done = invoke("eval", "dataset.yaml", "--resume", "out.jsonl", "--repeat", "3")
    assert "nothing left to run" in done.stderr and len(_calls(flaky)) == 14


def test_rejudge_scores_one_answer_j_times(flaky):
    result = invoke("eval", "dataset.yaml", "--rejudge", "2", "--workers", "1", "--out", "out.jsonl")
    assert result.exit_code == 1, result.output
    assert _runs("out.jsonl") == [(c, None, j) for c in ("c1", "c2", "c3") for j in (1, 2)]
    assert len(_calls(flaky)) == 3  # the target answered each case once
    by_case = {}
    for row in rows("out.jsonl"):
        by_case.setdefault(row["eval_id"], set()).add(row["candidate_answer"])
    assert all(len(answers) == 1 for answers in by_case.values())
    assert json.loads(Path("out.jsonl.meta.json").read_text())["rejudges"] == 2
    assert "Judge noise (--rejudge 2): 0 of 3 answers got another verdict from another scoring" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeat", "0"], "error: --repeat 0: every case runs and is scored at least once"),
        (["--rejudge", "0"], "error: --rejudge 0: every case runs and is scored at least once"),
        (["--repeat", "-2"], "error: --repeat -2: every case runs and is scored at least once"),
        (["--repeat", "101"], "error: --repeat 101: at most 100"),
        (
            ["--repeat", "2", "--stop-early"],
            "error: --stop-early decides on one run of each case: run --repeat 2 without it",
        ),
        (
            ["--repeat", "2", "--baseline", "dataset.yaml"],
            "error: --repeat 2 goes without --baseline: compare the repeated runs with agentv compare BASE RESULTS",
        ),
    ],
    ids=["repeat-0", "rejudge-0", "repeat-negative", "repeat-101", "with-stop-early", "with-baseline"],
)
def test_bad_repeat_options_are_refused_with_exit_2(flaky, args, message):
    result = invoke("eval", "dataset.yaml", *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == message
    assert _calls(flaky) == []


def test_resume_refuses_a_repeat_count_its_run_did_not_have(flaky):
    invoke("eval", "dataset.yaml", "--workers", "1", "--out", "once.jsonl")
    result = invoke("eval", "dataset.yaml", "--resume", "once.jsonl", "--repeat", "3")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "error: cannot resume from once.jsonl: --repeat 3, but its run ran each case once",
        "hint: resume it without --repeat, or start a new run with --repeat 3",
    ]
    invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "thrice.jsonl")
    other = invoke("eval", "dataset.yaml", "--resume", "thrice.jsonl", "--repeat", "2")
    assert other.exit_code == 2
    assert other.stderr.splitlines()[0] == (
        "error: cannot resume from thrice.jsonl: --repeat 2, but its run ran each case 3 times"
    )
    rerun = invoke("eval", "dataset.yaml", "--rerun-failed", "thrice.jsonl", "--out", "again.jsonl")
    assert rerun.exit_code == 2
    assert rerun.stderr.splitlines()[0] == (
        "error: cannot re-run cases of thrice.jsonl: its run was repeated (--repeat 3): "
        "--rerun-failed re-runs a case's one row"
    )


def test_a_results_file_mixing_repeated_and_single_rows_is_refused(flaky):
    invoke("eval", "dataset.yaml", "--workers", "1", "--out", "once.jsonl")
    invoke("eval", "dataset.yaml", "--repeat", "2", "--workers", "1", "--out", "twice.jsonl")
    Path("mixed.jsonl").write_text(Path("once.jsonl").read_text() + Path("twice.jsonl").read_text())
    result = invoke("metrics", "mixed.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "error: mixed.jsonl: line 4 is a row of a repeated run (it has `repeat` or `rejudge`) and line 1 is not: "
        "a results file holds one run's rows, all repeated or none",
        "hint: pass the results file of one run (agentv merge joins the shards of one run)",
    ]


def _dataset(ws, answers: dict[str, dict]) -> None:
    ws.cases_dataset([(case, answer, {"a": 1, "b": 2}) for case, answer in answers.items()])


def test_compare_of_repeated_runs_gates_on_falls_beyond_each_cases_noise(flaky):
    right = {"a": 1, "b": 2}
    cases = {f"c{i}": right for i in range(1, 7)}
    _dataset(flaky, cases)
    assert invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "base.jsonl").exit_code == 0
    # NEW: c1 wrong in every run (3/3 -> 0/3: beyond noise), c2 wrong in one of three (within noise)
    _dataset(flaky, {**cases, "c1": {"a": 1, "b": 0}, "c2": {**right, "flaky": True}})
    for counter in (flaky.root / "calls").iterdir():
        counter.unlink()
    invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "new.jsonl")
    result = invoke("compare", "base.jsonl", "new.jsonl")
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "Repeated runs: BASE 3 runs of each case, NEW 3; 6 cases in both" in out
    assert "Pass rate fell beyond the runs' noise (one-sided Fisher p <= 0.05): c1 3/3 -> 0/3 (p = 0.05)" in out
    assert "Pass rate fell within the runs' noise: c2 3/3 -> 2/3 (p = 0.5)" in out
    assert result.stderr.splitlines()[0] == (
        "regression: 1 case whose pass rate fell beyond its runs' noise (one-sided Fisher exact p <= --alpha 0.05; "
        "> --allow-flips 0): c1 3/3 -> 0/3 (p = 0.05)"
    )
    data = json.loads(invoke("compare", "base.jsonl", "new.jsonl", "-f", "json").stdout)
    assert data["repeated"] and [c["eval_id"] for c in data["fell_within_noise"]] == ["c2"]
    assert data["pass_all"] == {"base": 1.0, "new": pytest.approx(4 / 6)}
    assert data["pass_any"] == {"base": 1.0, "new": pytest.approx(5 / 6)}
    assert data["per_case"]["c2"]["new"] == {"passed": 2, "runs": 3, "pass_all": False, "pass_any": True}
    assert "pass^K (every run passed): 1.000 -> 0.667 (delta -0.333); pass@K (some run passed): 1.000 -> 0.833" in out
    # 4 wrong values of 18, each a FP and a FN
    assert data["fields"]["b"]["f1_delta"] == pytest.approx(2 * 14 / (2 * 14 + 4 + 4) - 1)
    tolerant = invoke("compare", "base.jsonl", "new.jsonl", "--significant-only", "-f", "json")
    assert json.loads(tolerant.stdout)["cases_adjusted"] == "holm"
    assert [c["eval_id"] for c in json.loads(tolerant.stdout)["regressed"]] == []  # Holm over 6 cases: 0.05 * 6
    same = invoke("compare", "base.jsonl", "base.jsonl")
    assert same.exit_code == 2  # the same file twice, as for single runs


def test_compare_refuses_a_file_mixing_repeated_and_single_rows(flaky):
    invoke("eval", "dataset.yaml", "--workers", "1", "--out", "once.jsonl")
    invoke("eval", "dataset.yaml", "--repeat", "2", "--workers", "1", "--out", "twice.jsonl")
    Path("mixed.jsonl").write_text(Path("twice.jsonl").read_text() + Path("once.jsonl").read_text())
    result = invoke("compare", "twice.jsonl", "mixed.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "error: NEW mixed.jsonl: line 1 is a row of a repeated run (it has `repeat` or `rejudge`) and line 7 is not: "
        "a results file holds one run's rows, all repeated or none"
    )


def test_explain_lists_a_repeated_cases_runs_and_explains_the_first_that_did_not_pass(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "out.jsonl")
    result = invoke("explain", "out.jsonl", "c2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "case c2: ok, fail, score 0.500"
    assert lines[1] == "runs: 2 of 3 passed (pass^3 no, pass@3 yes): #1 pass 1.000, #2 fail 0.500, #3 pass 1.000"
    assert lines[2] == "fields that differed between runs: b (#1 hit, #2 miss, #3 hit)"
    assert lines[3] == "explaining run #2 (the first that did not pass); --run N explains another"
    first = invoke("explain", "out.jsonl", "c2", "--run", "1")
    assert first.stdout.splitlines()[0] == "case c2: ok, pass, score 1.000"
    missing = invoke("explain", "out.jsonl", "c2", "--run", "4")
    assert missing.exit_code == 2
    assert missing.stderr.splitlines() == ["error: case 'c2' has no run 4 in out.jsonl", "hint: its runs: 1, 2, 3"]


def test_the_html_report_lists_every_run_and_the_repeats_section(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "2", "--workers", "1", "--out", "out.jsonl")
    result = invoke("report", "out.jsonl", "--out", "page.html")
    assert result.exit_code == 0, result.output
    page = Path("page.html").read_text()
    assert "Repeats: 2 runs of each of 3 cases: pass^2 0.33 [" in page
    assert "Flaky cases (between runs): 1 of 3 flipped: c2 (1 of 2 passed)" in page
    assert '["c1 #1",' in page and '["c2 #2",' in page  # each run an entry of the case table, in dataset order
    assert '<tr><td>c2</td><td class="num">1 of 2</td><td>no</td><td>yes</td></tr>' in page
    assert page.index('["c1 #1",') < page.index('["c1 #2",') < page.index('["c2 #1",')
    Path("mixed.jsonl").write_text(Path("out.jsonl").read_text() + rows_text_once(flaky))
    mixed = invoke("report", "mixed.jsonl", "--out", "mixed.html")
    assert mixed.exit_code == 2 and "a results file holds one run's rows, all repeated or none" in mixed.stderr


def rows_text_once(ws) -> str:
    invoke("eval", "dataset.yaml", "--workers", "1", "--out", "once.jsonl")
    return Path("once.jsonl").read_text()


def test_plan_size_of_a_repeated_run_measures_each_documents_run_to_run_noise(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "4", "--workers", "1", "--out", "out.jsonl")
    result = invoke("plan-size", "out.jsonl", "--detect", "0.05", "-f", "json")
    plans = {p["metric"]: p for p in json.loads(result.stdout)["plans"]}
    measured = "repeated runs (4 runs of each document: their run-to-run differences)"
    # c2 scored 1, 0.5, 1, 0.5 (variance 1/12), c1 and c3 the same every run: sd = sqrt(2 * mean of 1/12, 0, 0)
    assert plans["mean score"]["sd"] == pytest.approx((2 * (1 / 12) / 3) ** 0.5)
    assert plans["mean score"]["measured"] == measured and plans["mean score"]["documents"] == 3
    assert plans["F1 a"]["measured"].startswith(measured + "; below the least the drop brings")  # a never flips
    assert plans["F1 b"]["sd"] > plans["F1 a"]["sd"]  # b flips on c2
    against = invoke("plan-size", "out.jsonl", "--against", "out.jsonl", "--detect", "0.05")
    assert against.exit_code == 2
    assert against.stderr.splitlines()[0] == (
        "error: out.jsonl is a repeated run: its own runs measure the run-to-run noise; plan from it alone "
        "(without --against)"
    )


def test_junit_and_the_step_summary_name_each_run(flaky):
    result = invoke(
        "eval",
        "dataset.yaml",
        "--repeat",
        "2",
        "--workers",
        "1",
        "--out",
        "out.jsonl",
        "--junit",
        "junit.xml",
        "--summary-md",
        "summary.md",
    )
    assert result.exit_code == 1
    junit = Path("junit.xml").read_text()
    assert 'name="c2 #1"' in junit and 'name="c2 #2"' in junit
    summary = Path("summary.md").read_text()
    assert "- Repeats: 2 runs of each of 3 cases: pass^2 0.33 \\[" in summary  # Markdown-escaped
    assert "- Flaky cases (between runs): 1 of 3 flipped: c2 (1 of 2 passed)" in summary


def test_a_repeated_run_as_baseline_is_refused(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "2", "--workers", "1", "--out", "twice.jsonl")
    result = invoke("eval", "dataset.yaml", "--baseline", "twice.jsonl", "--out", "now.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "error: --baseline twice.jsonl is a repeated run (line 1 has `repeat` or `rejudge`): a gate against it "
        "counts every run of a case",
        "hint: compare the runs with agentv compare twice.jsonl RESULTS, which does",
    ]


def test_shards_of_a_repeated_run_merge_and_a_missing_run_is_named(flaky):
    for k in (1, 2):
        invoke("eval", "dataset.yaml", "--repeat", "2", "--shard", f"{k}/2", "--workers", "1", "--out", f"s{k}.jsonl")
    result = invoke("merge", "s1.jsonl", "s2.jsonl", "--out", "all.jsonl")
    assert result.exit_code == 1, result.output  # c2 and c3 do not pass every run: the default gate
    assert sorted(_runs("all.jsonl")) == sorted((c, r, None) for c in ("c1", "c2", "c3") for r in (1, 2))
    manifest = json.loads(Path("all.jsonl.meta.json").read_text())
    assert manifest["repeats"] == 2 and sorted(manifest["dataset"]["case_ids"]) == ["c1", "c2", "c3"]
    shard = Path("s1.jsonl").read_text().splitlines(keepends=True)
    Path("s1.jsonl").write_text("".join(shard[:-1]))  # a run of a case lost
    lost = json.loads(shard[-1])["eval_id"]
    cut = invoke("merge", "s1.jsonl", "s2.jsonl", "--out", "cut.jsonl", "--dataset", "dataset.yaml")
    assert cut.exit_code == 1, cut.output
    assert f"have no row: '{lost}'" in cut.stderr
    invoke("eval", "dataset.yaml", "--repeat", "3", "--shard", "2/2", "--workers", "1", "--out", "s3.jsonl")
    other = invoke("merge", "s1.jsonl", "s3.jsonl", "--out", "other.jsonl")
    assert other.exit_code == 2
    assert other.stderr.splitlines()[0] == (
        "error: the runs were not repeated alike: s1.jsonl ran each case 2 times, s3.jsonl ran each case 3 times"
    )


def test_rescore_keeps_each_run_and_rejudge_scores_each_stored_answer_again(flaky):
    invoke("eval", "dataset.yaml", "--repeat", "3", "--workers", "1", "--out", "out.jsonl")
    answers = {(r["eval_id"], r["repeat"]): r["candidate_answer"] for r in rows("out.jsonl")}
    result = invoke("rescore", "out.jsonl", "--dataset", "dataset.yaml", "--out", "again.jsonl")
    assert result.exit_code == 1, result.output
    assert {(r["eval_id"], r["repeat"]): r["candidate_answer"] for r in rows("again.jsonl")} == answers
    assert "Flaky cases (between runs): 1 of 3 flipped: c2 (2 of 3 passed)" in result.stdout
    assert len(_calls(flaky)) == 9  # no target call
    twice = invoke("rescore", "out.jsonl", "--dataset", "dataset.yaml", "--rejudge", "2", "--out", "twice.jsonl")
    assert twice.exit_code == 1, twice.output
    assert sorted(_runs("twice.jsonl")) == sorted(
        (c, r, j) for c in ("c1", "c2", "c3") for r in (1, 2, 3) for j in (1, 2)
    )
    manifest = json.loads(Path("twice.jsonl.meta.json").read_text())
    assert (manifest["repeats"], manifest["rejudges"]) == (3, 2)
    Path("mixed.jsonl").write_text(Path("out.jsonl").read_text() + rows_text_once(flaky))
    mixed = invoke("rescore", "mixed.jsonl", "--dataset", "dataset.yaml", "--out", "m.jsonl")
    assert mixed.exit_code == 2
    assert mixed.stderr.splitlines()[0] == (
        "error: mixed.jsonl: line 1 is a row of a repeated run (it has `repeat` or `rejudge`) and line 10 is not: "
        "a results file holds one run's rows, all repeated or none"
    )
