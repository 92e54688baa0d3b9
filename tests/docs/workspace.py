"""The project the docs' commands run in, and running them.

The workspace is a copy of what the docs' commands read from the repository (`evals/`,
`fixtures/`, the stand-in models of `scripts/`), a repository root of its own, plus the files the
docs name that stand for the reader's own (`evals/invoices.yaml`, `evals/broken.yaml`; see
`reader_files`). `agentv` runs in this process, as the CLI tests run it (stdout and stderr
interleaved as written), always in one fixed directory, so that the absolute paths a run's
manifest records stay valid for the commands after it; the state after each command is kept, so a
second snippet that starts with the same commands continues from there instead of running them
again (the session's runs are sequential).
"""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.docs.snippets import REPO_ROOT

# A step: a command's words, or a function that writes files into the workspace.
Step = tuple[str, ...] | Callable[[Path], None]

INVOICES_TARGETS = """\
# the docs' evals/invoices.yaml: the example's dataset, moved up a directory
targets:
  - name: mock_extractor
    provider: cli
    command_template: python3 ../scripts/mock_extractor.py {FILES} {OUTPUT_FILE}
    timeout_seconds: 30
"""

BROKEN = """\
# The README's two mistakes: a misspelt key (line 14) and an unknown match type (line 22).
description: Invoice extraction, with two mistakes
evalcases:
  - id: invoice-001
    input_messages:
      - role: system
        content: You extract invoices as JSON.
      - role: user
        content:
          - type: text
            value: Extract the invoice.
          - type: file
            value: ../fixtures/invoice-001.json
    expected_message:
      - role: assistant
        content: {invoice_number: INV-2025-001001, net_total: 1889}
execution:
  target: mock_extractor
  evaluators:
    - name: fields
      type: field_accuracy
      fields: [{path: invoice_number, match: exact}, {path: net_total, match: invalid_type}]
"""


def reader_files(root: Path) -> None:
    """The files the docs' examples name as the reader's own, made from the repository's."""
    example = root / "evals" / "invoice-extraction"
    (root / "evals" / "invoices.yaml").write_text((example / "dataset.yaml").read_text())
    shutil.copytree(example / "judges", root / "evals" / "judges")
    (root / "evals" / ".agentv").mkdir()
    (root / "evals" / ".agentv" / "targets.yaml").write_text(INVOICES_TARGETS)
    (root / "evals" / "broken.yaml").write_text(BROKEN)


def pristine(root: Path) -> None:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    for name in ("evals", "fixtures"):
        shutil.copytree(REPO_ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", ".agentv"))
    for path in (REPO_ROOT / "evals").glob("*/.agentv/targets.yaml"):
        target = root / path.relative_to(REPO_ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    (root / "scripts").mkdir()
    for path in (REPO_ROOT / "scripts").glob("mock_*.py"):
        shutil.copy(path, root / "scripts" / path.name)
    reader_files(root)


@dataclass(frozen=True)
class Ran:
    args: tuple[str, ...]
    exit_code: int
    output: str  # stdout and stderr as one stream, in the order written (stderr only with `> FILE`)


def agentv_args(words: tuple[str, ...], cwd: Path) -> tuple[list[str], str | None]:
    """The arguments of `words` (an `agentv` command), shell globs expanded as the shell would,
    and the file its stdout is redirected to (`> FILE`), if any."""
    words = words[1:]
    redirect = None
    if len(words) >= 2 and words[-2] == ">":
        words, redirect = words[:-2], words[-1]
    args: list[str] = []
    for word in words:
        matches = sorted(glob.glob(word, root_dir=cwd)) if any(c in word for c in "*?") else []
        args += matches or [word]
    return args, redirect


class Workspace:
    """Runs steps in `live`, keeping the state after each sequence of steps in `snapshots`."""

    def __init__(self, base: Path) -> None:
        self.live = base / "repo"
        self.snapshots = base / "snapshots"
        self.cache = base / "cache"
        pristine(self.live)
        self.states: dict[tuple[object, ...], tuple[Path, Ran | None]] = {}
        self._keep((), None)

    def _keep(self, key: tuple[object, ...], ran: Ran | None) -> None:
        copy = self.snapshots / str(len(self.states))
        shutil.copytree(self.live, copy, symlinks=True)
        self.states[key] = (copy, ran)

    def _restore(self, key: tuple[object, ...]) -> None:
        shutil.rmtree(self.live)
        shutil.copytree(self.states[key][0], self.live, symlinks=True)

    def run(self, steps: list[Step], cwd: str, columns: int) -> list[Ran]:
        """Each step in order from a fresh copy of the workspace; what each command printed."""
        done: list[Ran] = []
        key: tuple[object, ...] = ()
        live: tuple[object, ...] | None = None  # the state `live` holds, once restored
        for step in steps:
            name = " ".join(step[1:]) if isinstance(step, tuple) else step.__name__  # `.venv/bin/agentv` is `agentv`
            following = (*key, (cwd, columns, name))
            if following not in self.states:
                if live != key:
                    self._restore(key)
                if isinstance(step, tuple):
                    ran: Ran | None = self._command(step, cwd, columns)
                else:
                    step(self.live)
                    ran = None
                self._keep(following, ran)
                live = following
            key = following
            recorded = self.states[key][1]
            if recorded is not None:
                done.append(recorded)
        return done

    def _command(self, words: tuple[str, ...], cwd: str, columns: int) -> Ran:
        """Runs `agentv` in this process, as the CLI tests do, from `cwd` in the workspace."""
        from typer.testing import CliRunner

        from agentv_py.cli import app

        args, redirect = agentv_args(words, self.live / cwd)
        env = {
            "COLUMNS": str(columns),
            "NO_COLOR": "1",
            "AGENTV_CACHE_DIR": str(self.cache),
            "GITHUB_STEP_SUMMARY": None,
        }
        previous = os.getcwd()
        os.chdir(self.live / cwd)
        try:
            result = CliRunner(env=env).invoke(app, args, prog_name="agentv")
        finally:
            os.chdir(previous)
        if redirect:
            (self.live / cwd / redirect).write_bytes(result.stdout_bytes)
            return Ran(tuple(args), result.exit_code, result.stderr)
        return Ran(tuple(args), result.exit_code, result.output)
