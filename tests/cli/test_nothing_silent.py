"""Nothing silent: where each report went, how many answers came from the cache, and after an
interrupt the command that finishes the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from agentv_py.cli import app
from tests.conftest import REPO_ROOT


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def two_cases(ws) -> None:
    ws.cli_target("cat {FILES}")
    ws.cases_dataset([(f"c{i}", {"a": 1, "b": 2}, {"a": 1, "b": 2}) for i in range(2)])


def test_the_summary_says_where_every_report_went(ws):
    two_cases(ws)
    result = invoke(
        "eval", "dataset.yaml", "--out", "run.jsonl", "--junit", "j.xml", "--summary-md", "s.md", "--html", "r.html"
    )
    assert result.exit_code == 0, result.output
    assert "Reports written to: j.xml (JUnit report), s.md (Markdown summary), r.html (HTML report)" in (
        result.stdout.splitlines()
    )
    again = invoke("rescore", "run.jsonl", "--out", "re.jsonl", "--junit", "j2.xml")
    assert "Reports written to: j2.xml (JUnit report)" in again.stdout.splitlines()


def test_the_summary_counts_the_answers_the_cache_gave(ws):
    two_cases(ws)
    first = invoke("eval", "dataset.yaml", "--out", "one.jsonl", "--cache")
    assert "Cache: 0 of 2 answers from the cache; 2 target calls" in first.stdout.splitlines()
    second = invoke("eval", "dataset.yaml", "--out", "two.jsonl", "--cache")
    assert "Cache: 2 of 2 answers from the cache" in second.stdout.splitlines()
    plain = invoke("eval", "dataset.yaml", "--out", "three.jsonl", "--no-cache")
    assert not any(line.startswith("Cache:") for line in plain.stdout.splitlines())


def test_an_interrupted_run_says_how_to_finish_it(ws):
    ws.cli_target("sh {FILES}")
    fast = 'echo \'{"a": 1, "b": 2}\''
    slow = "sleep 60; echo '{}'"
    ws.cases_dataset([("fast", fast, {"a": 1, "b": 2}), ("slow", slow, {"a": 1, "b": 2})])
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "my run.jsonl", "--workers", "2"],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"},
    )
    out = Path(ws.root / "my run.jsonl")
    deadline = time.monotonic() + 20
    while not (out.exists() and out.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "To finish the run: agentv eval dataset.yaml --resume 'my run.jsonl' (with the run's other options)" in (
        stdout.splitlines()
    )
