"""An llm_judge prompt file is used however the config was made: loaded from YAML (read once at
load time, into a new config) or built in code (read when it is evaluated)."""

from __future__ import annotations

import json

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.loading import load_dataset
from agentv_py.models.judges import LlmJudgeConfig

REPLY = json.dumps({"score": 1.0})


class Recorder:
    """A judge that records the prompts it is sent."""

    name = "judge"
    vision = False

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        self.prompts.append(messages[-1].text)
        return ChatReply(REPLY)


def context(tmp_path, recorder: Recorder) -> EvalContext:
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=tmp_path,
        answer="42",
        expected="42",
        question="What is six times seven?",
        judges={"judge": recorder},
        default_judge="judge",
    )


def test_a_config_built_in_code_uses_its_prompt_file(tmp_path):
    (tmp_path / "judge.md").write_text("FROM THE FILE: {{input}} -> {{output}}")
    config = LlmJudgeConfig(type="llm_judge", prompt="judge.md")
    assert config.template is None and config.prompt_file == "judge.md"
    recorder = Recorder()
    result = run_evaluator(config, context(tmp_path, recorder))
    assert result.status == "processed", result.misses
    assert recorder.prompts == ["FROM THE FILE: What is six times seven? -> 42"]


def test_a_missing_prompt_file_in_code_is_an_error_not_the_default_prompt(tmp_path):
    recorder = Recorder()
    result = run_evaluator(LlmJudgeConfig(type="llm_judge", prompt="nope.md"), context(tmp_path, recorder))
    assert result.status == "error" and recorder.prompts == []
    assert result.misses[0].startswith("llm_judge 'llm_judge': prompt file not found: nope.md; tried: ")


def test_loading_resolves_the_file_into_a_new_config_and_leaves_the_parsed_one_alone(ws):
    ws.file("prompts/judge.md", "LOADED: {{output}}")
    path = ws.dataset(
        """
        execution:
          evaluators: [{type: llm_judge, prompt: prompts/judge.md, target: judge}]
        evalcases:
          - {id: c1, input: q, expected_output: a}
        """
    )
    dataset = load_dataset(path)
    [resolved] = dataset.cases[0].evaluators
    [parsed] = dataset.model.execution.evaluators
    assert resolved is not parsed
    assert isinstance(resolved, LlmJudgeConfig) and resolved.template == "LOADED: {{output}}"
    assert parsed.template is None  # the validated config was not changed afterwards


def test_a_case_level_prompt_file_is_resolved_for_that_case_only(ws):
    ws.file("case.md", "CASE: {{output}}")
    path = ws.dataset(
        """
        execution:
          evaluators: [{type: llm_judge, target: judge}]
        evalcases:
          - {id: own, input: q, expected_output: a, evaluators: [{type: llm_judge, prompt: case.md, target: judge}]}
          - {id: suite, input: q, expected_output: a}
        """
    )
    own, suite = load_dataset(path).cases
    assert [c.template for c in own.evaluators] == ["CASE: {{output}}"]
    assert [c.template for c in suite.evaluators] == [None]  # the default prompt
