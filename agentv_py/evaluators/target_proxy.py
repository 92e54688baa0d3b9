"""The judge target proxy of `code_judge` (`target:`, AgentV 2026-01-08, agentv-reference §3.2).

A code judge with `target: true` (or `{max_calls: N, name: NAME}`) may ask the evaluator's judge
target questions without holding its key: for the length of one judge run agentv serves a
loopback HTTP server (127.0.0.1, a free port) that answers only requests carrying a fresh random
bearer token, and hands the judge its address and token in `AGENTV_TARGET_PROXY_URL` and
`AGENTV_TARGET_PROXY_TOKEN`.

    POST /invoke       {question, systemPrompt?, evalCaseId?, attempt?, target?}
                       -> {outputMessages: [{role: assistant, content}], rawText}
    POST /invokeBatch  {requests: [...]} -> {responses: [...]}
    GET  /info         -> {targetName, maxCalls, callCount, availableTargets}

Errors are `{"error": text}` with AgentV's statuses and words: 401 `Unauthorized` (wrong or
missing token), 429 `Max calls exceeded (limit: N)`, 400 for a bad request, 500 when the judge
target fails. Bodies over MAX_BODY_BYTES get 413 and a client that stalls mid-request is dropped
after REQUEST_TIMEOUT seconds, so a judge can neither exhaust memory nor pin a thread. The judge
target's key never leaves agentv: the proxy returns the model's text and the client's one-line
error only.

A request may name any runnable target of the targets file (AgentV's `availableTargets`), not
only the run's judge targets: the run hands the judge a `ProxyTargets` (as `EvalContext.judges`),
which builds such a target's client on first use. A target that cannot be built (an unset
`${{ VAR }}`, a provider agentv does not run) is an error reply for that request.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agentv_py.chat import ChatClient, ChatMessage, sum_usage

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler

PROXY_URL_ENV = "AGENTV_TARGET_PROXY_URL"
PROXY_TOKEN_ENV = "AGENTV_TARGET_PROXY_TOKEN"
MAX_BODY_BYTES = 1024 * 1024
REQUEST_TIMEOUT = 30.0  # seconds a client may take to send one request


class _Invocation:
    """One request's fields, checked: (question, system prompt, target name) or a problem."""

    def __init__(self, data: Any) -> None:
        self.problem: str | None = None
        self.question = ""
        self.system: str | None = None
        self.target: str | None = None
        if not isinstance(data, dict):
            self.problem = "Request must be a JSON object"
            return
        question = data.get("question")
        if not isinstance(question, str) or not question:
            self.problem = "Missing required field: question"
            return
        system = data.get("systemPrompt")
        if system is not None and not isinstance(system, str):
            self.problem = "systemPrompt must be a string"
            return
        target = data.get("target")
        if target is not None and not isinstance(target, str):
            self.problem = "target must be a string"
            return
        self.question, self.system, self.target = question, system, target


class ProxyTargets(Mapping[str, ChatClient]):
    """The run's judge targets (the mapping itself, as every judge reads it) plus every other
    target of the targets file that a code judge's proxy may name, built on first use by `build`
    (a client, or why not: the run's, so that the secrets it reads are masked in rows)."""

    def __init__(
        self, ready: Mapping[str, ChatClient], names: Sequence[str], build: Callable[[str], ChatClient | str]
    ) -> None:
        self._ready = dict(ready)
        self._names = list(dict.fromkeys([*ready, *names]))
        self._build = build
        self._built: dict[str, ChatClient] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> ChatClient:
        return self._ready[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ready)

    def __len__(self) -> int:
        return len(self._ready)

    @property
    def available(self) -> list[str]:
        """Every name a proxy request may give."""
        return list(self._names)

    def lookup(self, name: str) -> tuple[ChatClient | None, str | None]:
        """(client, None); (None, None) for a name the targets file does not define; (None, why)
        when the target cannot be built (tried again on the next request)."""
        if name in self._ready:
            return self._ready[name], None
        if name not in self._names:
            return None, None
        with self._lock:  # one client per target and run, however many judges ask at once
            if name not in self._built:
                built = self._build(name)
                if isinstance(built, str):
                    return None, built
                self._built[name] = built
            return self._built[name], None


class TargetProxy:
    """A loopback proxy to one judge target (and, by `target:` in a request, to the run's other
    judge targets, or every target of the targets file when `others` is a `ProxyTargets`), for the
    length of one judge run: use it as a context manager."""

    def __init__(self, default: ChatClient, max_calls: int, others: Mapping[str, ChatClient] | None = None) -> None:
        self.default = default
        self.max_calls = max_calls
        self.clients: dict[str, ChatClient] = {**(others or {}), default.name: default}
        self._catalog = others if isinstance(others, ProxyTargets) else None
        self.available = sorted({*self.clients, *(self._catalog.available if self._catalog else [])})
        self.token = secrets.token_hex(32)
        self.call_count = 0
        self._usages: list[dict[str, Any] | None] = []
        self._lock = threading.Lock()
        self._closed = False
        from http.server import ThreadingHTTPServer  # only a run with such a judge serves (~10 ms to import)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="agentv-target-proxy", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """The two variables the judge reads (`agentv_py.judge.target_client`, AgentV's SDK)."""
        return {PROXY_URL_ENV: self.url, PROXY_TOKEN_ENV: self.token}

    def usage(self) -> dict[str, Any]:
        """What the result records: the judge target, calls made, the limit (+ tokens, if known)."""
        with self._lock:
            data: dict[str, Any] = {
                "target_name": self.default.name,
                "call_count": self.call_count,
                "max_calls": self.max_calls,
            }
            tokens = sum_usage(self._usages)
        if tokens:
            data["token_usage"] = tokens
        return data

    def __enter__(self) -> TargetProxy:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving; a request still in flight (a judge's orphan) gets 503 or a closed socket."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    # -- calls ---------------------------------------------------------------------------------

    def _reserve(self, count: int, batch: bool = False) -> str | None:
        """Take `count` calls from the budget, or say why not (AgentV's words)."""
        with self._lock:
            if not batch and self.call_count + count > self.max_calls:
                return f"Max calls exceeded (limit: {self.max_calls})"
            if self.call_count + count > self.max_calls:
                return (
                    f"Batch would exceed max calls (current: {self.call_count}, batch: {count}, "
                    f"limit: {self.max_calls})"
                )
            self.call_count += count
            return None

    def _unknown(self, name: str | None) -> str:
        return f"Unknown target '{name}'. Available: {', '.join(self.available)}"

    def _client(self, name: str | None) -> tuple[ChatClient | None, int, str]:
        """The client a request names (none: the default): (client, 200, ""), or (None, status,
        error): 400 for a name not defined, 500 for a target that cannot be built (AgentV: a
        target that failed to resolve answered 500)."""
        wanted = name or self.default.name
        client = self.clients.get(wanted)
        if client is not None:
            return client, 200, ""
        if self._catalog is not None:
            client, problem = self._catalog.lookup(wanted)
            if client is not None:
                return client, 200, ""
            if problem is not None:
                return None, 500, f"target '{wanted}' cannot be used: {problem}"
        return None, 400, self._unknown(name)

    def _ask(self, client: ChatClient, request: _Invocation) -> tuple[str | None, str | None]:
        messages = [ChatMessage("system", [request.system])] if request.system else []
        messages.append(ChatMessage("user", [request.question]))
        reply = client.complete(messages)
        with self._lock:
            self._usages.append(reply.usage)
        if reply.text is None:
            return None, f"judge target '{client.name}' failed: {reply.error}"
        return reply.text, None

    def invoke(self, data: Any) -> tuple[int, dict[str, Any]]:
        """`POST /invoke`: (status, body)."""
        with self._lock:
            if self.call_count >= self.max_calls:
                return 429, {"error": f"Max calls exceeded (limit: {self.max_calls})"}
        request = _Invocation(data)
        if request.problem:
            return 400, {"error": request.problem}
        client, status, error = self._client(request.target)
        if client is None:
            return status, {"error": error}
        refused = self._reserve(1)
        if refused:
            return 429, {"error": refused}
        text, problem = self._ask(client, request)
        if problem:
            return 500, {"error": problem}
        return 200, {"outputMessages": [{"role": "assistant", "content": text}], "rawText": text}

    def invoke_batch(self, data: Any) -> tuple[int, dict[str, Any]]:
        """`POST /invokeBatch`: the requests in order; a bad or failed one answers `rawText: "Error: ..."`."""
        requests = data.get("requests") if isinstance(data, dict) else None
        if not isinstance(requests, list):
            return 400, {"error": "Missing required field: requests (array)"}
        parsed = [_Invocation(item) for item in requests]
        found = [(None, 400, r.problem) if r.problem else self._client(r.target) for r in parsed]
        runnable = [client for client, _, _ in found if client is not None]
        refused = self._reserve(len(runnable), batch=True) if runnable else None
        if refused:
            return 429, {"error": refused}
        responses: list[dict[str, Any]] = []
        for request, (client, _, error) in zip(parsed, found, strict=True):
            if client is None:
                responses.append({"outputMessages": [], "rawText": f"Error: {error}"})
                continue
            text, problem = self._ask(client, request)
            if problem:
                responses.append({"outputMessages": [], "rawText": f"Error: {problem}"})
            else:
                responses.append({"outputMessages": [{"role": "assistant", "content": text}], "rawText": text})
        return 200, {"responses": responses}

    def info(self) -> dict[str, Any]:
        """`GET /info`."""
        with self._lock:
            count = self.call_count
        return {
            "targetName": self.default.name,
            "maxCalls": self.max_calls,
            "callCount": count,
            "availableTargets": self.available,
        }

    # -- HTTP ----------------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        from http.server import BaseHTTPRequestHandler

        proxy = self

        class Handler(BaseHTTPRequestHandler):
            timeout = REQUEST_TIMEOUT  # a stalled client is dropped, never pins a thread
            server_version = "agentv-target-proxy"
            sys_version = ""

            def log_message(self, format: str, *args: Any) -> None:
                pass  # nothing below the CLI prints

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the judge went away

            def _authorized(self) -> bool:
                given = self.headers.get("Authorization") or ""
                return hmac.compare_digest(given.encode("utf-8", "replace"), f"Bearer {proxy.token}".encode())

            def _gate(self) -> bool:
                if not self._authorized():
                    self._send(401, {"error": "Unauthorized"})
                    return False
                if proxy._closed:
                    self._send(503, {"error": "Proxy is shutting down"})
                    return False
                return True

            def _body(self) -> tuple[Any, bool]:
                length = self.headers.get("Content-Length")
                if length is None or not (length.isascii() and length.isdigit()):
                    self._send(411, {"error": "Content-Length required"})
                    return None, False
                if int(length) > MAX_BODY_BYTES:
                    self._send(413, {"error": f"Request body too large (limit: {MAX_BODY_BYTES} bytes)"})
                    return None, False
                try:
                    return json.loads(self.rfile.read(int(length)).decode("utf-8")), True
                except (ValueError, UnicodeDecodeError):
                    self._send(400, {"error": "Request body is not JSON"})
                    return None, False

            def do_GET(self) -> None:
                if not self._gate():
                    return
                if self.path == "/info":
                    self._send(200, proxy.info())
                else:
                    self._send(404, {"error": "Not found"})

            def do_POST(self) -> None:
                if not self._gate():
                    return
                if self.path not in ("/invoke", "/invokeBatch"):
                    self._send(404, {"error": "Not found"})
                    return
                data, ok = self._body()
                if not ok:
                    return
                try:
                    status, body = proxy.invoke(data) if self.path == "/invoke" else proxy.invoke_batch(data)
                except Exception as exc:  # noqa: BLE001 - a judge client bug must answer, not kill the thread
                    status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
                self._send(status, body)

        return Handler
