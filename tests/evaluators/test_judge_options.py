"""AgentV v4.42's llm_judge options: `temperature` (sent with every judge call in place of the
judge target's), `max_steps` (accepted, no effect), and `prompt: {command: [...]}` (v4.42's
spelling of `prompt: {script: [...]}`); their load errors."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agentv_py.chat import at_temperature
from agentv_py.evaluators import run_evaluator
from agentv_py.models.judges import LlmJudgeConfig, PromptScript, RubricConfig
from agentv_py.runner.cache import CachedChat
from agentv_py.runner.targets import MockRunner
from tests.chat_server import text
from tests.evaluators.test_llm_judge import VALID, context, judge, llm


@pytest.mark.parametrize(
    ("judge_options", "evaluator_options", "sent"),
    [
        ({}, {}, None),
        ({}, {"temperature": 0}, 0),
        ({"temperature": 0.9}, {}, 0.9),
        ({"temperature": 0.9}, {"temperature": 0.2}, 0.2),
    ],
    ids=["neither", "evaluator", "target", "evaluator-wins"],
)
def test_temperature_is_sent_to_the_judge_model(chat_server, judge_options, evaluator_options, sent):
    chat_server.reply(text(json.dumps(VALID)))
    result = run_evaluator(llm(**evaluator_options), context(chat_server, **judge_options))
    assert result.status == "processed", result.misses
    [request] = chat_server.requests
    assert request.body.get("temperature") == sent


def test_a_rubric_sends_its_temperature_too(chat_server):
    chat_server.reply(text(json.dumps({"checks": [{"id": "r1", "satisfied": True, "reasoning": "yes"}]})))
    config = RubricConfig.model_validate({"type": "rubric", "rubrics": ["Mentions the cat"], "temperature": 0.3})
    result = run_evaluator(config, context(chat_server))
    assert result.status == "processed", result.misses
    assert chat_server.requests[0].body["temperature"] == 0.3


def test_a_runner_at_a_temperature_is_made_once(chat_server):
    runner = judge(chat_server)
    warm = at_temperature(runner, 0.5)
    assert warm is at_temperature(runner, 0.5) and warm is not runner
    assert warm.client.config.temperature == 0.5 and runner.client.config.temperature is None
    assert at_temperature(runner, None) is runner


def test_clients_that_do_not_sample_are_left_as_they_are():
    mock = MockRunner.__new__(MockRunner)
    assert at_temperature(mock, 0.5) is mock
    cached = CachedChat.__new__(CachedChat)
    cached.client = mock
    assert cached.with_temperature(0.5) is cached


def test_max_steps_is_accepted_and_changes_nothing(chat_server):
    chat_server.reply(text(json.dumps(VALID)), text(json.dumps(VALID)))
    plain = run_evaluator(llm(), context(chat_server))
    stepped = run_evaluator(llm(max_steps=3), context(chat_server))
    assert (stepped.score, stepped.hits) == (plain.score, plain.hits)
    assert llm(maxSteps=3).max_steps == 3


def test_prompt_command_is_prompt_script():
    spelled = LlmJudgeConfig.model_validate({"type": "llm_judge", "prompt": {"command": ["python", "p.py"]}})
    assert spelled.prompt_script == PromptScript.model_validate({"script": ["python", "p.py"]})


ERRORS = [
    ("temperature-over-2", {"temperature": 2.5}, "temperature must be between 0 and 2, got 2.5"),
    ("temperature-negative", {"temperature": -0.1}, "temperature must be between 0 and 2, got -0.1"),
    ("temperature-text", {"temperature": "hot"}, "Input should be a valid number"),
    ("max-steps-0", {"max_steps": 0}, "max_steps must be an integer from 1 to 50, got 0"),
    ("max-steps-51", {"max_steps": 51}, "max_steps must be an integer from 1 to 50, got 51"),
    ("max-steps-fraction", {"max_steps": 2.5}, "Input should be a valid integer"),
    (
        "both-spellings",
        {"prompt": {"script": ["a.py"], "command": ["b.py"]}},
        "give only one of 'script', 'command' (they are aliases: AgentV v4.42 spells it command)",
    ),
    ("neither-spelling", {"prompt": {"cwd": "."}}, "Field required"),
]


@pytest.mark.parametrize(("options", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_option_errors(options, message):
    with pytest.raises(ValidationError) as info:
        LlmJudgeConfig.model_validate({"type": "llm_judge", **options})
    assert message in str(info.value)
