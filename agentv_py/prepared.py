"""A dataset as the engine runs it: every case with its files, images, ground truth and
evaluators resolved once, at load time. The loader builds these; the runner only reads them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentv_py.errors import Problem
from agentv_py.media import ImageRef
from agentv_py.models.dataset import Dataset, EvalCase
from agentv_py.models.evaluators import EvaluatorConfig

GUIDELINE_FILE_CAP = 10 * 1024 * 1024  # bytes of one guideline file: as much as a file inlined into a message


def _guideline_text(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read(GUIDELINE_FILE_CAP + 1)
    name = os.path.basename(path)
    if len(data) > GUIDELINE_FILE_CAP:
        raise ValueError(f"guideline file {name} is over the {GUIDELINE_FILE_CAP // (1024 * 1024)} MB limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"guideline file {name} is not UTF-8 text") from None
    return text.replace("\r\n", "\n").strip()


class ProblemSource(Protocol):
    """Turns a location in a loaded file into a located `Problem` (`file:line: location: ...`)."""

    def problem(self, parts: Iterable[str | int], message: str) -> Problem: ...


@dataclass
class PreparedCase:
    """An eval case with everything the engine needs resolved once, at load time."""

    case: EvalCase
    index: int
    files: list[str]  # input files that are not guideline files, in order (AgentV's input_files)
    images: list[ImageRef]
    expected: Any
    question: str
    evaluators: list[EvaluatorConfig]  # the case's own, else the suite's
    guideline_files: list[str] = field(default_factory=list)  # absolute paths, in order (`.agentv/config.yaml`)
    guideline_items: frozenset[int] = frozenset()  # which `file` items (from 0, dataset order) are guideline files

    @property
    def file_paths(self) -> list[str]:
        """AgentV's `file_paths`: guideline files, then the other input files (`{FILES}`)."""
        return [*self.guideline_files, *self.files]

    def guidelines(self) -> str:
        """AgentV's `guidelines` text (a cli target's `{GUIDELINES}`, a model's `[[ ## Guidelines ## ]]`
        block): each guideline file, CRLF as LF and trimmed, as `<file path="<basename>">` + newline +
        text + newline + `</file>`, joined by a blank line; "" without guideline files. Raises
        ValueError for a file over GUIDELINE_FILE_CAP or not UTF-8, OSError for one unreadable."""
        return "\n\n".join(
            f'<file path="{os.path.basename(path)}">\n{_guideline_text(path)}\n</file>' for path in self.guideline_files
        )


@dataclass
class LoadedDataset:
    """A validated dataset file and its prepared cases."""

    path: Path
    name: str
    model: Dataset
    cases: list[PreparedCase]
    warnings: list[Problem] = field(default_factory=list)
    source: ProblemSource | None = None  # for problems found later (judge targets)

    @property
    def directory(self) -> Path:
        return self.path.parent
