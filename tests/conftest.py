"""Shared test helpers: a workspace with datasets, targets and tiny real target scripts."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TARGETS_DIR = Path(__file__).parent / "fixtures" / "targets"
REPO_ROOT = Path(__file__).resolve().parents[1]


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
            lines.append(f"execution:\n  target: {target}\n  evaluators:\n    - {{type: field_accuracy, fields: {fields}}}")
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
        return self.targets(
            f"""
            targets:
              - name: {name}
                provider: cli
                command_template: {json.dumps(command)}
            """
            + (textwrap.indent(textwrap.dedent(extra).strip(), " " * 4) + "\n" if extra else "")
        )


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTV_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """An empty project (a repository root) as the current directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return Workspace(tmp_path)
