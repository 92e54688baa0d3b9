"""`provider: azure`, `anthropic` and `gemini` as eval targets and judges, each through its
official SDK against a real scripted server on 127.0.0.1 speaking that provider's format
(tests/provider_servers.py)."""

from __future__ import annotations

import base64
import re

import pytest

from agentv_py.chat import ChatMessage
from agentv_py.errors import TargetError
from agentv_py.loading import load_dataset
from agentv_py.media import ImageRef
from agentv_py.models.targets import TargetsFile, is_model_target
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP
from agentv_py.runner.azure import azure_endpoint
from agentv_py.runner.chat_messages import api_key
from agentv_py.runner.llm import retry_delay
from agentv_py.runner.targets import ModelRunner, make_runner
from tests.chat_server import error, text
from tests.pngs import png
from tests.provider_servers import KEY, PROVIDERS, expected_path, server_for, target_config


def config_of(entry):
    return TargetsFile.model_validate({"targets": [entry]}).targets[0]


def runner(provider, server, **extra) -> ModelRunner:
    return ModelRunner(config_of(target_config(provider, server, vision=True, **extra)), secrets=[KEY])


def path_ok(provider: str, path: str) -> bool:
    if provider == "gemini":  # the SDK picks the API version (v1beta, or v1 in newer releases)
        return re.fullmatch(r"/v1(beta)?/models/gemini-test:generateContent", path) is not None
    return path == expected_path(provider)


def key_sent(provider: str, headers: dict[str, str]) -> bool:
    if provider == "azure":
        return headers.get("api-key") == KEY
    if provider == "anthropic":  # older SDKs send x-api-key, newer ones a bearer token
        return "anthropic-version" in headers and KEY in (
            headers.get("x-api-key"),
            headers.get("authorization", "")[7:],
        )
    return headers.get("x-goog-api-key") == KEY


@pytest.fixture(params=PROVIDERS)
def server(request):
    with server_for(request.param) as running:
        running.provider = request.param
        yield running


@pytest.fixture
def case(ws):
    ws.file("office.png", png(4, 3))
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
                  - {type: image, value: office.png}
            expected_output: {total: 5}
        """
    )
    return load_dataset("dataset.yaml").cases[0]


def test_a_target_answers_with_usage_in_the_trace(server, case):
    provider = server.provider
    server.reply(text('{"total": 5}'))
    outcome = runner(provider, server, temperature=0.5, max_output_tokens=50).invoke(case, 1)
    assert outcome.error is None and outcome.parsed == {"total": 5}
    [request] = server.requests
    assert path_ok(provider, request.path) and key_sent(provider, request.headers)
    assert outcome.trace["token_usage"] == {"input": 42, "output": 7}
    assert outcome.trace["http_attempts"] == 1 and outcome.trace["duration_ms"] > 0
    assert outcome.trace["model"] == {"azure": "dep-1", "anthropic": "claude-test", "gemini": "gemini-test"}[provider]
    body = request.body
    if provider == "azure":
        assert (body["model"], body["temperature"], body["max_tokens"]) == ("dep-1", 0.5, 50)
        assert body["messages"][0] == {"role": "system", "content": "You extract invoices."}
    elif provider == "anthropic":
        assert (body["model"], body["temperature"], body["max_tokens"]) == ("claude-test", 0.5, 50)
        assert body["system"] == "You extract invoices." and [m["role"] for m in body["messages"]] == ["user"]
    else:
        assert body["generationConfig"] == {"temperature": 0.5, "maxOutputTokens": 50}
        assert body["systemInstruction"]["parts"] == [{"text": "You extract invoices."}]


def test_images_reach_the_server_in_the_providers_format(server, case):
    provider = server.provider
    server.reply(text("ok"))
    runner(provider, server).invoke(case, 1)
    body = server.requests[0].body
    if provider == "azure":
        first, image = body["messages"][1]["content"]
        assert first == {"type": "text", "text": "Extract the total."}
        prefix, data = image["image_url"]["url"].split(",", 1)
        assert prefix == "data:image/png;base64"
    elif provider == "anthropic":
        first, image = body["messages"][0]["content"]
        assert first == {"type": "text", "text": "Extract the total."}
        assert (image["type"], image["source"]["type"], image["source"]["media_type"]) == (
            "image",
            "base64",
            "image/png",
        )
        data = image["source"]["data"]
    else:
        [content] = body["contents"]
        first, image = content["parts"]
        assert content["role"] == "user" and first == {"text": "Extract the total."}
        inline = image.get("inlineData") or image["inline_data"]
        assert (inline.get("mimeType") or inline["mime_type"]) == "image/png"
        data = inline["data"].replace("-", "+").replace("_", "/")  # the SDK sends base64url
        data += "=" * (-len(data) % 4)
    assert base64.b64decode(data) == png(4, 3)


def test_anthropic_sends_an_image_url_as_a_url_source():
    with server_for("anthropic") as server:
        server.reply(text("ok"))
        client = runner("anthropic", server).client
        url = "https://example.com/photo.png"
        assert client.complete([ChatMessage("user", ["look", ImageRef("url", url)])]).text == "ok"
        image = server.requests[0].body["messages"][0]["content"][1]
        assert image == {"type": "image", "source": {"type": "url", "url": url}}


def test_gemini_refuses_an_image_url_without_calling():
    with server_for("gemini") as server:
        reply = runner("gemini", server).client.complete(
            [ChatMessage("user", ["look", ImageRef("url", "https://example.com/photo.png")])]
        )
        assert reply.error == (
            "image photo.png is a URL, which the gemini provider cannot send (agentv does not fetch URLs); "
            "give it as a local file or a data URI"
        )
        assert server.requests == []


def test_a_judge_answers_chat_messages(server):
    server.reply(text('{"score": 1}'))
    reply = runner(server.provider, server).complete([ChatMessage("user", ["Judge this."])])
    assert reply.text == '{"score": 1}' and reply.usage == {"input": 42, "output": 7} and reply.attempts == 1


def test_500_then_success_is_retried_and_counted(server, case):
    server.reply(error(500, "busy"), text("ok"))
    outcome = runner(server.provider, server, retry_initial_delay_ms=1).invoke(case, 1)
    assert outcome.answer == "ok" and outcome.trace["http_attempts"] == 2 and len(server.requests) == 2


def test_retries_end_with_one_line_without_the_key(server, case):
    server.reply(*[error(500, f"upstream failed for key {KEY}")] * 2)
    outcome = runner(server.provider, server, max_retries=1, retry_initial_delay_ms=1).invoke(case, 1)
    assert outcome.error == (
        f"target '{server.provider}' failed: HTTP 500 from {server.root_url} (2 attempts): upstream failed for key ***"
    )
    assert len(server.requests) == 2 and KEY not in repr(outcome)


def test_401_is_not_retried(server, case):
    server.reply(error(401, "invalid x-api-key"), text("never"))
    outcome = runner(server.provider, server, max_retries=3, retry_initial_delay_ms=1).invoke(case, 1)
    assert outcome.error == f"target '{server.provider}' failed: HTTP 401 from {server.root_url}: invalid x-api-key"
    assert len(server.requests) == 1


def test_listed_statuses_are_retried_others_are_not(server, case):
    server.reply(error(503, "unavailable"), text("never"))
    outcome = runner(server.provider, server, retry_status_codes=[429], retry_initial_delay_ms=1).invoke(case, 1)
    assert outcome.error == f"target '{server.provider}' failed: HTTP 503 from {server.root_url}: unavailable"
    assert len(server.requests) == 1
    server.script.clear()
    server.reply(error(429, "slow down"), text("ok"))
    outcome = runner(server.provider, server, retry_status_codes=[429], retry_initial_delay_ms=1).invoke(case, 1)
    assert outcome.answer == "ok" and outcome.trace["http_attempts"] == 2


def test_a_reply_over_the_cap_is_refused(server, case):
    server.reply(text("x" * (DEFAULT_OUTPUT_CAP + 1)))
    outcome = runner(server.provider, server).invoke(case, 1)
    assert (
        outcome.error
        == f"target '{server.provider}' failed: the reply from {server.root_url} is larger than the 10 MB cap"
    )


def test_a_compressed_reply_is_refused(server, case):
    server.reply(text("ok", headers={"content-encoding": "gzip"}))
    outcome = runner(server.provider, server, max_retries=0).invoke(case, 1)
    assert outcome.error == (
        f"target '{server.provider}' failed: the reply from {server.root_url} is compressed "
        "(content-encoding: gzip) though agentv asked for none"
    )


def test_system_prompt_is_sent_when_the_case_has_none(server):
    server.reply(text("4"))
    client = runner(server.provider, server, system_prompt="Answer briefly.").client
    client.complete([ChatMessage("user", ["2+2?"])])
    body = server.requests[0].body
    system = {
        "azure": lambda: body["messages"][0]["content"],
        "anthropic": lambda: body["system"],
        "gemini": lambda: body["systemInstruction"]["parts"][0]["text"],
    }[server.provider]()
    assert system == "Answer briefly."


def test_unreachable_server_is_one_line():
    for provider in PROVIDERS:
        entry = {**target_config(provider, _Dead()), "max_retries": 0}
        reply = ModelRunner(config_of(entry), [KEY]).complete([ChatMessage("user", ["hi"])])
        assert reply.error is not None and reply.error.startswith("could not connect to http://127.0.0.1:9"), (
            reply.error
        )
        assert KEY not in reply.error


class _Dead:
    root_url = "http://127.0.0.1:9"


def test_anthropic_thinking_budget_comes_on_top_of_the_answer():
    with server_for("anthropic") as server:
        server.reply(text("ok"))
        runner("anthropic", server, thinking_budget=2000, max_output_tokens=500).complete([ChatMessage("user", ["hi"])])
        body = server.requests[0].body
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000} and body["max_tokens"] == 2500


def test_anthropic_max_tokens_defaults_to_4096():
    with server_for("anthropic") as server:
        server.reply(text("ok"))
        runner("anthropic", server).complete([ChatMessage("user", ["hi"])])
        assert server.requests[0].body["max_tokens"] == 4096


def test_azure_version_and_resource_name():
    with server_for("azure") as server:
        server.reply(text("ok"))
        runner("azure", server, version="api-version=2024-10-21").complete([ChatMessage("user", ["hi"])])
        assert server.requests[0].path == expected_path("azure", "2024-10-21")


ENDPOINTS = [
    ("resource-name", "my-res", "https://my-res.openai.azure.com"),
    ("url", "https://my-res.openai.azure.com/", "https://my-res.openai.azure.com"),
    ("url-with-openai", "https://proxy.example/openai/", "https://proxy.example"),
    ("http", "http://127.0.0.1:8080", "http://127.0.0.1:8080"),
]


@pytest.mark.parametrize("given, endpoint", [e[1:] for e in ENDPOINTS], ids=[e[0] for e in ENDPOINTS])
def test_azure_endpoint(given, endpoint):
    assert azure_endpoint(given) == endpoint


KEYLESS = [
    ("azure", {"endpoint": "r", "deployment": "d"}, "AZURE_OPENAI_API_KEY"),
    ("anthropic", {"model": "m"}, "ANTHROPIC_API_KEY"),
    ("gemini", {}, "GOOGLE_GENERATIVE_AI_API_KEY, GOOGLE_API_KEY or GEMINI_API_KEY"),
]
KEY_VARS = (
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
)


@pytest.mark.parametrize("provider, keys, variables", KEYLESS, ids=[k[0] for k in KEYLESS])
def test_no_key_is_a_config_error(monkeypatch, tmp_path, provider, keys, variables):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    config = config_of({"name": "m", "provider": provider, **keys})
    with pytest.raises(TargetError) as caught:
        make_runner(config, dataset_dir=tmp_path, work_dir=tmp_path, secrets=[])
    first = variables.split(",")[0].split(" ")[0]
    assert caught.value.message == (
        f"target 'm' has no API key: set api_key (e.g. api_key: ${{{{ {first} }}}}) "
        f"or the {variables} environment variable"
    )


@pytest.mark.parametrize("var", ["GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"])
def test_gemini_reads_each_key_variable(monkeypatch, var):
    for other in KEY_VARS:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(var, "from-env")
    assert api_key(config_of({"name": "g", "provider": "gemini"})) == "from-env"


def test_every_model_provider_is_a_model_target():
    for provider in PROVIDERS:
        assert is_model_target(config_of(target_config(provider, _Dead())))


def test_retry_delay_follows_agentvs_formula():
    config = config_of(
        {"name": "a", "provider": "anthropic", "model": "m", "retry_initial_delay_ms": 100, "retry_max_delay_ms": 300}
    )
    delays = [retry_delay(config, n) for n in range(4)]
    for delay, base in zip(delays, [0.1, 0.2, 0.3, 0.3], strict=True):
        assert 0.75 * base <= delay < 1.25 * base


INVALID = [
    (
        "anthropic-temperature",
        {"provider": "anthropic", "model": "m", "temperature": 1.5},
        "temperature must be between 0 and 1, got 1.5",
    ),
    (
        "thinking-with-temperature",
        {"provider": "anthropic", "model": "m", "temperature": 0, "thinking_budget": 2000},
        "temperature cannot be set with thinking_budget: extended thinking needs the default",
    ),
    (
        "thinking-too-small",
        {"provider": "anthropic", "model": "m", "thinking_budget": 100},
        "thinking_budget must be at least 1024, got 100",
    ),
    (
        "azure-endpoint",
        {"provider": "azure", "endpoint": "my res.openai.azure.com", "deployment": "d"},
        "endpoint must be an http:// or https:// URL or an Azure resource name (letters, digits and hyphens), "
        "got 'my res.openai.azure.com'",
    ),
    (
        "retry-codes",
        {"provider": "gemini", "retry_status_codes": [200]},
        "retry_status_codes must list HTTP error statuses (400-599), got 200",
    ),
    (
        "backoff",
        {"provider": "gemini", "retry_backoff_factor": 0.5},
        "retry_backoff_factor must be a number >= 1, got 0.5",
    ),
    ("batching", {"provider": "gemini", "provider_batching": True}, "invalid value true: expected False"),
]


@pytest.mark.parametrize("fields, message", [i[1:] for i in INVALID], ids=[i[0] for i in INVALID])
def test_invalid_settings_are_refused_at_load(ws, fields, message):
    import yaml

    from agentv_py.errors import ConfigError
    from agentv_py.loading import load_targets

    ws.file("targets.yaml", yaml.safe_dump({"targets": [{"name": "t", **fields}]}))
    with pytest.raises(ConfigError) as caught:
        load_targets("targets.yaml")
    [problem] = caught.value.problems
    assert message in problem.message
