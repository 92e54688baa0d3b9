"""The extractor's own words: what a cli target writes on stderr is kept in its row (capped,
secrets masked) whether it answered or failed, shown by `explain` and in the HTML case view, and
kept by a cache hit and by rescore."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.process.spawn import STDERR_KEPT

TOOL = """
import json, sys
path = sys.argv[1]
print("loading template for " + path.split("/")[-1], file=sys.stderr)
print("token=" + sys.argv[2], file=sys.stderr)
if "c2" in path:
    print("x" * 5000, file=sys.stderr)
print(open(path).read())
"""


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})}).invoke(app, list(args))


def rows(path: str) -> dict[str, dict]:
    return {row["eval_id"]: row for row in map(json.loads, Path(path).read_text().splitlines())}


def project(ws) -> None:
    ws.file("tool.py", TOOL)
    ws.targets(
        "targets:\n  - name: t\n    provider: cli\n"
        f"    command_template: {sys.executable} tool.py {{FILES}} ${{{{ TOOL_TOKEN }}}}\n"
    )
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2}), ("c2", {"a": 1, "b": 2}, {"a": 1, "b": 2})])


def test_the_stderr_of_every_call_is_in_its_row_masked_and_capped(ws):
    project(ws)
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", env={"TOOL_TOKEN": "s3cr3t-value"})
    assert result.exit_code == 0, result.output
    found = rows("run.jsonl")
    assert found["c1"]["trace"]["stderr"] == "loading template for c1.json\ntoken=***"
    long = found["c2"]["trace"]["stderr"]
    assert len(long) == STDERR_KEPT and long.startswith("...") and long.endswith("x" * 100)
    assert "s3cr3t-value" not in Path("run.jsonl").read_text()

    explained = invoke("explain", "run.jsonl", "c1")
    assert explained.exit_code == 0, explained.output
    lines = explained.stdout.splitlines()
    start = lines.index("the target's stderr (its last 2 lines):")
    assert lines[start + 1 : start + 3] == ["  | loading template for c1.json", "  | token=***"]

    from agentv_py.report.jsonl import read_rows
    from agentv_py.report.page_cases import Interned, case_parts

    row = next(item for _, item in read_rows(Path("run.jsonl")) if not isinstance(item, str) and item.eval_id == "c1")
    shown = json.loads(case_parts(row, Interned()).details)["stderr"]
    assert shown == "loading template for c1.json\ntoken=***"


def test_a_row_without_stderr_has_no_key(ws):
    ws.targets("targets:\n  - {name: t, provider: mock, echo_expected: true}\n")
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl").exit_code == 0
    assert "stderr" not in rows("run.jsonl")["c1"]["trace"]


def test_a_cache_hit_and_a_rescore_keep_what_the_call_said(ws):
    project(ws)
    env = {"TOOL_TOKEN": "s3cr3t-value"}
    assert invoke("eval", "dataset.yaml", "--out", "one.jsonl", "--cache", env=env).exit_code == 0
    assert invoke("eval", "dataset.yaml", "--out", "two.jsonl", "--cache", env=env).exit_code == 0
    again = rows("two.jsonl")["c1"]
    assert again["trace"]["cache"] == "hit" and again["trace"]["stderr"].startswith("loading template for c1.json")
    assert invoke("rescore", "two.jsonl", "--out", "re.jsonl", "--dataset", "dataset.yaml").exit_code == 0
    assert rows("re.jsonl")["c1"]["trace"]["stderr"] == again["trace"]["stderr"]
