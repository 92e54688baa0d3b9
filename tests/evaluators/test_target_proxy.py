"""code_judge `target:` (AgentV 2026-01-08): a real judge script calls the judge target through
agentv's loopback proxy; the judge target is a scripted chat server on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.evaluators.target_proxy import MAX_BODY_BYTES, TargetProxy
from agentv_py.judge import TargetClient, TargetInvocationError, TargetNotAvailableError, target_client
from agentv_py.models.dataset import EvalCase
from agentv_py.models.evaluators import CodeJudgeConfig, calls_judge, judge_target_name
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.runner.targets import OpenAIRunner
from tests.chat_server import error, text

KEY = "sk-proxy-SECRET-123456789"

# A judge in the style of AgentV's contextual-precision example: one invoke, one batch of two.
ASKING_JUDGE = r"""
import json, os, sys
from agentv_py.judge import TargetInvocationError, target_client

payload = json.load(sys.stdin)
client = target_client()
details = {
    "key_seen": any("SECRET" in value for value in os.environ.values()),
    "proxy_url": os.environ["AGENTV_TARGET_PROXY_URL"],
}
answers, errors = [], []
try:
    question = f"Is '{payload['candidate_answer']}' right?"
    answers.append(client.invoke(question, system_prompt="Answer yes or no.").raw_text)
    batch = client.invoke_batch(["first?", {"question": "second?", "systemPrompt": "Be brief."}])
    answers += [r.raw_text for r in batch]
    details["info"] = client.info()
    answers.append(client.invoke("one too many?").raw_text)
except TargetInvocationError as exc:
    errors.append([str(exc), exc.status_code])
details.update(answers=answers, errors=errors)
yes = sum(a == "yes" for a in answers)
print(json.dumps({"score": yes / max(len(answers), 1), "details": details}))
"""


def judge(server: Any, name: str = "judge") -> OpenAIRunner:
    config = OpenAITarget.model_validate(
        {
            "name": name,
            "provider": "openai",
            "model": "judge-model",
            "api_key": KEY,
            "base_url": server.base_url,
            "max_retries": 1,
        }
    )
    return OpenAIRunner(config, [KEY])


def context(tmp_path: Path, server: Any, default_judge: str | None = "judge") -> EvalContext:
    case = EvalCase.model_validate({"id": "c1", "input": "Capital of France?", "expected_output": "Paris"})
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=tmp_path,
        answer="Paris",
        expected="Paris",
        question="Capital of France?",
        case=case,
        judges={"judge": judge(server)} if server else {},
        default_judge=default_judge,
    )


def code_judge(tmp_path: Path, source: str, **extra: Any) -> CodeJudgeConfig:
    (tmp_path / "asking.py").write_text(source)
    return CodeJudgeConfig.model_validate(
        {"type": "code_judge", "name": "asks", "script": ["python3", "asking.py"], **extra}
    )


def test_a_judge_asks_the_judge_target_through_the_proxy(tmp_path, chat_server):
    chat_server.reply(text("yes"), text("yes"), text("no"), text("yes"))
    result = run_evaluator(code_judge(tmp_path, ASKING_JUDGE, target={"max_calls": 4}), context(tmp_path, chat_server))

    assert result.status == "processed", result.misses
    details = result.details
    assert details["answers"] == ["yes", "yes", "no", "yes"]
    assert details["errors"] == []
    assert details["info"] == {"targetName": "judge", "maxCalls": 4, "callCount": 3, "availableTargets": ["judge"]}
    assert details["key_seen"] is False  # the judge never holds the judge target's key
    assert result.score == 0.75
    assert details["agentv"] == {
        "target_proxy": {
            "target_name": "judge",
            "call_count": 4,
            "max_calls": 4,
            "token_usage": {"input": 168, "output": 28},
        }
    }
    first, *_ = chat_server.requests
    assert first.body["messages"] == [
        {"role": "system", "content": "Answer yes or no."},
        {"role": "user", "content": "Is 'Paris' right?"},
    ]
    assert chat_server.requests[1].body["messages"] == [{"role": "user", "content": "first?"}]
    assert chat_server.requests[2].body["messages"][0] == {"role": "system", "content": "Be brief."}
    # the proxy lived for that judge run only
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(details["proxy_url"] + "/info", timeout=5)


def test_the_call_limit_answers_429(tmp_path, chat_server):
    chat_server.reply(text("yes"))
    result = run_evaluator(code_judge(tmp_path, ASKING_JUDGE, target={"max_calls": 1}), context(tmp_path, chat_server))

    assert result.status == "processed", result.misses
    assert result.details["answers"] == ["yes"]
    assert result.details["errors"] == [
        ["target proxy /invokeBatch: Batch would exceed max calls (current: 1, batch: 2, limit: 1) (HTTP 429)", 429]
    ]
    assert result.details["agentv"]["target_proxy"]["call_count"] == 1
    assert len(chat_server.requests) == 1


def test_target_true_uses_the_default_judge_and_the_default_limit(tmp_path, chat_server):
    chat_server.default = text("yes")
    result = run_evaluator(code_judge(tmp_path, ASKING_JUDGE, target=True), context(tmp_path, chat_server))
    assert result.details["answers"] == ["yes"] * 4
    assert result.details["agentv"]["target_proxy"] == {
        "target_name": "judge",
        "call_count": 4,
        "max_calls": 50,
        "token_usage": {"input": 168, "output": 28},
    }


def test_a_judge_failing_after_calls_is_an_error_that_still_records_the_calls(tmp_path, chat_server):
    chat_server.reply(text("yes"))
    source = (
        "import sys\nfrom agentv_py.judge import target_client\n"
        "target_client().invoke('q')\nprint('boom', file=sys.stderr)\nsys.exit(3)\n"
    )
    result = run_evaluator(code_judge(tmp_path, source, target=True), context(tmp_path, chat_server))
    assert result.status == "error"
    assert result.misses == [
        "code_judge 'asks': exited with code 3 (0 or 1 with a JSON result expected) (stderr: boom)"
    ]
    assert result.details["agentv"]["target_proxy"]["call_count"] == 1


def test_the_reserved_details_key_is_refused(tmp_path, chat_server):
    source = 'print(\'{"score": 1, "details": {"agentv": "mine"}}\')\n'
    result = run_evaluator(code_judge(tmp_path, source, target=True), context(tmp_path, chat_server))
    assert result.status == "error"
    assert result.misses == [
        "code_judge 'asks': details.agentv is reserved for agentv's record of the target proxy; "
        "use another key in the judge's details"
    ]


@pytest.mark.parametrize(
    ("target", "default_judge", "message"),
    [
        pytest.param(
            True,
            None,
            "code_judge 'asks': target: needs a judge target: set target: {name: NAME} on the evaluator, "
            "execution.judge_target in the dataset, or judge_target on the eval target",
            id="no-judge",
        ),
        pytest.param(
            {"name": "other"},
            "judge",
            "code_judge 'asks': judge target 'other' is not available in this run",
            id="unknown-judge",
        ),
    ],
)
def test_a_judge_target_that_cannot_be_had_is_an_error_and_the_judge_never_runs(
    tmp_path, chat_server, target, default_judge, message
):
    cfg = code_judge(tmp_path, "raise SystemExit('must not run')", target=target)
    result = run_evaluator(cfg, context(tmp_path, chat_server, default_judge=default_judge))
    assert (result.status, result.misses) == ("error", [message])


def test_without_target_the_judge_sees_no_proxy(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTV_TARGET_PROXY_URL", "http://127.0.0.1:9/outer")
    monkeypatch.setenv("AGENTV_TARGET_PROXY_TOKEN", "outer-token")
    source = (
        "import json\nfrom agentv_py.judge import target_client\n"
        "print(json.dumps({'score': 1, 'details': {'client': repr(target_client())}}))\n"
    )
    result = run_evaluator(code_judge(tmp_path, source), context(tmp_path, None))
    assert result.details == {"client": "None"}


# -- the proxy's HTTP interface, request by request ----------------------------------------------


def call(url: str, path: str, body: Any = None, token: str | None = None, raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + path, data=data, headers=headers, method="GET" if data is None else "POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


BAD_REQUESTS = [
    pytest.param("/invoke", {"question": "q"}, None, 401, "Unauthorized", id="no-token"),
    pytest.param("/invoke", {"question": "q"}, "wrong", 401, "Unauthorized", id="wrong-token"),
    pytest.param("/info", None, "wrong", 401, "Unauthorized", id="wrong-token-info"),
    pytest.param("/invoke", {"systemPrompt": "s"}, "OK", 400, "Missing required field: question", id="no-question"),
    pytest.param("/invoke", {"question": ""}, "OK", 400, "Missing required field: question", id="empty-question"),
    pytest.param("/invoke", ["q"], "OK", 400, "Request must be a JSON object", id="not-an-object"),
    pytest.param(
        "/invoke", {"question": "q", "systemPrompt": 1}, "OK", 400, "systemPrompt must be a string", id="bad-system"
    ),
    pytest.param(
        "/invoke",
        {"question": "q", "target": "gemini_base"},
        "OK",
        400,
        "Unknown target 'gemini_base'. Available: judge",
        id="unknown-target",
    ),
    pytest.param(
        "/invokeBatch", {"questions": []}, "OK", 400, "Missing required field: requests (array)", id="no-requests"
    ),
    pytest.param("/elsewhere", {"question": "q"}, "OK", 404, "Not found", id="unknown-path"),
]


@pytest.mark.parametrize(("path", "body", "token", "status", "message"), BAD_REQUESTS)
def test_bad_requests_are_refused_without_calling_the_judge(chat_server, path, body, token, status, message):
    with TargetProxy(judge(chat_server), 5) as proxy:
        got = call(proxy.url, path, body, proxy.token if token == "OK" else token)
        assert got == (status, {"error": message})
        assert proxy.usage()["call_count"] == 0
    assert chat_server.requests == []


def test_a_body_over_the_cap_is_refused_before_it_is_read(chat_server):
    with TargetProxy(judge(chat_server), 5) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]), timeout=10)
        headers = {"Authorization": f"Bearer {proxy.token}", "Content-Length": str(MAX_BODY_BYTES + 1)}
        connection.request("POST", "/invoke", body=b"{", headers=headers)  # the rest never comes
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())) == (
            413,
            {"error": f"Request body too large (limit: {MAX_BODY_BYTES} bytes)"},
        )
        connection.close()
        assert call(proxy.url, "/invoke", raw=b"{not json", token=proxy.token) == (
            400,
            {"error": "Request body is not JSON"},
        )


def test_a_failing_judge_target_is_a_500_and_a_batch_error_line(chat_server):
    chat_server.reply(error(401, "bad key"), text("fine"), error(401, "bad key"))
    with TargetProxy(judge(chat_server), 5) as proxy:
        status, body = call(proxy.url, "/invoke", {"question": "q"}, proxy.token)
        assert status == 500
        assert body["error"].startswith("judge target 'judge' failed: HTTP 401")
        assert KEY not in json.dumps(body)
        status, body = call(
            proxy.url, "/invokeBatch", {"requests": [{"question": "a"}, {"q": 1}, {"question": "c"}]}, proxy.token
        )
        assert status == 200
        fine, bad, failed = body["responses"]
        assert fine == {"outputMessages": [{"role": "assistant", "content": "fine"}], "rawText": "fine"}
        assert bad == {"outputMessages": [], "rawText": "Error: Missing required field: question"}
        assert failed["outputMessages"] == [] and failed["rawText"].startswith("Error: judge target 'judge' failed")
        assert proxy.usage()["call_count"] == 3  # failed calls count, as in AgentV


def test_a_request_override_reaches_another_judge_target_of_the_run(chat_server):
    chat_server.reply(text("from other"))
    with TargetProxy(judge(chat_server), 5, {"other": judge(chat_server, "other")}) as proxy:
        assert call(proxy.url, "/invoke", {"question": "q", "target": "other"}, proxy.token) == (
            200,
            {"outputMessages": [{"role": "assistant", "content": "from other"}], "rawText": "from other"},
        )
        assert call(proxy.url, "/info", token=proxy.token)[1]["availableTargets"] == ["judge", "other"]


def test_a_closed_proxy_is_gone(chat_server):
    with TargetProxy(judge(chat_server), 5) as proxy:
        url, token = proxy.url, proxy.token
    with pytest.raises(TargetInvocationError, match=r"^target proxy /invoke: unreachable at http://127\.0\.0\.1:"):
        TargetClient(url, token).invoke("q")


# -- the SDK's client and the config -----------------------------------------------------------


def test_target_client_reads_the_environment(monkeypatch):
    monkeypatch.delenv("AGENTV_TARGET_PROXY_URL", raising=False)
    monkeypatch.delenv("AGENTV_TARGET_PROXY_TOKEN", raising=False)
    assert target_client() is None
    monkeypatch.setenv("AGENTV_TARGET_PROXY_URL", "http://127.0.0.1:1")
    with pytest.raises(
        TargetNotAvailableError, match="^AGENTV_TARGET_PROXY_URL is set but AGENTV_TARGET_PROXY_TOKEN is missing$"
    ):
        target_client()
    monkeypatch.setenv("AGENTV_TARGET_PROXY_TOKEN", "t0ken")
    client = target_client()
    assert client is not None and "t0ken" not in repr(client)


def test_the_client_reports_http_errors_with_the_proxys_words(chat_server):
    with TargetProxy(judge(chat_server), 0) as proxy:
        with pytest.raises(TargetInvocationError) as caught:
            TargetClient(proxy.url, proxy.token).invoke("q")
        assert (str(caught.value), caught.value.status_code) == (
            "target proxy /invoke: Max calls exceeded (limit: 0) (HTTP 429)",
            429,
        )
        with pytest.raises(TargetInvocationError) as caught:
            TargetClient(proxy.url, "wrong").invoke("q")
        assert (str(caught.value), caught.value.status_code) == ("target proxy /invoke: Unauthorized (HTTP 401)", 401)


@pytest.mark.parametrize(
    ("raw", "target", "needs_judge", "name"),
    [
        pytest.param({}, None, False, None, id="no-target"),
        pytest.param({"target": True}, {"max_calls": 50, "name": None}, True, None, id="true"),
        pytest.param({"target": False}, None, False, None, id="false"),
        pytest.param({"target": {"max_calls": 3}}, {"max_calls": 3, "name": None}, True, None, id="max-calls"),
        pytest.param({"target": "big"}, {"max_calls": 50, "name": "big"}, True, "big", id="name"),
        pytest.param(
            {"target": {"name": "big", "max_calls": 0}}, {"max_calls": 0, "name": "big"}, True, "big", id="both"
        ),
    ],
)
def test_target_is_a_declared_key_not_config(raw, target, needs_judge, name):
    cfg = CodeJudgeConfig.model_validate({"type": "code_judge", "script": ["x"], "extra": 1, **raw})
    assert (cfg.target.model_dump() if cfg.target else None) == target
    assert cfg.config == {"extra": 1}
    assert (calls_judge(cfg), judge_target_name(cfg)) == (needs_judge, name)


def test_judge_target_name_of_llm_judges():
    assert judge_target_name(LlmJudgeConfig.model_validate({"type": "llm_judge", "target": "big"})) == "big"
    assert judge_target_name(LlmJudgeConfig.model_validate({"type": "llm_judge"})) is None


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param(5, "target must be true, a judge target name, or {max_calls: N, name: NAME}", id="number"),
        pytest.param({"max_calls": -1}, "max_calls must be a number >= 0, got -1", id="negative"),
        pytest.param({"max_call": 3}, "max_call", id="typo"),
    ],
)
def test_bad_target_values(target, message):
    with pytest.raises(ValueError, match=None) as caught:
        CodeJudgeConfig.model_validate({"type": "code_judge", "script": ["x"], "target": target})
    assert message in str(caught.value)


# -- every target of the targets file (AgentV's availableTargets) -------------------------------

# A judge in the style of AgentV's code-judge-with-llm-calls example: it names targets itself.
NAMING_JUDGE = r"""
import json, sys
from agentv_py.judge import TargetInvocationError, target_client

json.load(sys.stdin)
client = target_client()
asked = {}
for name in [None, "second", "second", "unset_one", "opaque", "gemini_base"]:
    try:
        request = {"question": "q?", **({"target": name} if name else {})}  # a request body of one's own
        asked.setdefault(str(name), []).append(client.invoke(request).raw_text)
    except TargetInvocationError as exc:
        asked.setdefault(str(name), []).append([str(exc), exc.status_code])
batch = client.invoke_batch([{"question": "b?", "target": "second"}, {"question": "b?", "target": "unset_one"}])
print(json.dumps({"score": 1, "details": {
    "asked": asked, "batch": [r.raw_text for r in batch], "info": client.info()}}))
"""

SECOND_KEY = "sk-second-VERY-SECRET-42"


def test_a_judge_names_any_target_of_the_targets_file(tmp_path, chat_server, monkeypatch):
    from agentv_py.session import run_eval
    from tests.chat_server import ChatServer, Recorded, Reply

    monkeypatch.setenv("AGENTV_TEST_SECOND_KEY", SECOND_KEY)
    monkeypatch.delenv("AGENTV_TEST_UNSET", raising=False)
    chat_server.default = text("from judge")
    (tmp_path / "naming.py").write_text(NAMING_JUDGE)
    (tmp_path / "dataset.yaml").write_text(
        "execution:\n  target: default\nevalcases:\n  - id: c1\n    input: Capital of France?\n"
        "    expected_output: Paris\n    execution:\n      evaluators:\n"
        "        - {name: naming, type: code_judge, script: [python3, naming.py], target: {name: judge}}\n"
    )
    with ChatServer() as second:

        def echo_key(request: Recorded) -> Reply:  # a server that shows the key it was sent
            return text(f"from second, {request.headers.get('authorization')}")

        second.request_responder = echo_key
        (tmp_path / "targets.yaml").write_text(
            "targets:\n"
            "  - {name: default, provider: mock, response: Paris}\n"
            f"  - {{name: judge, provider: openai, model: m, api_key: {KEY}, base_url: '{chat_server.base_url}'}}\n"
            "  - {name: second, provider: openai, model: m, api_key: '${{ AGENTV_TEST_SECOND_KEY }}', "
            f"base_url: '{second.base_url}'}}\n"
            "  - {name: unset_one, provider: openai, model: m, api_key: '${{ AGENTV_TEST_UNSET }}', "
            "base_url: 'http://127.0.0.1:9/v1'}\n"
            "  - {name: opaque, provider: codex}\n"
        )
        result = run_eval(tmp_path / "dataset.yaml", targets=tmp_path / "targets.yaml", out=str(tmp_path / "o.jsonl"))
        assert len(second.requests) == 3  # the client was built once, on first use, and reused

    (row,) = result.rows
    (judged,) = row.evaluator_results
    assert judged.status == "processed", judged.misses
    details = judged.details
    unset = (
        f"target 'unset_one' cannot be used: {tmp_path / 'targets.yaml'}:5: targets[3].api_key: "
        "environment variable AGENTV_TEST_UNSET is not set (used as ${{ AGENTV_TEST_UNSET }})"
    )
    assert details["asked"] == {
        "None": ["from judge"],
        "second": ["from second, Bearer ***", "from second, Bearer ***"],  # its key: masked in the row
        "unset_one": [[f"target proxy /invoke: {unset} (HTTP 500)", 500]],
        "opaque": [
            [
                "target proxy /invoke: target 'opaque' cannot be used: target 'opaque' has provider 'codex', which "
                "AgentV ran but agentv does not; agentv runs cli, python, mock, openai, azure, "
                "anthropic and gemini targets; "
                "to evaluate codex, wrap the agent as a cli target (command_template runs it with {PROMPT} and it "
                "prints its answer or writes it to {OUTPUT_FILE}) (HTTP 500)",
                500,
            ]
        ],
        "gemini_base": [
            [
                "target proxy /invoke: Unknown target 'gemini_base'. Available: default, judge, opaque, second, "
                "unset_one (HTTP 400)",
                400,
            ]
        ],
    }
    assert details["batch"] == ["from second, Bearer ***", f"Error: {unset}"]
    assert details["info"]["availableTargets"] == ["default", "judge", "opaque", "second", "unset_one"]
    assert details["agentv"]["target_proxy"]["call_count"] == 4  # the answered calls only
    assert SECOND_KEY not in (tmp_path / "o.jsonl").read_text()


def test_without_a_catalog_only_the_runs_judge_targets_are_offered(chat_server):
    from agentv_py.evaluators.target_proxy import ProxyTargets

    built: list[str] = []

    def build(name: str) -> Any:
        built.append(name)
        return judge(chat_server, name) if name == "second" else f"no {name}"

    chat_server.default = text("hi")
    catalog = ProxyTargets({"judge": judge(chat_server)}, ["judge", "second", "broken"], build)
    assert dict(catalog) == {"judge": catalog["judge"]}  # as a mapping: the run's judge targets only
    assert catalog.available == ["judge", "second", "broken"]
    assert catalog.lookup("nosuch") == (None, None)
    assert catalog.lookup("broken") == (None, "no broken")
    first, _ = catalog.lookup("second")
    assert catalog.lookup("second") == (first, None)
    assert built == ["broken", "second"]  # a client is built once; a failure is tried again next time
    with TargetProxy(judge(chat_server), 5, {"other": judge(chat_server, "other")}) as proxy:
        assert proxy.available == ["judge", "other"]
