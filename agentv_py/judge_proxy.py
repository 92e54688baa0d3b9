"""The judge target proxy's client, for judge scripts (`from agentv_py.judge import target_client`):
a judge with `target:` asks agentv's proxy for answers of the eval's judge targets (AgentV's
`createTargetClient`). Imported by `agentv_py.judge` only when a judge names it."""

from __future__ import annotations

import json
from typing import Any


class TargetNotAvailableError(Exception):
    """The proxy's URL is set but its token is not (the judge was not started by agentv)."""


class TargetInvocationError(Exception):
    """A proxy call failed: `status_code` is the HTTP status (None when the proxy was unreachable)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class TargetResponse:
    """One judge-target answer: `raw_text` (the model's text; None if it gave none) and
    `output_messages` ([{role: assistant, content}])."""

    __slots__ = ("output_messages", "raw_text")

    def __init__(self, output_messages: list[dict[str, Any]], raw_text: str | None) -> None:
        self.output_messages = output_messages
        self.raw_text = raw_text

    def __repr__(self) -> str:
        return f"TargetResponse(raw_text={self.raw_text!r})"

    @classmethod
    def from_json(cls, data: Any) -> TargetResponse:
        if not isinstance(data, dict):
            raise TargetInvocationError(f"the proxy answered {type(data).__name__}, not an object")
        raw = data.get("rawText")
        messages = data.get("outputMessages")
        return cls(messages if isinstance(messages, list) else [], raw if isinstance(raw, str) else None)


def _request_body(
    question: str | dict[str, Any], system_prompt: str | None = None, target: str | None = None
) -> dict[str, Any]:
    if isinstance(question, dict):  # AgentV's request shape: {question, systemPrompt?, target?, ...}
        return {k: v for k, v in question.items() if v is not None}
    body: dict[str, Any] = {"question": question}
    if system_prompt is not None:
        body["systemPrompt"] = system_prompt
    if target is not None:
        body["target"] = target
    return body


class TargetClient:
    """Calls the evaluator's judge target through agentv's proxy (a code judge with `target:`).

    Standard library only; never uses an HTTP proxy from the environment (the proxy is on
    127.0.0.1). Every call counts against the evaluator's `max_calls`."""

    def __init__(self, url: str, token: str, timeout: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"TargetClient(url={self.url!r})"  # never the token

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._token}"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=self.timeout) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            raw = exc.read().decode("utf-8", "replace")
            try:
                message = json.loads(raw).get("error") or f"HTTP {exc.code}"
            except (ValueError, AttributeError):
                message = raw.strip() or f"HTTP {exc.code}"
            raise TargetInvocationError(f"target proxy {path}: {message} (HTTP {exc.code})", exc.code) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TargetInvocationError(f"target proxy {path}: unreachable at {self.url} ({reason})") from None
        try:
            return json.loads(text)
        except ValueError:
            raise TargetInvocationError(f"target proxy {path}: the answer is not JSON") from None

    def invoke(
        self, question: str | dict[str, Any], system_prompt: str | None = None, target: str | None = None
    ) -> TargetResponse:
        """Ask the judge target (or the target of the targets file named `target`, as AgentV's
        SDK allowed) one question, with an optional system prompt."""
        body = _request_body(question, system_prompt, target)
        return TargetResponse.from_json(self._call("POST", "/invoke", body))

    def invoke_batch(
        self, requests: list[str | dict[str, Any]], system_prompt: str | None = None, target: str | None = None
    ) -> list[TargetResponse]:
        """Ask several questions in one request, answered in order. Each counts as one call; a
        failed one answers `raw_text` "Error: ..." instead of failing the batch."""
        body = {"requests": [_request_body(r, system_prompt, target) for r in requests]}
        data = self._call("POST", "/invokeBatch", body)
        responses = data.get("responses") if isinstance(data, dict) else None
        if not isinstance(responses, list):
            raise TargetInvocationError("target proxy /invokeBatch: the answer has no responses list")
        return [TargetResponse.from_json(item) for item in responses]

    def info(self) -> dict[str, Any]:
        """{targetName, maxCalls, callCount, availableTargets}."""
        data = self._call("GET", "/info")
        if not isinstance(data, dict):
            raise TargetInvocationError("target proxy /info: the answer is not an object")
        return data


def target_client(timeout: float = 600.0) -> TargetClient | None:
    """The judge target client, or None when the evaluator has no `target:` (agentv did not set
    AGENTV_TARGET_PROXY_URL). AgentV's createTargetClient."""
    import os

    url = os.environ.get("AGENTV_TARGET_PROXY_URL")
    if not url:
        return None
    token = os.environ.get("AGENTV_TARGET_PROXY_TOKEN")
    if not token:
        raise TargetNotAvailableError("AGENTV_TARGET_PROXY_URL is set but AGENTV_TARGET_PROXY_TOKEN is missing")
    return TargetClient(url, token, timeout)
