"""`.env` files applied before targets resolve, as AgentV did: outermost first, never overriding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_py.errors import ConfigError
from agentv_py.loading.dotenv import apply_dotenv, dotenv_files
from tests.conftest import REPO_ROOT, Workspace


def test_outermost_file_wins_and_the_environment_wins_over_both(ws: Workspace) -> None:
    ws.file(".env", "SHARED=root\nROOT_ONLY=r\nSET_ALREADY=from-file\n")
    ws.file("evals/.env", "SHARED=inner\nINNER_ONLY=i\n")
    environ = {"SET_ALREADY": "process"}
    applied = apply_dotenv(ws.root / "evals", environ)
    assert applied == [ws.root / "evals" / ".env", ws.root / ".env"]
    assert environ == {"SET_ALREADY": "process", "SHARED": "root", "ROOT_ONLY": "r", "INNER_ONLY": "i"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("A=1", {"A": "1"}, id="plain"),
        pytest.param("export A=1", {"A": "1"}, id="export-prefix"),
        pytest.param("A='x y'\nB=\"q\\nr\"", {"A": "x y", "B": "q\nr"}, id="quotes"),
        pytest.param("# comment\n\nA=1 # trailing", {"A": "1"}, id="comments"),
        pytest.param("A=${HOME}/x", {"A": "${HOME}/x"}, id="no-interpolation"),
        pytest.param("JUST_A_NAME", {}, id="name-without-value-ignored"),
    ],
)
def test_dotenv_syntax(ws: Workspace, text: str, expected: dict[str, str]) -> None:
    ws.file(".env", text + "\n")
    environ: dict[str, str] = {}
    apply_dotenv(ws.root, environ)
    assert environ == expected


def test_a_dotenv_above_the_repository_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("OUTSIDE=1\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".env").write_text("INSIDE=1\n")
    monkeypatch.chdir(project)
    assert dotenv_files(project) == [project / ".env"]


def test_a_fifo_is_refused_not_read(ws: Workspace) -> None:
    os.mkfifo(ws.root / ".env")
    with pytest.raises(ConfigError) as caught:
        apply_dotenv(ws.root, {})
    assert [p.message for p in caught.value.problems] == ["a .env file must be a regular file"]


def test_binary_and_oversized_files_are_refused(ws: Workspace) -> None:
    ws.file(".env", b"A=\xff\n")
    with pytest.raises(ConfigError) as caught:
        apply_dotenv(ws.root, {})
    assert caught.value.problems[0].message == "a .env file must be UTF-8 text (byte 0xff at offset 2)"
    ws.file(".env", b"A=" + b"x" * (1024 * 1024))
    with pytest.raises(ConfigError) as caught:
        apply_dotenv(ws.root, {})
    assert caught.value.problems[0].message == "a .env file must be at most 1 MB"


def test_eval_reads_target_variables_from_dotenv(ws: Workspace) -> None:
    """An AgentV project keeps `${{ VAR }}` values in `.env`: eval runs with them, and the
    target's own process inherits them too."""
    ws.file(".env", "ANSWER_FILE=answer.json\nEXTRA=from-dotenv\n")
    ws.file("answer.json", json.dumps({"a": 1}))
    ws.file(
        "target.py",
        "import json, os, sys\nprint(json.dumps({'a': 1, 'extra': os.environ.get('EXTRA')}))\n",
    )
    ws.targets(
        f"""
        targets:
          - name: t
            provider: cli
            command_template: "{sys.executable} ${{{{ TARGET_SCRIPT }}}}"
        """
    )
    ws.file(".env", "TARGET_SCRIPT=target.py\nEXTRA=from-dotenv\n")
    ws.dataset(
        """
        execution:
          target: t
          evaluators: [{type: field_accuracy, fields: [{path: a}, {path: extra}]}]
        evalcases:
          - id: c1
            input_messages: [{role: user, content: go}]
            expected_messages: [{role: assistant, content: {a: 1, extra: from-dotenv}}]
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TARGET_SCRIPT", "EXTRA")}
    proc = subprocess.run(
        [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "out.jsonl"],
        cwd=ws.root,
        env={**env, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    row = json.loads((ws.root / "out.jsonl").read_text())
    assert row["score"] == 1.0


def test_validate_warns_without_dotenv_and_is_clean_with_it(ws: Workspace) -> None:
    ws.targets(
        f"""
        targets:
          - name: t
            provider: cli
            command_template: "{sys.executable} ${{{{ TARGET_SCRIPT }}}}"
        """
    )
    ws.file("target.py", "print('{}')\n")
    ws.dataset(
        """
        execution:
          target: t
          evaluators: [{type: field_accuracy, fields: [{path: a}]}]
        evalcases:
          - id: c1
            input_messages: [{role: user, content: go}]
            expected_messages: [{role: assistant, content: {a: 1}}]
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "TARGET_SCRIPT"}

    def validate() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentv_py", "validate", "dataset.yaml"],
            cwd=ws.root,
            env={**env, "PYTHONPATH": str(REPO_ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert "environment variable TARGET_SCRIPT is not set" in validate().stderr
    ws.file(".env", "TARGET_SCRIPT=target.py\n")
    proc = validate()
    assert proc.returncode == 0, proc.stderr
    assert "TARGET_SCRIPT" not in proc.stderr
