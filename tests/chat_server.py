"""A real chat-completions server on 127.0.0.1 that answers from a script (no network needed).

Each request takes the next scripted reply: text content (with usage), or a raw (status, body)
pair, or a delay longer than the client's timeout. Every request is recorded with its headers;
`request_responder` computes a reply from the whole request (path, headers, body), e.g. a server
that echoes the Authorization header it received. `wire` writes a text reply in another
provider's format (tests/provider_servers.py: Anthropic, Gemini); the default is OpenAI's.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = None  # the assistant's text (a 200 reply)
    status: int = 200
    body: Any = None  # a raw JSON body (error replies)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (longer than the timeout: "never comes")
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 42, "completion_tokens": 7})


def text(content: str, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def error(status: int, message: str = "boom", **kw: Any) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "server_error"}}, **kw)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def openai_body(reply: Reply, request: Recorded) -> dict[str, Any]:
    """A chat completion holding `reply.content`."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": request.body.get("model", "m"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.content}}],
        "usage": {**reply.usage, "total_tokens": sum(reply.usage.values())},
    }


class ChatServer:
    def __init__(self, wire: Callable[[Reply, Recorded], Any] = openai_body) -> None:
        self.wire = wire
        self.script: list[Reply] = []
        self.default: Reply | None = None
        self.responder: Callable[[dict[str, Any]], Reply] | None = None  # replies computed per request
        self.request_responder: Callable[[Recorded], Reply] | None = None  # ... from headers and body
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with server._lock:
                    server.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"{}"))
                    )
                    if server.script:
                        reply = server.script.pop(0)
                    elif server.responder is not None:
                        reply = server.responder(server.requests[-1].body)
                    elif server.request_responder is not None:
                        reply = server.request_responder(server.requests[-1])
                    else:
                        reply = server.default
                if reply is None:
                    reply = error(500, "the test script ran out of replies")
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.content is not None:
                    body = server.wire(reply, server.requests[-1])
                else:
                    body = reply.body
                data = json.dumps(body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """The server without a path (the SDKs of Azure, Anthropic and Gemini add their own)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def reply(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
