"""Shared test helpers: a workspace with datasets, targets and tiny real target scripts."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TARGETS_DIR = Path(__file__).parent / "fixtures" / "targets"
REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["whole", "chunks-of-1"])
def both_chunkings(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test twice: the dataset loaded in one chunk, and one case per chunk (each case
    validated apart and read back from the loader's temporary file), which must look the same."""
    if request.param == "chunks-of-1":
        from agentv_py.prepared import PreparedCases

        monkeypatch.setattr(PreparedCases, "chunk_cases", 1)
    return str(request.param)


def comparable_rows(path: Path) -> list[dict[str, Any]]:
    """A results file's rows without what differs between two runs of the same cases (times,
    durations, the run id), sorted by case id: two runs' files compare equal when they scored alike."""
    rows = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        for key in ("timestamp", "duration_ms", "trace", "run_id"):
            row.pop(key, None)
        rows.append(row)
    return sorted(rows, key=lambda row: row["eval_id"])


def process_alive(pid: int) -> bool:
    """Is `pid` running (a zombie counts as dead)?"""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    """True once `pid` is gone (signals are delivered asynchronously)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not process_alive(pid):
            return True
        time.sleep(0.02)
    return False


def stderr_of(proc: subprocess.Popen[Any], timeout: float = 15) -> Any:
    """Wait for `proc` and return its stderr; kill it (and fail) if it does not end in time."""
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


def make_row(eval_id: str = "c1", **fields: Any) -> Any:
    """A ResultRow for tests: a passing ok row of dataset 'd' and target 't' unless `fields` say
    otherwise."""
    from agentv_py.models.results import ResultRow

    defaults: dict[str, Any] = {
        "timestamp": "t",
        "dataset": "d",
        "target": "t",
        "status": "ok",
        "score": 1.0,
        "verdict": "pass",
    }
    return ResultRow(eval_id=eval_id, **{**defaults, **fields})


def script(name: str) -> str:
    """Absolute path of a tiny target script in tests/fixtures/targets."""
    return str(TARGETS_DIR / name)


@dataclass
class Workspace:
    root: Path

    def file(self, name: str, content: str | bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path

    def dataset(self, text: str, name: str = "dataset.yaml") -> Path:
        return self.file(name, textwrap.dedent(text).lstrip())

    def targets(self, text: str, name: str = ".agentv/targets.yaml") -> Path:
        return self.file(name, textwrap.dedent(text).lstrip())

    def cases_dataset(
        self,
        cases: list[tuple[str, Any, Any]],
        fields: str = "[{path: a}, {path: b}]",
        target: str | None = "t",
        name: str = "dataset.yaml",
    ) -> Path:
        """A dataset whose case i gives the target the file `fx/<id>.json` holding `answer`.

        `cases` = [(id, answer (dict, or str written as is), expected)].
        """
        lines = []
        if target:
            lines.append(
                f"execution:\n  target: {target}\n  evaluators:\n    - {{type: field_accuracy, fields: {fields}}}"
            )
        else:
            lines.append(f"execution:\n  evaluators:\n    - {{type: field_accuracy, fields: {fields}}}")
        lines.append("evalcases:")
        for case_id, answer, expected in cases:
            body = answer if isinstance(answer, str) else json.dumps(answer)
            self.file(f"fx/{case_id}.json", body)
            lines.append(
                f"  - id: {case_id}\n"
                f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}]}}]\n"
                f"    expected_messages: [{{role: assistant, content: {json.dumps(expected)}}}]"
            )
        return self.file(name, "\n".join(lines) + "\n")

    def cli_target(self, command: str, name: str = "t", extra: str = "") -> Path:
        """A targets file with one cli target; `extra` is more YAML for that target's mapping."""
        lines = ["targets:", f"  - name: {name}", "    provider: cli", f"    command_template: {json.dumps(command)}"]
        lines += ["    " + line for line in textwrap.dedent(extra).strip().splitlines()]
        return self.file(".agentv/targets.yaml", "\n".join(lines) + "\n")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTV_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # a CI runner's step summary is not the tests' to append to (tests that want one set their own)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """An empty project (a repository root) as the current directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return Workspace(tmp_path)


@pytest.fixture
def chat_server():
    """A scripted chat-completions server on 127.0.0.1 (tests/chat_server.py)."""
    from tests.chat_server import ChatServer

    with ChatServer() as server:
        yield server
