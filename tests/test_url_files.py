"""Input files given by http(s) URL: the form checked at load (no network), each URL fetched once
per run from a server the test starts on 127.0.0.1, and every way a fetch can go wrong (404, a
body that never ends, a 5 GB Content-Length, a redirect to file:, credentials) as an exact error."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.process.fetch import FetchError, RemoteFiles, fetch, local_name, masked_url, url_problem, url_secrets

SCRIPT = b'echo \'{"a": 1, "b": 2}\'\n'
TEN_MB = 10 * 1024 * 1024


@pytest.fixture(autouse=True)
def _local_servers_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests fetch from servers they start on 127.0.0.1: allowed only by opting in."""
    monkeypatch.setenv("AGENTV_ALLOW_PRIVATE_URLS", "1")


class FileServer:
    """A tiny HTTP server with one route per behaviour; counts the requests per path."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.release = threading.Event()  # ends the handler that never finishes its body
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for key, value in (headers or {"Content-Length": str(len(body))}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = self.path
                server.hits[path] = server.hits.get(path, 0) + 1
                if path == "/script.sh":
                    self.send(200, SCRIPT)
                elif path == "/hang":
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    self.wfile.write(b"0123456789")
                    self.wfile.flush()
                    server.release.wait(30)
                elif path == "/huge":
                    self.send(200, b"", {"Content-Length": str(5 * 1024**3)})
                elif path == "/endless":  # no Content-Length: more than 10 MB until it is cut off
                    self.send_response(200)
                    self.end_headers()
                    chunk = b"x" * 65536
                    try:
                        for _ in range(TEN_MB // len(chunk) + 2):
                            self.wfile.write(chunk)
                    except OSError:
                        pass
                elif path == "/to-file":
                    self.send(302, b"", {"Location": "file:///etc/passwd", "Content-Length": "0"})
                elif path == "/to-ftp":  # urllib itself would follow this one
                    self.send(302, b"", {"Location": "ftp://127.0.0.1/x", "Content-Length": "0"})
                elif path == "/to-script":
                    self.send(302, b"", {"Location": "/script.sh", "Content-Length": "0"})
                elif path == "/loop":
                    self.send(302, b"", {"Location": "/loop", "Content-Length": "0"})
                elif path == "/private.sh":
                    expected = "Basic " + base64.b64encode(b"alice:s3cret-pass").decode()
                    if self.headers.get("Authorization") == expected:
                        self.send(200, SCRIPT)
                    else:
                        self.send(401, b"no")
                elif path == "/latin1.txt":
                    self.send(200, "café".encode("latin-1"))
                else:
                    self.send(404, b"not here")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FileServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FileServer]:
    with FileServer() as running:
        yield running


# ----------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        pytest.param("https://example.com/a.json", None, id="https"),
        pytest.param("http://127.0.0.1:8080/a", None, id="http-port"),
        pytest.param(
            "http://exa mple.com/a",
            "URL 'http://exa mple.com/a' holds spaces or control characters (percent-encode them)",
            id="space",
        ),
        pytest.param("http:///a.json", "URL http:///a.json names no host", id="no-host"),
        pytest.param("http://host:99999/a", "malformed URL http://host:99999/a: Port out of range 0-65535", id="port"),
        pytest.param("ftp://host/a", "URL ftp://host/a is not http or https", id="ftp"),
        pytest.param(
            "https://bob:hunter22@host:99999/x",
            "malformed URL https://***@host:99999/x: Port out of range 0-65535",
            id="credentials-masked",
        ),
    ],
)
def test_url_form(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


@pytest.mark.parametrize(
    ("url", "masked", "secrets"),
    [
        pytest.param("https://host/a", "https://host/a", [], id="none"),
        pytest.param("https://bob:hunter22@host/a?q=1", "https://***@host/a?q=1", ["hunter22"], id="user-pass"),
        pytest.param("https://tokenvalue@host/a", "https://***@host/a", ["tokenvalue"], id="token-as-user"),
        pytest.param(
            "https://bob:p%40ss%2Fword@host/a", "https://***@host/a", ["p@ss/word", "p%40ss%2Fword"], id="encoded"
        ),
    ],
)
def test_credentials_are_masked_and_collected(url: str, masked: str, secrets: list[str]) -> None:
    assert masked_url(url) == masked
    assert sorted(url_secrets(url)) == sorted(secrets)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        pytest.param("https://h/dir/data.json", "data.json", id="plain"),
        pytest.param("https://h/dir/", "dir", id="trailing-slash"),
        pytest.param("https://h", "download", id="no-path"),
        pytest.param("https://h/..%2F..%2Fetc%2Fpasswd", "_.._etc_passwd", id="traversal"),
        pytest.param("https://h/a%20b.txt?x=1", "a_b.txt", id="space-query"),
    ],
)
def test_local_name_is_safe(url: str, name: str) -> None:
    assert local_name(url) == name


# ----------------------------------------------------------------------------- fetching


def test_fetch_reads_the_body_and_follows_an_http_redirect(server: FileServer) -> None:
    assert fetch(f"{server.url}/script.sh") == SCRIPT
    assert fetch(f"{server.url}/to-script") == SCRIPT


def test_credentials_are_sent_as_basic_auth(server: FileServer) -> None:
    url = server.url.replace("http://", "http://alice:s3cret-pass@") + "/private.sh"
    assert fetch(url) == SCRIPT


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        pytest.param("/missing", "HTTP 404 Not Found", id="404"),
        pytest.param("/hang", "timed out after 0.5 s", id="body-never-ends"),
        pytest.param("/huge", "it is 5,368,709,120 bytes, over the 10 MB limit for fetched files", id="5GB-length"),
        pytest.param("/endless", "it is over the 10 MB limit for fetched files", id="endless-body"),
        pytest.param(
            "/to-file", "redirected (302) to file:///etc/passwd: only http and https are followed", id="redirect-file"
        ),
        pytest.param(
            "/to-ftp", "redirected (302) to ftp://127.0.0.1/x: only http and https are followed", id="redirect-ftp"
        ),
        pytest.param("/loop", "too many redirects (at most 5 are followed, never in a loop)", id="redirect-loop"),
    ],
)
def test_fetch_errors(server: FileServer, path: str, reason: str) -> None:
    with pytest.raises(FetchError) as caught:
        fetch(f"{server.url}{path}", timeout=0.5)
    assert str(caught.value) == f"could not fetch {server.url}{path}: {reason}"


def test_wrong_credentials_never_show(server: FileServer) -> None:
    url = server.url.replace("http://", "http://alice:wrong-pass@") + "/private.sh"
    with pytest.raises(FetchError) as caught:
        fetch(url)
    assert (
        str(caught.value)
        == f"could not fetch {server.url.replace('http://', 'http://***@')}/private.sh: HTTP 401 Unauthorized"
    )


def test_a_connection_refused_is_an_error(server: FileServer) -> None:
    closed = FileServer()  # bound, never served, then closed: nothing listens on its port
    url = f"{closed.url}/x"
    closed.httpd.server_close()
    with pytest.raises(FetchError) as caught:
        fetch(url, timeout=2)
    assert str(caught.value) == f"could not fetch {url}: Connection refused"


def test_each_url_is_fetched_once_per_run_and_failures_are_remembered(server: FileServer, tmp_path: Path) -> None:
    remote = RemoteFiles(tmp_path)
    first = remote.local(f"{server.url}/script.sh")
    assert remote.local(f"{server.url}/script.sh") == first
    assert Path(first).read_bytes() == SCRIPT
    assert Path(first).name == "script.sh"
    for _ in range(2):
        with pytest.raises(FetchError, match="HTTP 404 Not Found"):
            remote.local(f"{server.url}/missing")
    assert server.hits == {"/script.sh": 1, "/missing": 1}


# ----------------------------------------------------------------------------- through agentv


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def url_dataset(ws, urls: dict[str, str]) -> Path:
    """A dataset whose case <id> runs the shell script at its URL (`sh {FILES}`)."""
    lines = [
        "execution:",
        "  target: t",
        "  evaluators:",
        "    - {type: field_accuracy, fields: [{path: a}, {path: b}]}",
        "evalcases:",
    ]
    for case_id, url in urls.items():
        lines += [
            f"  - id: {case_id}",
            f"    input_messages: [{{role: user, content: [{{type: file, value: '{url}'}}]}}]",
            "    expected_messages: [{role: assistant, content: {a: 1, b: 2}}]",
        ]
    return ws.file("dataset.yaml", "\n".join(lines) + "\n")


def test_eval_fetches_each_url_once_and_a_failed_fetch_is_an_error_row(ws, server: FileServer) -> None:
    ws.cli_target("sh {FILES}")
    url_dataset(ws, {"c1": f"{server.url}/script.sh", "c2": f"{server.url}/script.sh", "gone": f"{server.url}/missing"})
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1")
    rows = {row["eval_id"]: row for row in map(json.loads, Path("out.jsonl").read_text().splitlines())}
    assert [rows["c1"]["status"], rows["c2"]["status"]] == ["ok", "ok"], result.output
    gone = rows["gone"]
    assert gone["status"] == "error"
    assert gone["error"] == f"could not fetch {server.url}/missing: HTTP 404 Not Found"
    assert gone["attempts"] == 0  # the target never ran
    assert server.hits == {"/script.sh": 1, "/missing": 1}


def test_credentials_in_a_url_never_reach_rows(ws, server: FileServer) -> None:
    ws.cli_target("sh {FILES}")
    secret_url = server.url.replace("http://", "http://alice:s3cret-pass@")
    url_dataset(ws, {"ok": f"{secret_url}/private.sh", "bad": f"{secret_url}/missing"})
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    text = Path("out.jsonl").read_text()
    rows = {row["eval_id"]: row for row in map(json.loads, text.splitlines())}
    assert rows["ok"]["status"] == "ok"
    assert (
        rows["bad"]["error"]
        == f"could not fetch {server.url.replace('http://', 'http://***@')}/missing: HTTP 404 Not Found"
    )
    assert "s3cret-pass" not in text


def test_validate_checks_the_url_form_without_network(ws) -> None:
    ws.cli_target("sh {FILES}")
    url_dataset(ws, {"far": "https://unreachable.invalid/data.sh", "bad": "https://exa mple.com/x"})
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert (
        "dataset.yaml:10: evalcases[1].input_messages[0].content[0].value: URL 'https://exa mple.com/x' holds "
        "spaces or control characters (percent-encode them) (case 'bad')"
    ) in result.output
    assert "far" not in result.output


def test_a_fetched_file_that_is_not_utf8_cannot_be_inlined_for_a_model(server: FileServer, tmp_path: Path) -> None:
    from agentv_py.models.dataset import EvalCase
    from agentv_py.prepared import PreparedCase
    from agentv_py.runner.chat_messages import case_messages

    path = RemoteFiles(tmp_path).local(f"{server.url}/latin1.txt")
    case = EvalCase.model_validate(
        {"id": "c", "input_messages": [{"role": "user", "content": [{"type": "file", "value": "x"}]}]}
    )
    prepared = PreparedCase(case, 0, [path], [], None, "", [])
    with pytest.raises(ValueError) as caught:
        case_messages(prepared)
    assert str(caught.value) == "file latin1.txt is not UTF-8 text and cannot be inlined; give images as type: image"


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        pytest.param("127.0.0.1", True, id="loopback"),
        pytest.param("10.1.2.3", True, id="private-10"),
        pytest.param("192.168.0.7", True, id="private-192"),
        pytest.param("169.254.169.254", True, id="cloud-metadata"),
        pytest.param("::1", True, id="ipv6-loopback"),
        pytest.param("::ffff:127.0.0.1", True, id="ipv4-mapped-loopback"),
        pytest.param("fe80::1%eth0", True, id="ipv6-link-local-scoped"),
        pytest.param("0.0.0.0", True, id="unspecified"),
        pytest.param("8.8.8.8", False, id="public"),
        pytest.param("2606:4700:4700::1111", False, id="public-ipv6"),
    ],
)
def test_private_addresses_are_refused_unless_allowed(
    monkeypatch: pytest.MonkeyPatch, address: str, refused: bool
) -> None:
    from agentv_py.process.fetch import address_problem

    monkeypatch.delenv("AGENTV_ALLOW_PRIVATE_URLS")
    problem = address_problem("host.example", address)
    assert (problem is not None) == refused
    monkeypatch.setenv("AGENTV_ALLOW_PRIVATE_URLS", "1")
    assert address_problem("host.example", address) is None


def test_a_dataset_url_on_a_loopback_address_is_refused(server: FileServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset is data: it must not make agentv read an internal service (or a cloud metadata
    endpoint) and hand the reply to a target or a judge. The connection is refused before a
    request is sent."""
    monkeypatch.delenv("AGENTV_ALLOW_PRIVATE_URLS")
    with pytest.raises(FetchError) as caught:
        fetch(f"{server.url}/script.sh")
    assert str(caught.value) == (
        f"could not fetch {server.url}/script.sh: 127.0.0.1 is a loopback, private or link-local address "
        "(127.0.0.1); set AGENTV_ALLOW_PRIVATE_URLS=1 to fetch dataset files from such addresses"
    )
    assert server.hits == {}
