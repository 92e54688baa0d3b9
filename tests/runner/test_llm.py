"""`provider: openai` as an eval target, against a real scripted server on 127.0.0.1."""

from __future__ import annotations

import base64
import json

import pytest

from agentv_py.errors import TargetError
from agentv_py.loading import load_dataset
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.runner.targets import OpenAIRunner
from tests.chat_server import error, text
from tests.pngs import png

KEY = "sk-test-SECRET-0123456789"


def target(server, **extra) -> OpenAIRunner:
    config = OpenAITarget.model_validate(
        {
            "name": "model",
            "provider": "openai",
            "model": "gpt-test",
            "api_key": KEY,
            "base_url": server.base_url,
            "vision": True,
            **extra,
        }
    )
    return OpenAIRunner(config, secrets=[KEY])


@pytest.fixture
def case(ws):
    ws.file("office.png", png(4, 3))
    ws.file("invoice.json", '{"total": 5}')
    ws.dataset(
        """
        execution:
          evaluators: [{type: field_accuracy, fields: [{path: total}]}]
        evalcases:
          - id: c1
            input_messages:
              - {role: system, content: You extract invoices.}
              - role: user
                content:
                  - {type: text, value: Extract the total.}
                  - {type: file, value: invoice.json}
                  - {type: image, value: office.png, detail: low}
            expected_output: {total: 5}
        """
    )
    return load_dataset("dataset.yaml").cases[0]


def test_request_carries_messages_files_and_images(chat_server, case):
    chat_server.reply(text('{"total": 5}'))
    outcome = target(chat_server, temperature=0, max_tokens=50).invoke(case, 1)
    assert outcome.answer == '{"total": 5}' and outcome.parsed == {"total": 5}
    [request] = chat_server.requests
    assert request.path == "/v1/chat/completions"
    body = request.body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("gpt-test", 0, 50)
    system, user = body["messages"]
    assert system == {"role": "system", "content": "You extract invoices."}
    first, inlined, image = user["content"]
    assert first == {"type": "text", "text": "Extract the total."}
    assert inlined == {"type": "text", "text": '<file name="invoice.json">\n{"total": 5}\n</file>'}
    assert image["type"] == "image_url" and image["image_url"]["detail"] == "low"
    prefix, payload = image["image_url"]["url"].split(",", 1)
    assert prefix == "data:image/png;base64" and base64.b64decode(payload) == png(4, 3)
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert outcome.trace["token_usage"] == {"input": 42, "output": 7}
    assert outcome.trace["model"] == "gpt-test" and outcome.trace["http_attempts"] == 1
    assert outcome.trace["duration_ms"] > 0


def test_text_only_messages_are_plain_strings(chat_server, ws):
    ws.dataset(
        "execution:\n  evaluators: [{type: field_accuracy, fields: [{path: a}]}]\n"
        "evalcases:\n  - id: c1\n    input: What is 2+2?\n    expected_output: {a: 4}\n"
    )
    chat_server.reply(text("4"))
    target(chat_server, system_prompt="Answer briefly.").invoke(load_dataset("dataset.yaml").cases[0], 1)
    assert chat_server.requests[0].body["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 2+2?"},
    ]


def test_429_then_success_is_retried(chat_server, case):
    chat_server.reply(error(429, "slow down", headers={"retry-after-ms": "10"}), text('{"total": 5}'))
    outcome = target(chat_server).invoke(case, 1)
    assert outcome.answer == '{"total": 5}'
    assert outcome.trace["http_attempts"] == 2 and len(chat_server.requests) == 2


def test_500_after_retries_is_an_error_without_the_key(chat_server, case):
    chat_server.reply(*[error(500, f"upstream failed for key {KEY}", headers={"retry-after-ms": "5"})] * 3)
    outcome = target(chat_server, max_retries=2).invoke(case, 1)
    assert outcome.answer is None
    assert outcome.error == (
        f"target 'model' failed: HTTP 500 from {chat_server.base_url} (3 attempts): upstream failed for key ***"
    )
    assert len(chat_server.requests) == 3


def test_a_reply_that_never_comes_times_out(chat_server, case):
    chat_server.reply(text("late", delay=3), text("late", delay=3))
    outcome = target(chat_server, timeout_seconds=0.3, max_retries=1).invoke(case, 1)
    assert outcome.error == f"target 'model' failed: no reply within 0.3s from {chat_server.base_url} (2 attempts)"


def test_key_shaped_tokens_are_masked_even_when_not_ours(chat_server, case):
    chat_server.reply(error(401, "Incorrect API key provided: sk-proj-abcdefgh1234"))
    outcome = target(chat_server).invoke(case, 1)
    assert outcome.error == (
        f"target 'model' failed: HTTP 401 from {chat_server.base_url}: Incorrect API key provided: sk-***"
    )


def test_empty_reply_is_an_error(chat_server, case):
    chat_server.reply(text(""))
    outcome = target(chat_server).invoke(case, 1)
    assert outcome.error == "target 'model' failed: the model returned no text (finish_reason: stop)"


def test_no_key_for_the_openai_api_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = OpenAITarget.model_validate({"name": "gpt", "provider": "openai", "model": "gpt-4o"})
    with pytest.raises(TargetError) as caught:
        OpenAIRunner(config, [])
    assert caught.value.message == (
        "target 'gpt' has no API key: set api_key (e.g. api_key: ${{ OPENAI_API_KEY }}) "
        "or the OPENAI_API_KEY environment variable"
    )


def test_local_server_needs_no_key(chat_server, case, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = OpenAITarget.model_validate(
        {"name": "local", "provider": "openai", "model": "llava", "base_url": chat_server.base_url}
    )
    chat_server.reply(text("ok"))
    assert OpenAIRunner(config, []).invoke(case, 1).answer == "ok"
    assert chat_server.requests[0].headers["authorization"] == "Bearer no-key-required"


def test_unreachable_server(case):
    config = OpenAITarget.model_validate(
        {"name": "local", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}
    )
    outcome = OpenAIRunner(config, []).invoke(case, 1)
    assert outcome.error.startswith("target 'local' failed: could not connect to http://127.0.0.1:9/v1: ")
    json.dumps(outcome.trace)
