"""The reference answer judges see (`{{expected_output}}`, the payload's `reference_answer`):
AgentV's derivation from the last expected message, one function for every judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.base import reference_answer
from agentv_py.models.dataset import EvalCase
from agentv_py.models.judges import LlmJudgeConfig
from tests.chat_server import text


def case(expected: Any) -> EvalCase:
    return EvalCase.model_validate({"id": "c1", "input": "q", "expected_messages": expected})


@pytest.mark.parametrize(
    ("expected", "reference"),
    [
        pytest.param([{"role": "assistant", "content": "Paris"}], "Paris", id="text-as-is"),
        pytest.param([{"role": "assistant", "content": {"total": 5}}], '{\n  "total": 5\n}', id="object-pretty-json"),
        pytest.param(
            [{"role": "assistant", "content": [{"type": "file", "value": "answer.md"}]}],
            '[\n  {\n    "type": "file",\n    "value": "answer.md"\n  }\n]',
            id="content-items-as-json",
        ),
        pytest.param(
            [{"role": "assistant", "tool_calls": [{"tool": "search", "input": {"q": "x"}}]}],
            '[\n  {\n    "tool": "search",\n    "input": {\n      "q": "x"\n    }\n  }\n]',
            id="tool-calls-only",
        ),
        pytest.param([], "", id="no-expected-messages"),
    ],
)
def test_reference_answer(expected: Any, reference: str) -> None:
    assert reference_answer(case(expected), None) == reference


def test_without_a_case_the_ground_truth_is_the_reference() -> None:
    assert reference_answer(None, {"a": 1}) == '{\n  "a": 1\n}'
    assert reference_answer(None, "x") == "x"
    assert reference_answer(None, None) == ""


def test_llm_judge_renders_expected_content_items(chat_server: Any) -> None:
    """Regression: expected content given as items (a file reference) crashed the template with
    `Object of type ContentItem is not JSON serializable`."""
    from agentv_py.models.model_targets import OpenAITarget
    from agentv_py.runner.targets import OpenAIRunner

    chat_server.default = text('{"score": 1, "hits": ["ok"], "misses": [], "reasoning": "fine"}')
    judge = OpenAIRunner(
        OpenAITarget.model_validate(
            {"name": "j", "provider": "openai", "model": "m", "api_key": "k", "base_url": chat_server.base_url}
        ),
        ["k"],
    )
    the_case = case([{"role": "assistant", "content": [{"type": "file", "value": "answer.md"}]}])
    context = EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=Path("."),
        answer="an answer",
        expected=the_case.expected_value,
        case=the_case,
        judges={"j": judge},
        default_judge="j",
    )
    result = run_evaluator(LlmJudgeConfig(type="llm_judge", prompt="Ref: {{expected_output}} Got: {{output}}"), context)
    assert result.status == "processed", result.reasoning
    sent = chat_server.requests[-1].body["messages"][-1]["content"]
    assert '"value": "answer.md"' in sent
