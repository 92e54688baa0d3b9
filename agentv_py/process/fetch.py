"""Input files given by `http(s)` URL: the content fetched once per run, bounded in time and size,
and the URL's credentials never shown. The checks that need no network (the URL's form, the
addresses refused, the local name) are `agentv_py.process.urls`, re-exported here; this module
(http.client, urllib.request, ssl) is imported only by a run that has a file given by URL.

Only `http` and `https`, also after a redirect (at most `MAX_REDIRECTS`; a redirect to any other
scheme, `file:` included, is refused). A `user:password@` in the URL is sent as basic
authentication, never to another host a redirect leads to, and masked (`***@`) in every message.
"""

from __future__ import annotations

import base64
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from agentv_py.process.urls import (
    FETCH_TIMEOUT_SECONDS,
    MAX_FILE_BYTES,
    MAX_REDIRECTS,
    SCHEMES,
    FetchError,
    address_problem,
    is_url,
    local_name,
    masked_url,
    url_problem,
    url_secrets,
)

__all__ = [
    "FETCH_TIMEOUT_SECONDS",
    "MAX_FILE_BYTES",
    "MAX_REDIRECTS",
    "FetchError",
    "RemoteFiles",
    "address_problem",
    "fetch",
    "is_url",
    "local_name",
    "masked_url",
    "url_problem",
    "url_secrets",
]

_CHUNK = 64 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)


def _resolved_problem(url: str) -> str | None:
    """`address_problem` for every address the URL's host resolves to (used when a proxy makes
    the connection, so the peer is the proxy)."""
    host = urlsplit(url).hostname or ""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return None  # the connection reports it
    for info in infos:
        problem = address_problem(host, str(info[4][0]))
        if problem:
            return problem
    return None


def _proxied() -> bool:
    proxies = urllib.request.getproxies()
    return bool(proxies.get("http") or proxies.get("https"))


def _refused_redirect(code: int, location: str) -> str:
    return f"redirected ({code}) to {masked_url(location)}: only http and https are followed"


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Redirects followed only to http(s), at most MAX_REDIRECTS; credentials only to the same host."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(
        self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        scheme = urlsplit(newurl).scheme.lower()
        if scheme not in SCHEMES:
            raise FetchError(_refused_redirect(code, newurl))
        if _proxied():
            problem = _resolved_problem(newurl)
            if problem:
                raise FetchError(problem)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urlsplit(newurl).netloc.lower() != urlsplit(req.full_url).netloc.lower():
            new.remove_header("Authorization")
        return new


class _Watch:
    """The sockets one fetch opens (redirects included), shut down together when its deadline
    passes: a socket timeout bounds each read, not a server that trickles a byte at a time."""

    def __init__(self) -> None:
        self.sockets: list[socket.socket] = []
        self.expired = False
        self.proxied = _proxied()
        self._lock = threading.Lock()

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self.sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def check_peer(self, sock: socket.socket, host: str) -> None:
        """Refuse the address connected to (each hop, redirects included) by `address_problem`;
        through a proxy the peer is the proxy, and the hosts are checked by name instead."""
        if self.proxied:
            return
        try:
            peer = str(sock.getpeername()[0])
        except OSError:
            return
        problem = address_problem(host, peer)
        if problem:
            _shut(sock)
            raise FetchError(problem)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self.sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _watched_handlers(watch: _Watch) -> tuple[urllib.request.BaseHandler, urllib.request.BaseHandler]:
    """HTTP and HTTPS handlers whose connections report their sockets to `watch`."""

    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            watch.add(self.sock)
            watch.check_peer(self.sock, self.host)

    class SecureConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            watch.add(self.sock)
            watch.check_peer(self.sock, self.host)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Connection, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(SecureConnection, req, context=self._context)  # type: ignore[attr-defined]

    return Handler(), SecureHandler()


def _opener(watch: _Watch) -> urllib.request.OpenerDirector:
    """http(s) only: no file, ftp or data handlers, whatever a URL or a redirect says."""
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.UnknownHandler(),
        *_watched_handlers(watch),
        urllib.request.HTTPDefaultErrorHandler(),
        _Redirects(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


def fetch(url: str, *, max_bytes: int = MAX_FILE_BYTES, timeout: float = FETCH_TIMEOUT_SECONDS) -> bytes:
    """The body of `url` (at most `max_bytes`, within `timeout` seconds in all), else FetchError
    `could not fetch <masked url>: <why>`."""
    shown = masked_url(url)
    problem = url_problem(url)
    if problem is not None:
        raise FetchError(problem)
    try:
        return _fetch(url, max_bytes, timeout)
    except FetchError as exc:
        raise FetchError(f"could not fetch {shown}: {exc}") from None


def _fetch(url: str, max_bytes: int, timeout: float) -> bytes:
    parts = urlsplit(url)
    headers = {"User-Agent": "agentv", "Accept-Encoding": "identity"}
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        host = parts.netloc.rsplit("@", 1)[1]
        url = urlunsplit((parts.scheme, host, parts.path, parts.query, ""))
    deadline = time.monotonic() + timeout
    limit = f"the {max_bytes / 1024 / 1024:g} MB limit for fetched files"
    watch = _Watch()
    if watch.proxied:
        problem = _resolved_problem(url)
        if problem:
            raise FetchError(problem)
    timer = threading.Timer(timeout, watch.expire)
    timer.daemon = True
    timer.start()
    try:
        return _read(url, headers, max_bytes, timeout, deadline, limit, watch)
    except FetchError:
        raise
    except Exception:
        if watch.expired:  # whatever the shut-down socket raised: the deadline passed
            raise FetchError(f"timed out after {timeout:g} s") from None
        raise
    finally:
        timer.cancel()


def _read(
    url: str, headers: dict[str, str], max_bytes: int, timeout: float, deadline: float, limit: str, watch: _Watch
) -> bytes:
    try:
        with _opener(watch).open(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.strip().isascii() and length.strip().isdigit() and int(length) > max_bytes:
                raise FetchError(f"it is {int(length):,} bytes, over {limit}")
            body = bytearray()
            while True:
                if time.monotonic() > deadline or watch.expired:
                    raise FetchError(f"timed out after {timeout:g} s")
                chunk = response.read1(_CHUNK) if hasattr(response, "read1") else response.read(_CHUNK)
                if watch.expired:  # the read ended because the deadline shut the socket
                    raise FetchError(f"timed out after {timeout:g} s")
                if not chunk:
                    return bytes(body)
                body += chunk
                if len(body) > max_bytes:
                    raise FetchError(f"it is over {limit}")
    except urllib.error.HTTPError as exc:
        location = exc.headers.get("Location") or ""
        scheme = urlsplit(location).scheme.lower()
        if exc.code in _REDIRECTS and scheme not in ("", *SCHEMES):  # refused by urllib itself
            raise FetchError(_refused_redirect(exc.code, location)) from None
        if exc.code in _REDIRECTS:  # the redirect limit; urllib's own words span lines
            raise FetchError(f"too many redirects (at most {MAX_REDIRECTS} are followed, never in a loop)") from None
        raise FetchError(f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, FetchError):
            raise reason from None
        if isinstance(reason, TimeoutError):
            raise FetchError(f"timed out after {timeout:g} s") from None
        text = getattr(reason, "strerror", None) or str(reason)
        raise FetchError(str(text)) from None
    except TimeoutError:
        raise FetchError(f"timed out after {timeout:g} s") from None
    except (OSError, HTTPException, ValueError) as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}") from None


@dataclass
class _Entry:
    lock: threading.Lock
    number: int  # its folder: url-<number>
    path: str | None = None
    error: str | None = None


class RemoteFiles:
    """One run's fetched files: each URL fetched once (a failure is remembered too, so every case
    naming it gets the same error without asking the server again), written under `directory`
    with its own name, so commands see `{FILES}` like any local file."""

    def __init__(
        self, directory: Path, *, max_bytes: int = MAX_FILE_BYTES, timeout: float = FETCH_TIMEOUT_SECONDS
    ) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.timeout = timeout
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def local(self, url: str) -> str:
        """The local path of `url`'s content, fetched on first use; FetchError if it cannot be."""
        with self._lock:
            entry = self._entries.get(url)
            if entry is None:
                entry = self._entries[url] = _Entry(threading.Lock(), len(self._entries) + 1)
        with entry.lock:
            if entry.path is None and entry.error is None:
                try:
                    data = fetch(url, max_bytes=self.max_bytes, timeout=self.timeout)
                    folder = self.directory / f"url-{entry.number}"
                    folder.mkdir(parents=True, exist_ok=True)
                    path = folder / local_name(url)
                    path.write_bytes(data)
                    entry.path = str(path)
                except FetchError as exc:
                    entry.error = str(exc)
                except OSError as exc:
                    entry.error = f"could not store {masked_url(url)}: {exc.strerror or exc}"
        if entry.error is not None:
            raise FetchError(entry.error)
        assert entry.path is not None
        return entry.path

    @property
    def fetched(self) -> int:
        """How many distinct URLs were asked for (each fetched at most once)."""
        return len(self._entries)
