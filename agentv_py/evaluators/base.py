"""What an evaluator sees of a case: the prepared case and the target's answer."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol

from agentv_py.chat import ChatClient

from agentv_py.media import ImageRef
from agentv_py.models.dataset import EvalCase
from agentv_py.models.results import EvaluatorResult
from agentv_py.scoring.answer import parse_answer_json


@dataclass
class EvalContext:
    eval_id: str
    dataset: str
    dataset_dir: Path
    answer: str
    expected: Any
    question: str = ""
    files: tuple[str, ...] = ()
    images: tuple[ImageRef, ...] = ()
    case: EvalCase | None = None
    output_messages: list[Any] | None = None  # as the target gave them, when it did
    judges: Mapping[str, ChatClient] = field(default_factory=dict)  # judge targets by name
    default_judge: str | None = None  # for LLM evaluators without their own `target`

    @functools.cached_property
    def candidate(self) -> Any:
        """The answer parsed as JSON (NOT_JSON when it is not), parsed once per case."""
        return parse_answer_json(self.answer)


class Evaluator(Protocol):
    def __call__(self, config: Any, context: EvalContext) -> EvaluatorResult: ...
