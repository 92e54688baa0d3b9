"""Hostile model endpoints: replies over the cap, bodies that are not JSON (or not a chat
completion), deeply nested JSON, compressed bodies, and attempts counted as really made."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentv_py.chat import ChatMessage
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.runner.llm import OpenAIClient
from tests.chat_server import error, text

KEY = "sk-test-SECRET-0123456789"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-reply (over the cap) is expected here


class RawServer:
    """Answers each POST with the next scripted (status, headers, body bytes); counts requests.
    `chunked` bodies are sent without a content-length."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, str], bytes, bool]] = []
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                server.requests += 1
                status, headers, body, chunked = server.script.pop(0)
                try:
                    self.send_response(status)
                    for key, value in {"content-type": "application/json", **headers}.items():
                        self.send_header(key, value)
                    if chunked:
                        self.send_header("transfer-encoding", "chunked")
                        self.end_headers()
                        for start in range(0, len(body), 1 << 20):
                            piece = body[start : start + (1 << 20)]
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.send_header("content-length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (over the cap)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None, chunked: bool = False):
        self.script.append((status, headers or {}, body, chunked))


@pytest.fixture
def raw_server() -> Iterator[RawServer]:
    server = RawServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def client(base_url: str, **extra: Any) -> OpenAIClient:
    config = OpenAITarget.model_validate(
        {"name": "model", "provider": "openai", "model": "m", "api_key": KEY, "base_url": base_url, **extra}
    )
    return OpenAIClient(config, [KEY])


def ask(c: OpenAIClient):
    return c.complete([ChatMessage("user", ["hi"])])


def completion(content: Any) -> bytes:
    return json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}
    ).encode()


# ----------------------------------------------------------------------------- size cap


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_reply_over_the_cap_is_a_clear_error_not_a_huge_row(raw_server, chunked):
    raw_server.reply(completion("x" * (11 * 1024 * 1024)), chunked=chunked)
    reply = ask(client(raw_server.base_url))
    assert reply.text is None
    assert reply.error == f"the reply from {raw_server.base_url} is larger than the 10 MB cap"
    assert reply.attempts == 1 and raw_server.requests == 1  # not retried


def test_a_reply_under_the_cap_is_read(raw_server):
    raw_server.reply(completion("y" * (9 * 1024 * 1024)), chunked=True)
    reply = ask(client(raw_server.base_url))
    assert reply.error is None and reply.text == "y" * (9 * 1024 * 1024)


def test_an_error_body_over_the_cap_is_capped_too(raw_server):
    raw_server.reply(b'{"error": "' + b"z" * (11 * 1024 * 1024) + b'"}', status=400, chunked=True)
    reply = ask(client(raw_server.base_url))
    assert reply.error == f"the reply from {raw_server.base_url} is larger than the 10 MB cap"


def test_a_compressed_reply_is_refused_so_the_cap_bounds_memory(raw_server):
    raw_server.reply(gzip.compress(completion("a" * 1000)), headers={"content-encoding": "gzip"})
    reply = ask(client(raw_server.base_url))
    assert reply.error == (
        f"the reply from {raw_server.base_url} is compressed (content-encoding: gzip) though agentv asked for none"
    )


# ----------------------------------------------------------------------------- malformed bodies


MALFORMED = [
    (
        "html",
        b"<html><body>502 Bad Gateway</body></html>",
        "the endpoint returned a body that is not JSON (<html><body>502 Bad Gateway</body></html>)",
    ),
    (
        "truncated",
        b'{"choices": [{"message": {"content": "hel',
        'the endpoint returned a body that is not JSON ({"choices": [{"message": {"content": "hel)',
    ),
    (
        "long-garbage",
        b"garbage\n" * 40,
        "the endpoint returned a body that is not JSON (" + "garbage\\n" * 10 + "...)",
    ),
    ("empty", b"", "the endpoint returned an empty body"),
    ("nan", b'{"choices": NaN}', 'the endpoint returned a body that is not JSON ({"choices": NaN})'),
    ("a-list", b"[1, 2]", "the endpoint returned JSON that is not a chat completion (a list, not an object)"),
    ("no-choices", b'{"id": "x"}', 'the endpoint returned JSON that is not a chat completion (no "choices" list)'),
    (
        "choices-a-string",
        b'{"choices": "many"}',
        'the endpoint returned JSON that is not a chat completion (no "choices" list)',
    ),
    (
        "choice-without-message",
        b'{"choices": [{"text": "hi"}]}',
        'the endpoint returned JSON that is not a chat completion (choices[0] has no "message" object)',
    ),
    (
        "choice-a-number",
        b'{"choices": [7]}',
        'the endpoint returned JSON that is not a chat completion (choices[0] has no "message" object)',
    ),
    (
        "content-an-object",
        completion({"a": 1}),
        "the endpoint returned JSON that is not a chat completion (choices[0].message.content is an object, not text)",
    ),
    ("empty-choices", b'{"choices": []}', "the endpoint returned no choices"),
    (
        "deeply-nested",
        b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "the endpoint returned JSON nested too deeply to read",
    ),
]


@pytest.mark.parametrize("body, message", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_a_malformed_body_is_described_in_words(raw_server, body, message):
    raw_server.reply(body)
    reply = ask(client(raw_server.base_url))
    assert (reply.text, reply.error) == (None, message)
    assert "JSONDecodeError" not in message and "Recursion" not in message


def test_a_body_echoing_the_key_is_masked(raw_server):
    raw_server.reply(f"bad key {KEY}".encode())
    reply = ask(client(raw_server.base_url))
    assert reply.error == "the endpoint returned a body that is not JSON (bad key ***)"


def test_odd_usage_and_model_fields_are_ignored_not_crashes(raw_server):
    body = {
        "model": 12,
        "choices": [{"message": {"content": "ok"}}],
        "usage": {"prompt_tokens": "many", "completion_tokens": 10**30, "prompt_tokens_details": [1]},
    }
    raw_server.reply(json.dumps(body).encode())
    reply = ask(client(raw_server.base_url))
    assert (reply.text, reply.error, reply.usage, reply.model) == ("ok", None, None, "m")


# ----------------------------------------------------------------------------- attempts


def test_attempts_count_the_requests_really_sent_when_the_server_says_do_not_retry(chat_server):
    chat_server.reply(error(500, "down", headers={"x-should-retry": "false"}))
    reply = ask(client(chat_server.base_url, max_retries=3))
    assert len(chat_server.requests) == 1 and reply.attempts == 1
    assert reply.error == f"HTTP 500 from {chat_server.base_url}: down"


def test_attempts_count_a_retried_4xx(chat_server):
    chat_server.reply(*[error(400, "nope", headers={"x-should-retry": "true", "retry-after-ms": "5"})] * 3)
    reply = ask(client(chat_server.base_url, max_retries=2))
    assert len(chat_server.requests) == 3 and reply.attempts == 3
    assert reply.error == f"HTTP 400 from {chat_server.base_url} (3 attempts): nope"


def test_attempts_count_a_retry_after_too_long_to_wait(chat_server):
    chat_server.reply(error(429, "later", headers={"retry-after": "3600"}))
    reply = ask(client(chat_server.base_url, max_retries=2))
    assert len(chat_server.requests) == 1 and reply.attempts == 1
    assert reply.error == f"HTTP 429 from {chat_server.base_url}: later"


def test_attempts_after_a_success_following_failures(chat_server):
    chat_server.reply(error(503, "busy", headers={"retry-after-ms": "5"}), text("fine"))
    reply = ask(client(chat_server.base_url, max_retries=4))
    assert (reply.text, reply.attempts, len(chat_server.requests)) == ("fine", 2, 2)
