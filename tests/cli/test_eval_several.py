"""`agentv eval` over several datasets, directories and globs (issue 27, point 10): each dataset
runs in turn with its own results file and summary; one exit code, the worst."""

from __future__ import annotations

from tests.cli.test_eval import invoke

SUITE = "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\nevalcases:\n"


def dataset(ws, name: str, cases: str) -> None:
    ws.file(name, SUITE + cases)


GOOD = "  - {id: g1, expected_output: {a: 1}}\n"
BAD = "  - {id: b1, expected_output: {a: 1}, bogus: 1}\n"


def test_a_directory_runs_every_dataset_below_it_each_with_its_summary(ws):
    dataset(ws, "evals/one.yaml", GOOD)
    dataset(ws, "evals/sub/two.yaml", "  - {id: t1, expected_output: {a: 2}}\n  - {id: t2, expected_output: {a: 3}}\n")
    ws.file("evals/notes.yaml", "just: notes\n")  # not a dataset: passed over
    result = invoke("eval", "evals", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "agentv: 1 case of 'one'" in result.stderr and "agentv: 2 cases of 'two'" in result.stderr
    assert result.stdout.count("Totals: ") == 2
    assert result.stdout.splitlines()[-3:] == [
        "Datasets: 2 of 2 run",
        "  evals/one.yaml: gate passed (exit 0)",
        "  evals/sub/two.yaml: gate passed (exit 0)",
    ]
    assert len(list((ws.root / ".agentv" / "results").glob("*.jsonl"))) == 2


def test_one_bad_dataset_is_said_and_the_others_run_the_exit_code_is_the_worst(ws):
    dataset(ws, "a.yaml", GOOD)
    dataset(ws, "b.yaml", BAD)
    result = invoke("eval", "a.yaml", "b.yaml", "--dry-run")
    assert result.exit_code == 2
    assert "error: b.yaml: " in result.stderr and "unknown key 'bogus'" in result.stderr
    assert result.stdout.count("Totals: ") == 1
    assert result.stdout.splitlines()[-2:] == [
        "  a.yaml: gate passed (exit 0)",
        "  b.yaml: not run (a usage or configuration error) (exit 2)",
    ]


def test_a_quoted_glob(ws):
    dataset(ws, "d1.yaml", GOOD)
    dataset(ws, "d2.yaml", GOOD)
    result = invoke("eval", "d*.yaml", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Datasets: 2 of 2 run" in result.stdout


def test_options_naming_one_file_are_refused_with_several_datasets(ws):
    dataset(ws, "a.yaml", GOOD)
    dataset(ws, "b.yaml", GOOD)
    result = invoke("eval", "a.yaml", "b.yaml", "--out", "o.jsonl", "--junit", "j.xml", "--dry-run")
    assert result.exit_code == 2
    assert "error: --out, --junit name one file, and 2 datasets were given" in result.stderr
    assert not (ws.root / "o.jsonl").exists()


def test_a_glob_or_directory_that_stands_for_no_dataset_is_a_usage_error(ws):
    (ws.root / "empty").mkdir()
    for argument in ("nothing-*.yaml", "empty"):
        result = invoke("eval", argument, "--dry-run")
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"error: {argument}: ")


def test_a_multi_line_error_keeps_its_lines(ws):
    dataset(ws, "a.yaml", GOOD)
    result = invoke("eval", "a.yaml", "missing.yaml", "--dry-run")
    assert result.exit_code == 2
    assert "\\n" not in result.stderr
    assert "error: missing.yaml: " in result.stderr
