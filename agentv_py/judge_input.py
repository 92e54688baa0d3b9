"""The payload a code judge reads on stdin, as one object (`JudgeInput`): the answer, the
expected answer, the case and its messages, each field by its snake_case name. Part of the judge
SDK (`from agentv_py.judge import JudgeInput`); standard library only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentv_py.scoring.paths import MISSING, resolve

if TYPE_CHECKING:
    from typing import Any


_INPUT_FIELDS = (
    "candidate_answer",
    "reference_answer",
    "candidate",
    "expected",
    "question",
    "expected_outcome",
    "expected_messages",
    "input_messages",
    "output_messages",
    "input_files",
    "image_files",
    "guideline_files",
    "trace_summary",
    "config",
    "eval_id",
    "dataset",
)


class JudgeInput:
    """The payload a judge receives, typed. `raw` keeps the whole object.

    Keys are read in snake_case only: that is how agentv sends them and how AgentV sent them (its
    TypeScript SDK converted the payload to camelCase inside the judge, after reading stdin), so
    no camelCase payload ever reaches a judge."""

    __slots__ = (*_INPUT_FIELDS, "raw")

    candidate_answer: str
    reference_answer: str
    candidate: Any
    expected: Any
    question: str
    expected_outcome: str | None
    expected_messages: list[dict[str, Any]]
    input_messages: list[dict[str, Any]]
    output_messages: list[dict[str, Any]]
    input_files: list[str]
    image_files: list[str]
    guideline_files: list[str]
    trace_summary: dict[str, Any] | None
    config: dict[str, Any]
    eval_id: str
    dataset: str
    raw: dict[str, Any]

    def __init__(self, **values: Any) -> None:
        for name in _INPUT_FIELDS:
            setattr(self, name, values[name])
        self.raw = values.get("raw", {})

    def __repr__(self) -> str:
        return f"JudgeInput(eval_id={self.eval_id!r}, dataset={self.dataset!r})"

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> JudgeInput:
        answer = payload.get("candidate_answer", payload.get("output", "")) or ""
        candidate = payload.get("candidate")
        if candidate is None and answer and "candidate" not in payload:
            from agentv_py.scoring.answer import NOT_JSON, parse_answer_json

            parsed = parse_answer_json(answer)
            candidate = None if parsed is NOT_JSON else parsed
        return cls(
            candidate_answer=answer,
            reference_answer=payload.get("reference_answer", payload.get("expected_output", "")) or "",
            candidate=candidate,
            expected=payload.get("expected"),
            question=payload.get("question", payload.get("input", "")) or "",
            expected_outcome=payload.get("expected_outcome"),
            expected_messages=payload.get("expected_messages") or [],
            input_messages=payload.get("input_messages") or [],
            output_messages=payload.get("output_messages") or [],
            input_files=payload.get("input_files") or [],
            image_files=payload.get("image_files") or [],
            guideline_files=payload.get("guideline_files") or [],
            trace_summary=payload.get("trace_summary"),
            config=payload.get("config") or {},
            eval_id=payload.get("eval_id", ""),
            dataset=payload.get("dataset", ""),
            raw=payload,
        )

    def get(self, path: str, default: Any = None) -> Any:
        """A value of the parsed answer by path (`supplier.name`, `items[0].qty`), else default."""
        value = resolve(self.candidate, path)
        return default if value is MISSING else value

    def get_expected(self, path: str, default: Any = None) -> Any:
        """A value of the ground truth by path, else default."""
        value = resolve(self.expected, path)
        return default if value is MISSING else value
