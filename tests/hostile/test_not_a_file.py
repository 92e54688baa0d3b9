"""A results file that is a FIFO or a directory is said to be one, by every command that reads
results (a FIFO used to read as "not found", or to block a reader)."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app


@pytest.mark.parametrize(
    "args",
    [["metrics", "{p}"], ["report", "{p}"], ["explain", "{p}", "c1"], ["rescore", "{p}"], ["compare", "{p}", "{p}"]],
    ids=["metrics", "report", "explain", "rescore", "compare"],
)
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_results_path_that_is_not_a_file_is_named(ws, args, kind):
    path = ws.root / "run.jsonl"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    result = CliRunner().invoke(app, [a.format(p="run.jsonl") for a in args])
    assert result.exit_code == 2, result.output
    what = "is not a regular file (a FIFO, a socket or a device)" if kind == "fifo" else "is a directory, not a file"
    if kind == "directory" and args[0] in ("metrics", "compare"):  # they read AgentV run folders too
        what += ", and not an AgentV run folder (no index.jsonl of AgentV result rows)"
    role = "BASE " if args[0] == "compare" else ""
    assert result.stderr.splitlines()[0] == f"error: {role}results file {what}: run.jsonl"
