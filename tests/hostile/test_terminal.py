"""Data never breaks the terminal (issue 11, point 7): Rich markup and terminal control sequences in
case ids, misses, errors, stderr tails, judge text and field names are shown literally, control
characters escaped (`report.text.visible`): in the summary (table and narrow list, verbose or
not), both progress displays, warnings, error messages and `agentv metrics`."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import orjson
import pytest
from rich.console import Console
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.base import error_result, processed_result
from agentv_py.models.results import ResultRow
from agentv_py.report.render import PlainProgress, RichProgress, render_summary
from agentv_py.report.summary import RunSummary
from agentv_py.report.text import visible
from tests.conftest import REPO_ROOT, make_row

MARKUP = ["[/INST]", "[/]", "[bold red]x[/]", "[link=file:///etc/passwd]click[/link]"]
CONTROLS = {
    "\x1b[2J": "\\x1b[2J",  # clear the screen
    "\x1b]0;title\x07": "\\x1b]0;title\\x07",  # set the window title
    "a\rb": "a\\rb",  # carriage return: overwrite the line
    "c\x08d": "c\\x08d",  # backspace
    "n\x00ul": "n\\x00ul",  # NUL
    "\x9b31m": "\\x9b31m",  # C1 CSI
    "\u202eevil": "\\u202eevil",  # right-to-left override
    "line\nbreak": "line\\nbreak",  # a forged line
}
# Nothing a terminal acts on may reach it: C0 (but the newlines the output itself writes), DEL, C1,
# bidi controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def test_visible_escapes_every_control_character_and_keeps_the_rest():
    for raw, shown in CONTROLS.items():
        assert visible(raw) == shown
    for text in [*MARKUP, "C:\\data\\file", "naïve 日本語 🙂", "tab\there"]:
        assert visible(text) == text.replace("\t", "\\t")
    assert not RAW.search(visible("".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)))


def hostile_row(eval_id: str, score: float, misses: list[str], error: str | None = None) -> ResultRow:
    results = [] if error else [processed_result(name="[bold]judge\x1b[2J", type="code_judge", score=score)]
    return make_row(
        eval_id=eval_id,
        status="error" if error else "ok",
        score=score,
        verdict="fail",
        misses=misses,
        error=error,
        evaluator_results=results,
    )


def hostile_summary(verbose: bool) -> RunSummary:
    summary = RunSummary(total_selected=3, keep_all_lines=verbose, results_path="out\x1b[2J[/].jsonl")
    summary.add(hostile_row("[/INST]", 0.5, MARKUP + list(CONTROLS)), 0)
    summary.add(
        hostile_row("id\x1b]0;pwned\x07\u202e", 0.0, [], error="target 't' failed: exit code 1: [/] \x1b[2J"), 1
    )
    summary.add(hostile_row("[bold red]x[/]", 0.25, ["\x9b2J"]), 2)
    return summary


@pytest.mark.parametrize("width", [100, 60])
@pytest.mark.parametrize("verbose", [False, True], ids=["short", "verbose"])
def test_the_summary_shows_data_literally(width, verbose):
    buffer = io.StringIO()
    render_summary(Console(width=width, file=buffer, color_system=None), hostile_summary(verbose), verbose=verbose)
    text = buffer.getvalue()
    assert not RAW.search(text), repr(text)
    flat = "".join(text.split())  # table cells and wrapped lines fold text across lines
    for shown in ["[/INST]", "[bold red]x[/]", "id\\x1b]0;pwned\\x07\\u202e", "[/]\\x1b[2J", "\\x9b2J"]:
        assert "".join(shown.split()) in flat, shown
    assert "[bold]judge\\x1b[2J" in flat  # an evaluator's name (Evaluator means)
    assert "Results written to: out\\x1b[2J[/].jsonl" in text
    if verbose:
        for shown in [*MARKUP, *CONTROLS.values()]:
            assert "".join(shown.split()) in flat, shown


def test_plain_progress_shows_data_literally_on_one_line():
    buffer = io.StringIO()
    progress = PlainProgress(2, buffer, width=120)
    progress.advance(hostile_row("[/INST]\x1b[2J", 0.5, []))
    progress.advance(hostile_row("x\ry", 0.0, [], error="boom\n[3/2] pass    1.000  forged \x1b]0;t\x07"))
    assert buffer.getvalue().splitlines() == [
        "[1/2] fail    0.500  [/INST]\\x1b[2J",
        "[2/2] error   0.000  x\\ry  target error: boom\\n[3/2] pass    1.000  forged \\x1b]0;t\\x07",
    ]


def test_rich_progress_shows_data_literally():
    buffer = io.StringIO()
    console = Console(width=100, file=buffer, color_system=None)
    with RichProgress(2, console) as progress:
        progress.advance(hostile_row("[/INST]", 0.5, []))
        progress.advance(hostile_row("[bold]id\x1b[2J", 0.0, [], error="[link=file:///etc/passwd]x \u202e"))
    text = buffer.getvalue()
    assert not RAW.search(text), repr(text)
    assert "[2/2] error   0.000  [bold]id\\x1b[2J  target error: [link=file:///etc/passwd]x \\u202e" in text


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def test_agentv_eval_end_to_end(ws):
    """Ids, misses (a code judge's), reasoning, a target's stderr tail and a warning, all hostile."""
    ws.file("fx.json", '{"a": 1}')
    ws.file(
        "judge.py",
        "import json, sys\n"
        "sys.stdin.read()\n"
        "print(json.dumps({'score': 0.5, 'misses': ['[/INST] \\x1b[2J', '[bold red]x[/]', 'a\\rb\\x08\\x9b'],"
        " 'reasoning': '[/] \\u202e'}))\n",
    )
    ws.file("target.sh", 'case "$1" in *fail*) printf "[/] \\033[2J boom" >&2; exit 1;; esac; cat fx.json\n')
    ws.cli_target("sh target.sh {EVAL_ID}")
    ws.dataset(
        r"""
        execution:
          target: t
          evaluators:
            - {name: "[bold]j", type: code_judge, script: [python3, judge.py]}
            - {type: field_accuracy, fields: [{path: "a[[/INST]"}]}
        evalcases:
          - id: "[/INST]"
            input_messages: [{role: user, content: hi}]
          - id: "fail \e]0;title\a [bold red]x[/]"
            input_messages: [{role: user, content: hi}]
        """
    )
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--workers", "1", "--verbose")
    assert result.exit_code == 4, result.output  # not 3: nothing crashed
    assert not RAW.search(result.stdout) and not RAW.search(result.stderr), result.output
    out = result.stdout
    assert "[/INST] \\x1b[2J" in out and "[bold red]x[/]" in out and "a\\rb\\x08\\x9b" in out
    assert "fail \\x1b]0;title\\x07 [bold red]x[/]" in out
    assert "[/] \\x1b[2J boom" in out  # the stderr tail of the failed target call
    assert "Evaluator means: [bold]j 0.500" in out
    err = result.stderr.splitlines()
    assert any(line.startswith("warning: dataset.yaml:") and "[/INST]" in line for line in err), err
    assert any(
        line.startswith("[2/2] error   0.000  fail \\x1b]0;title\\x07 [bold red]x[/]  target error: ") for line in err
    ), err
    rows = [json.loads(line) for line in (ws.root / "o.jsonl").read_text().splitlines()]
    assert rows[0]["evaluator_results"][0]["misses"][0] == "[/INST] \x1b[2J"  # the JSONL keeps the data as it is


def test_agentv_metrics_shows_field_names_literally(tmp_path):
    details = {"metrics": {"[/]": {"tp": 1}, "[bold red]x\x1b[2J": {"tp": 1}, "ok": {"tp": 1}}}
    result_row = make_row(
        eval_id="c\x1b[2J",
        evaluator_results=[processed_result(name="[/INST]", type="code_judge", score=1.0, details=details)],
    )
    bad = error_result(name="x", type="code_judge", message="m", details={"metrics": {"f\x1b[2J[/]": [1]}})
    broken = result_row.model_copy(update={"evaluator_results": [bad]})
    path = tmp_path / "run[bold].jsonl"
    path.write_bytes(orjson.dumps(result_row.to_json_dict()) + b"\n" + orjson.dumps(broken.to_json_dict()) + b"\n")
    with_intervals = CliRunner(env={"COLUMNS": "120", "NO_COLOR": "1"}).invoke(app, ["metrics", str(path)])
    assert with_intervals.exit_code == 0 and not RAW.search(with_intervals.stdout), with_intervals.output
    result = CliRunner(env={"COLUMNS": "120", "NO_COLOR": "1"}).invoke(app, ["metrics", str(path), "--no-intervals"])
    assert result.exit_code == 0, result.output
    assert not RAW.search(result.stdout) and not RAW.search(result.stderr)
    body = [" ".join(line.replace("│", " ").split()) for line in result.stdout.splitlines() if line.startswith("│")]
    assert body[:3] == ["[/] 1 0 0 0 1.000 1.000 1.000 1", "[bold red]x\\x1b[2J 1 0 0 0 1.000 1.000 1.000 1", body[2]]
    assert "run[bold].jsonl" in result.stdout  # the title names the file as it is (no bold)
    assert result.stderr.splitlines() == [
        f"{path}:2: skipped: c\\x1b[2J: x: details.metrics.f\\x1b[2J[/]: expected an object of counts, got [1]"
    ]
    missing = CliRunner().invoke(app, ["metrics", str(path), "--evaluator", "nope\x1b[2J"])
    assert missing.exit_code == 1
    assert "no metrics from an evaluator named 'nope\\x1b[2J'; evaluators with metrics: [/INST]" in missing.stderr


def test_error_messages_escape_control_characters(ws):
    result = invoke("eval", "missing\x1b[2J.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr and "missing\\x1b[2J.yaml" in result.stderr


def test_agentv_validate_and_metrics_csv_write_no_raw_control_characters(ws):
    """`agentv validate` (problems, warnings, the `ok:` line naming a file from argv) and
    `agentv metrics -f csv` (field names) as real processes: no raw control character or bidi
    override reaches stdout or stderr."""
    hostile = "\\x1b]0;PWNTITLE\\x07\\x1b[31m\\u202e"  # a YAML double-quoted escape
    suite = "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\nevalcases:\n"
    ws.dataset(suite + f'  - id: c1\n    expected_output: {{"k{hostile}": 1, "k{hostile}": 2}}\n', "dup.yaml")
    ws.dataset(f'execution:\n  evaluators: [{{type: "t{hostile}"}}]\nevalcases:\n  - id: c1\n', "unknown.yaml")
    ws.dataset(suite.replace("path: a", f'path: "a{hostile}"') + "  - id: c1\n    expected_output: {b: 1}\n", "w.yaml")
    ws.dataset(suite + "  - id: c1\n    expected_output: {a: 1}\n", "ok\x1b]0;PWN\x07\u202e.yaml")
    metrics = {'=HYPERLINK("http://evil")\x1b]0;PWN\x07': {"tp": 1, "tn": 0, "fp": 0, "fn": 0}}
    result_row = make_row(
        eval_id="c1",
        evaluator_results=[processed_result(name="j", type="code_judge", score=1.0, details={"metrics": metrics})],
    )
    ws.file("run.jsonl", orjson.dumps(result_row.to_json_dict()) + b"\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}

    def agentv(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "agentv_py", *args], cwd=ws.root, capture_output=True, env=env)

    validate = agentv("validate", "dup.yaml", "unknown.yaml", "w.yaml", "ok\x1b]0;PWN\x07\u202e.yaml")
    assert validate.returncode == 2
    assert not RAW.search(agentv("metrics", "run.jsonl", "-f", "csv").stdout.decode())  # with interval columns
    csv_out = agentv("metrics", "run.jsonl", "-f", "csv", "--no-intervals")
    assert csv_out.returncode == 0, csv_out.stderr
    for output in (validate.stdout, validate.stderr, csv_out.stdout, csv_out.stderr):
        text = output.decode("utf-8")
        assert not RAW.search(text) and "\u202e" not in text, text
    assert validate.stdout.decode() == "ok: w.yaml (1 case)\nok: ok\\x1b]0;PWN\\x07\\u202e.yaml (1 case)\n"
    assert csv_out.stdout.decode().splitlines()[1] == (
        '"\'=HYPERLINK(""http://evil"")\\x1b]0;PWN\\x07",1,0,0,0,1.000000,1.000000,1.000000,1'
    )
