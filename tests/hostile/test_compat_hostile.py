"""Hostile data against the AgentV-compatibility code: URL fetches, JSONL datasets and sidecars,
the judge target proxy, judge details that feed the run's judge costs, composites, .env files.

Tests marked `xfail(strict=True)` show a real, unfixed problem (the reason says which); the others
pin behaviour that holds. Servers are started by the tests on 127.0.0.1; nothing times a result:
a hang is detected by a thread still alive after a generous join.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.errors import ConfigError
from agentv_py.evaluators.target_proxy import TargetProxy
from agentv_py.loading.dataset import load_dataset
from agentv_py.loading.dotenv import apply_dotenv
from agentv_py.process.fetch import FetchError, fetch
from tests.conftest import Workspace
from tests.evaluators.test_target_proxy import judge

PY = sys.executable


@pytest.fixture(autouse=True)
def _local_servers_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests fetch from servers they start on 127.0.0.1: allowed only by opting in."""
    monkeypatch.setenv("AGENTV_ALLOW_PRIVATE_URLS", "1")


def invoke(*args: str) -> Any:
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


# -- fetch ---------------------------------------------------------------------------------------


class _Trickler:
    """A raw HTTP server that sends its status line, then one header line every 0.05 s until told
    to stop (or the client leaves): headers that never end."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                for _ in range(200):  # 10 s at most
                    if self.stop.wait(0.05):
                        break
                    conn.sendall(b"X-Slow: 1\r\n")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


def test_a_server_trickling_headers_is_cut_off_by_the_total_timeout() -> None:
    server = _Trickler()
    outcome: list[str] = []

    def get() -> None:
        try:
            fetch(f"http://127.0.0.1:{server.port}/slow.txt", timeout=0.3)
            outcome.append("body")
        except FetchError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=get, daemon=True)
    worker.start()
    worker.join(3.0)  # ten times the timeout: still running means the deadline was not enforced
    hung = worker.is_alive()
    server.close()
    worker.join(5)
    assert not hung
    assert outcome == [f"could not fetch http://127.0.0.1:{server.port}/slow.txt: timed out after 0.3 s"]


class _Recorder(ThreadingHTTPServer):
    seen: list[dict[str, str]]


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[_Recorder]:
    server = _Recorder(("127.0.0.1", 0), handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


BOMB = gzip.compress(b"\0" * (50 * 1024 * 1024))  # 50 MB of zeros in ~50 KB


class _Handler(BaseHTTPRequestHandler):
    server: _Recorder

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append({"path": self.path, **dict(self.headers.items())})
        if self.path == "/bomb":
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(BOMB)))
            self.end_headers()
            self.wfile.write(BOMB)
        elif self.path.startswith("/to-other/"):
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:" + self.path.split("/")[2] + "/inside")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            body = b"internal: " + self.path.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture
def http_server() -> Iterator[_Recorder]:
    yield from _serve(_Handler)


def test_a_gzip_bomb_is_stored_compressed_never_inflated(http_server: _Recorder) -> None:
    body = fetch(f"http://127.0.0.1:{http_server.server_address[1]}/bomb")
    assert body == BOMB  # the bytes as sent: urllib never decodes Content-Encoding
    assert http_server.seen[0]["Accept-Encoding"] == "identity"


def test_a_redirect_to_another_loopback_service_is_followed(http_server: _Recorder) -> None:
    """Documents the current trust decision (docs/security.md, "Files by URL": the host is not
    restricted): a dataset URL may lead, directly or by redirect, to loopback and private
    addresses (a local admin port, 169.254.169.254). The brief's trust model calls dataset URLs
    data; which one holds is for the maintainers to decide."""
    inner = _serve(_Handler)
    other = next(inner)
    try:
        port = http_server.server_address[1]
        body = fetch(f"http://127.0.0.1:{port}/to-other/{other.server_address[1]}/x")
        assert body == b"internal: /inside"
        assert [seen["path"] for seen in other.seen] == ["/inside"]
    finally:
        inner.close()


# -- JSONL datasets ------------------------------------------------------------------------------

CASE = {"id": "a", "input_messages": [{"role": "user", "content": "hi"}]}


def test_a_duplicate_key_in_a_jsonl_line_is_a_load_error(ws: Workspace) -> None:
    ws.file("d.jsonl", '{"id": "a", "input_messages": [{"role": "user", "content": "hi"}], "id": "b"}\n')
    with pytest.raises(ConfigError) as caught:
        load_dataset(Path("d.jsonl"))
    assert [str(p) for p in caught.value.problems] == ["d.jsonl:1: duplicate key 'id' (keys must be unique)"]


def test_a_fifo_sidecar_is_never_opened(ws: Workspace) -> None:
    ws.file("d.jsonl", json.dumps(CASE) + "\n")
    os.mkfifo("d.yaml")  # nobody writes it: opening it for reading would block forever
    loaded = load_dataset(Path("d.jsonl"))
    assert [c.case.id for c in loaded.cases] == ["a"]


def test_a_sidecar_linked_to_process_memory_shows_no_content(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTV_TEST_SIDECAR_SECRET", "sk-sidecar-0123456789abcdef")
    ws.file("d.jsonl", json.dumps(CASE) + "\n")
    os.symlink("/proc/self/environ", "d.yaml")
    with pytest.raises(ConfigError) as caught:
        load_dataset(Path("d.jsonl"))
    text = "\n".join(str(p) for p in caught.value.problems)
    assert "is not allowed in YAML" in text
    assert "sk-sidecar" not in text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param('{"id": "a", "x": NaN}', "not JSON: NaN is not valid JSON", id="nan"),
        pytest.param(
            '{"id": "a", "x": 1e400}', "not JSON: 1e400 is not valid JSON (out of range for a float)", id="inf"
        ),
        pytest.param("[" * 5000 + "]" * 5000, f"not JSON: nests deeper than {100} levels", id="deep"),
        # ours: "not JSON: ", the column; between them the json module's words
        pytest.param('{"id": "a"}\x00', re.compile(r"not JSON: .+ at column 12"), id="nul"),
    ],
)
def test_hostile_jsonl_lines_are_located_load_errors(ws: Workspace, line: str, message: str | re.Pattern[str]) -> None:
    ws.file("d.jsonl", json.dumps(CASE) + "\n" + line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_dataset(Path("d.jsonl"))
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith("d.jsonl:2: "), problem
    rest = problem.removeprefix("d.jsonl:2: ")
    assert message.fullmatch(rest) if isinstance(message, re.Pattern) else rest == message, problem


# -- judge details feed the run's judge costs ----------------------------------------------------

TARGETS = """\
targets:
  - name: t
    provider: cli
    command_template: "echo hello"
"""

DETAILS_JUDGE = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"score": 1, "details": {"judge": %s}}))
"""


def _run(ws: Workspace, evaluator: str, judge_details: str) -> dict[str, Any]:
    ws.file(".agentv/targets.yaml", TARGETS)
    ws.file("judge.py", DETAILS_JUDGE % judge_details)
    ws.dataset(
        f"""
        execution:
          target: t
          evaluators:
            - {evaluator}
        evalcases:
          - id: a
            input_messages: [{{role: user, content: hi}}]
            expected_messages: [{{role: assistant, content: hello}}]
        """
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code in (0, 1, 4), result.output
    rows = [json.loads(line) for line in Path("out.jsonl").read_text().splitlines()]
    assert len(rows) == 1
    return rows[0]


CODE_JUDGE = f"{{type: code_judge, name: j, script: [{json.dumps(PY)}, judge.py]}}"


def test_a_code_judges_own_details_judge_key_cannot_break_the_case(ws: Workspace) -> None:
    row = _run(ws, CODE_JUDGE, '{"duration_ms": "abc", "replies": "x"}')
    assert row["status"] != "error", row["error"]
    assert [(r["name"], r["status"], r["score"]) for r in row["evaluator_results"]] == [("j", "processed", 1.0)]


def test_a_member_judges_details_cannot_break_a_composite(ws: Workspace) -> None:
    composite = "{type: composite, name: c, aggregator: {type: weighted_average}, evaluators: [" + CODE_JUDGE + "]}"
    row = _run(ws, composite, '{"replies": "x"}')
    (result,) = row["evaluator_results"]
    assert (result["status"], result["score"]) == ("processed", 1.0), result["reasoning"]


def test_a_code_judges_details_judge_is_its_own_data_not_judge_cost(ws: Workspace) -> None:
    """Only the records agentv writes (llm_judge, rubric, composite) count as judge cost: a code
    judge's `details.judge` is kept verbatim in its result and never summed into the trace."""
    row = _run(ws, CODE_JUDGE, '{"duration_ms": 12.5, "token_usage": {"input": 3, "output": 4}}')
    assert row["score"] == 1.0
    assert "judge_duration_ms" not in row["trace"] and "judge_token_usage" not in row["trace"]
    assert row["evaluator_results"][0]["details"]["judge"] == {
        "duration_ms": 12.5,
        "token_usage": {"input": 3, "output": 4},
    }


# -- the judge target proxy ----------------------------------------------------------------------


def test_a_content_length_of_unicode_digits_is_answered_411(
    chat_server: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    with TargetProxy(judge(chat_server), 5) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]), timeout=5)
        connection.putrequest("POST", "/invoke", skip_accept_encoding=True)
        connection.putheader("Authorization", f"Bearer {proxy.token}")
        connection.putheader("Content-Length", "\u00b2")  # one latin-1 byte, 0xb2
        connection.endheaders()
        try:
            response = connection.getresponse()
            status = response.status
        except (http.client.HTTPException, OSError):
            status = None
        connection.close()
    assert status == 411
    assert "Traceback" not in capfd.readouterr().err


def test_a_wrong_token_of_the_right_length_is_refused(chat_server: Any) -> None:
    with TargetProxy(judge(chat_server), 5) as proxy:
        wrong = proxy.token[:-1] + ("0" if proxy.token[-1] != "0" else "1")
        connection = http.client.HTTPConnection("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]), timeout=5)
        connection.request("GET", "/info", headers={"Authorization": f"Bearer {wrong}"})
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())) == (401, {"error": "Unauthorized"})
        connection.close()
    assert chat_server.requests == []


# -- .env files ----------------------------------------------------------------------------------


def test_dotenv_never_overrides_the_environment_but_may_set_loader_variables(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pins today's behaviour for the report: a project's .env cannot replace PATH (set), but it
    can add variables that change how every target and judge starts (LD_PRELOAD, PYTHONPATH,
    HTTPS_PROXY) when they are unset. docs/security.md does not list .env files in its trust model."""
    ws.file(".env", "PATH=/evil\nLD_PRELOAD=/tmp/evil.so\nHTTPS_PROXY=http://127.0.0.1:9\n")
    environ = {"PATH": "/usr/bin"}
    applied = apply_dotenv(ws.root, environ)
    assert applied == [ws.root / ".env"]
    assert environ == {"PATH": "/usr/bin", "LD_PRELOAD": "/tmp/evil.so", "HTTPS_PROXY": "http://127.0.0.1:9"}


def test_a_dotenv_of_one_megabyte_line_is_read_and_one_byte_more_is_refused(ws: Workspace) -> None:
    value = "v" * (1024 * 1024 - len("BIG=\n"))
    ws.file(".env", f"BIG={value}\n")
    environ: dict[str, str] = {}
    apply_dotenv(ws.root, environ)
    assert environ["BIG"] == value
    ws.file(".env", f"BIG={value}v\n")
    with pytest.raises(ConfigError) as caught:
        apply_dotenv(ws.root, {})
    assert [p.message for p in caught.value.problems] == ["a .env file must be at most 1 MB"]
