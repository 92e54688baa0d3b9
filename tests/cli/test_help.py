"""Help text is API: plain click-style help, no type tags, each command's own exit codes, -V."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from agentv_py import __version__
from agentv_py.cli import app
from tests.conftest import REPO_ROOT

COMMANDS = (
    [],
    ["eval"],
    ["validate"],
    ["metrics"],
    ["cache"],
    ["cache", "stats"],
    ["cache", "clear"],
    ["rescore"],
    ["compare"],
)
TYPE_TAG = re.compile(r"<(bool|str|int|float|path|list|Path)\b[^>]*>")


def help_text(args: list[str], columns: int = 100) -> str:
    """`agentv ARGS --help` as a program with stdout a pipe (Typer's CliRunner forces 80 columns)."""
    result = subprocess.run(
        [sys.executable, "-m", "agentv_py", *args, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": str(columns), "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def flat(text: str) -> str:
    """The text with every run of whitespace (line breaks and indents too) made one space."""
    return " ".join(text.split())


def exit_codes(text: str) -> list[int]:
    section = text.split("Exit codes", 1)[1]
    return [int(code) for code in re.findall(r"^  (\d+) {2,}\S", section, flags=re.MULTILINE)]


@pytest.mark.parametrize(
    "args",
    COMMANDS,
    ids=["agentv", "eval", "validate", "metrics", "cache", "cache-stats", "cache-clear", "rescore", "compare"],
)
@pytest.mark.parametrize("columns", [60, 100])
def test_no_type_tags_and_nothing_wider_than_the_terminal(args, columns):
    text = help_text(args, columns)
    assert not TYPE_TAG.search(text), text
    assert "─" not in text and "╭" not in text  # no Rich panels
    assert all(len(line) <= columns for line in text.splitlines())


def test_options_read_with_their_metavars():
    text = help_text(["eval"])
    assert "Usage: agentv eval [OPTIONS] DATASET...\n" in text
    assert "\n  DATASET...  Dataset files (YAML, or JSONL: one case per line), directories" in text
    for name in (
        "-w, --workers N ",
        "-e, --eval-id GLOB ",
        "-o, --out PATH ",
        "--target NAME ",
        "--targets PATH ",
        "--threshold X ",
        "--max-retries N ",
        "--judge-target NAME ",
        "--resume RESULTS ",
        "--rerun-failed RESULTS ",
        "--retry-errors RESULTS ",
        "--junit FILE ",
        "--summary-md FILE ",
    ):
        assert f"\n  {name}" in text, name
    assert "--junit-per-field With --junit: one more testsuite per field_accuracy field" in flat(text)
    assert "--force With --resume, --rerun-failed or --retry-errors: reuse the rows" in flat(text)
    assert (
        "--allow-target-change With --resume, --rerun-failed or --retry-errors: reuse the rows although "
        "the target changed since they were made"
    ) in flat(text)
    assert "--allow-target-change Merge runs although their target differs" in flat(help_text(["merge"]))
    assert re.search(r"\n  -w, --workers N +Cases run concurrently \(1-64\)\.", text)
    assert "-w, --workers N Cases run concurrently (1-64). [default: 4; 1<=x<=64] --max-retries" in flat(text)
    assert re.search(r"\n  --cache / --no-cache +Reuse stored target answers", text)
    assert "--cache-dir DIR Cache directory. [default: .agentv/cache at the root of the dataset's" in flat(text)
    assert re.search(r"\n  -v, --verbose +List every case", text)  # a flag: no value, no tag
    assert "Usage: agentv validate [OPTIONS] PATH...\n" in help_text(["validate"])
    metrics = help_text(["metrics"])
    assert "Usage: agentv metrics [OPTIONS] RESULTS\n" in metrics
    assert "\n  -f, --format FORMAT " in metrics and "\n  -e, --evaluator NAME " in metrics


@pytest.mark.parametrize("columns", [60, 100])
def test_defaults_are_never_cut_or_split_inside_a_word(columns):
    eval_help = flat(help_text(["eval"], columns))
    for default in (
        "[default: the dataset's execution.target, else 'default']",
        "[default: found by walking up from the dataset]",
        "[default: <dataset>_<UTC>.jsonl in .agentv/results/]",
        "[default: 4; 1<=x<=64]",
        "[default: 1; 0<=x<=10]",
        "[0.0<=x<=1.0]",
        "[default: execution.judge_target, else the target's judge_target]",
        "[default: appended to $GITHUB_STEP_SUMMARY when that is set]",
    ):
        assert default in eval_help, default
    assert "[default: table]" in flat(help_text(["metrics"], columns))


def test_each_command_lists_only_its_own_exit_codes():
    assert exit_codes(help_text(["eval"])) == [0, 1, 2, 3, 4, 5, 130]
    assert exit_codes(help_text(["metrics"])) == [0, 1, 2, 3]
    validate = help_text(["validate"])
    assert exit_codes(validate) == [0, 2, 3]
    assert "every file is valid" in validate and "problems found" in validate
    assert "gate" not in validate and "130" not in validate
    metrics = help_text(["metrics"])
    assert "gate" not in metrics and "the file holds no per-field counts" in metrics
    for args in (["cache"], ["cache", "stats"], ["cache", "clear"]):
        cache = help_text(args)
        assert exit_codes(cache) == [0, 2, 3] and "gate" not in cache, args
        assert "the cache database cannot be read or written (locked, read-only)" in flat(cache)


def test_compare_help_reads_with_its_metavars_and_lists_its_exit_codes():
    text = help_text(["compare"])
    assert "Usage: agentv compare [OPTIONS] BASE NEW\n" in text
    for name in ("-f, --format FORMAT ", "--max-drop X ", "--alpha A ", "--force "):
        assert f"\n  {name}" in text, name
    flat_text = flat(text)
    assert exit_codes(text) == [0, 1, 2, 3]
    assert "0 no regression 1 regression: a case went from pass to not pass (more than --allow-flips)," in flat_text
    assert "the same file twice, runs of different datasets (without --force)" in flat_text


def test_rescore_help_reads_with_its_metavars_and_lists_its_exit_codes():
    text = help_text(["rescore"])
    assert "Usage: agentv rescore [OPTIONS] RESULTS\n" in text
    for name in ("-d, --dataset DATASET ", "-o, --out PATH ", "--targets PATH ", "--threshold X ", "-w, --workers N "):
        assert f"\n  {name}" in text, name
    assert "\n  --judge-target NAME " in text
    flat_text = flat(text)
    assert "[default: the one RESULTS' manifest names]" in flat_text
    assert "[default: <dataset>_<UTC>.jsonl in .agentv/results/]" in flat_text
    assert exit_codes(text) == [0, 1, 2, 3, 4, 5, 130]
    assert "4 a row holds a target error (copied from RESULTS) or an evaluator could not run" in flat_text


def test_top_level_help_shows_eval_exit_codes_and_points_to_the_others():
    text = help_text([], 60)
    assert "Exit codes of agentv eval:" in text and exit_codes(text) == [0, 1, 2, 3, 4, 5, 130]
    assert (
        "rescore, validate, metrics, compare, plan-size, merge, schema and cache exit with their own codes: "
        "see agentv COMMAND --help." in flat(text)
    )
    for command in ("eval", "metrics", "validate", "compare"):
        assert re.search(rf"\n  {command} +\S", text)
    assert "..." not in text.split("Commands:")[1]  # no command's summary is cut short


def test_exit_codes_wrap_with_a_hanging_indent_at_60_columns():
    text = help_text(["eval"], 60)
    assert (
        "  4    a case had a target error (the target call failed)\n"
        "       or an evaluator error (an evaluator could not run);\n"
        "       takes precedence over 1\n"
    ) in text


def test_exit_codes_speak_of_target_errors_and_evaluator_errors():
    """The words of the totals line and the exit-4 message (tests/cli/test_eval.py)."""
    text = flat(help_text(["eval"]))
    assert (
        "4 a case had a target error (the target call failed) or an evaluator error (an evaluator could not run); "
        "takes precedence over 1"
    ) in text
    assert (
        "2 usage or dataset/target configuration error, or a results file that cannot be written or that another "
        "agentv run is writing (nothing was run)"
    ) in text
    assert (
        "5 results, manifest, summary or a report (--junit, --summary-md) could not be written once the run had "
        "started (disk full, closed pipe)"
    ) in text


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag):
    result = CliRunner().invoke(app, [flag])
    assert result.exit_code == 0
    assert result.stdout == f"agentv {__version__}\n"


def test_usage_errors_are_plain_text():
    result = CliRunner().invoke(app, ["eval", "dataset.yaml", "--bogus"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "Usage: agentv eval [OPTIONS] DATASET...",
        "Try 'agentv eval -h' for help.",
    ]
    assert "Error: No such option: --bogus" in result.stderr and "─" not in result.stderr


def test_command_modules_take_the_app_from_cli_base_not_the_package():
    import agentv_py.cli.base as base  # a module, not shadowed by the package's `app`

    assert base.app is app and base.EXIT_INTERRUPTED == 130
    for module in (REPO_ROOT / "agentv_py" / "cli").glob("*_cmd.py"):
        assert "from agentv_py.cli import" not in module.read_text(), module.name
