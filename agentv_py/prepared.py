"""A dataset as the engine runs it: every case with its files, images, ground truth and
evaluators resolved once, at load time. The loader builds these; the runner only reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentv_py.errors import Problem
from agentv_py.media import ImageRef
from agentv_py.models.dataset import Dataset, EvalCase
from agentv_py.models.evaluators import EvaluatorConfig


class ProblemSource(Protocol):
    """Turns a location in a loaded file into a located `Problem` (`file:line: location: ...`)."""

    def problem(self, parts: Iterable[str | int], message: str) -> Problem: ...


@dataclass
class PreparedCase:
    """An eval case with everything the engine needs resolved once, at load time."""

    case: EvalCase
    index: int
    files: list[str]
    images: list[ImageRef]
    expected: Any
    question: str
    evaluators: list[EvaluatorConfig]  # the case's own, else the suite's


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
