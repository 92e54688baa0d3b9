"""Input files given by `http(s)` URL, without the network: the form checked at load, the
addresses a fetch may not reach, a fetched file's local name, and the URL's credentials never
shown. Importing this module imports no network code: `agentv_py.process.fetch` (http.client,
urllib.request, ssl) is imported only by a run that has a file given by URL.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit, urlunsplit

MAX_FILE_BYTES = 10 * 1024 * 1024  # as for a local file inlined into a message
FETCH_TIMEOUT_SECONDS = 30.0  # for the whole fetch: connection, headers and body
MAX_REDIRECTS = 5
SCHEMES = ("http", "https")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class FetchError(Exception):
    """A URL that could not be fetched; the message names the URL with its credentials masked."""


def is_url(value: str) -> bool:
    """Is `value` an http(s) URL (rather than a path)?"""
    return value.startswith(("http://", "https://"))


def masked_url(url: str) -> str:
    """The URL with any `user:password@` replaced by `***@`: what messages show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/@]*@", "//***@", url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials written in a URL (to mask wherever they might show up)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [unquote(p) for p in (parts.password, parts.username) if p]
    if parts.password:
        found.append(parts.password)  # as written (percent-encoded), too
    return [s for s in dict.fromkeys(found) if len(s) >= 4]  # a 1-3 character "secret" would mask ordinary text


def url_problem(url: str) -> str | None:
    """Why `url` cannot be fetched, judged by its form alone (no network), else None."""
    shown = masked_url(url)
    if any(c.isspace() or not c.isprintable() for c in url):
        return f"URL {shown!r} holds spaces or control characters (percent-encode them)"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"malformed URL {shown}: {exc}"
    if parts.scheme not in SCHEMES:
        return f"URL {shown} is not http or https"
    if not parts.hostname:
        return f"URL {shown} names no host"
    if port == 0:
        return f"URL {shown} names port 0"
    return None


ALLOW_PRIVATE_ENV = "AGENTV_ALLOW_PRIVATE_URLS"


def address_problem(host: str, address: str) -> str | None:
    """Why a dataset URL may not reach `address` (the IP `host` led to), else None: loopback,
    private, link-local (cloud metadata services), multicast and reserved addresses are refused
    unless AGENTV_ALLOW_PRIVATE_URLS=1 — a dataset is data, and must not make agentv read an
    internal service and hand its reply to a target or a judge."""
    if os.environ.get(ALLOW_PRIVATE_ENV) == "1":
        return None
    import ipaddress  # only a fetch asks

    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return (
            f"{host} is a loopback, private or link-local address ({ip}); "
            f"set {ALLOW_PRIVATE_ENV}=1 to fetch dataset files from such addresses"
        )
    return None


def local_name(url: str) -> str:
    """A safe file name for a fetched URL: its last path segment (`data.json`), else `download`."""
    tail = unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])
    name = _UNSAFE_NAME.sub("_", tail).lstrip(".")[:100]
    return name or "download"
