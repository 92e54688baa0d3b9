"""Images given to cases: local files, data URIs and URLs (checked at load, sent as parts/paths).

Pure standard library; nothing here talks to the network. A URL is passed on as it is.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import hashlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

MAX_IMAGE_BYTES = 20 * 1024 * 1024
IMAGE_FORMATS = "png, jpeg, webp, gif"
_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}
_DATA_URI = re.compile(r"^data:(?P<type>[^;,]*)(?P<params>(?:;[^;,]*)*),(?P<data>.*)$", re.DOTALL)

ImageSource = Literal["file", "data", "url"]


def sniff_image(head: bytes) -> str | None:
    """The media type of image bytes from their signature (png, jpeg, webp, gif), else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _describe(head: bytes) -> str:
    if not head:
        return "the file is empty"
    if head[:5] in (b"%PDF-",):
        return "it is a PDF"
    if head.lstrip()[:1] in (b"{", b"[", b"<"):
        return "it looks like text"
    return f"it starts with bytes {head[:8].hex(' ')}"


def check_image_file(path: str | Path) -> tuple[str | None, str | None]:
    """(media type, None) for a usable image file, else (None, why not)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror or exc}"
    if size > MAX_IMAGE_BYTES:
        return None, f"{size / 1024 / 1024:.1f} MB is over the 20 MB limit for images"
    media_type = sniff_image(head)
    if media_type is None:
        return None, f"not a {IMAGE_FORMATS} image ({_describe(head)})"
    return media_type, None


def parse_data_uri(uri: str) -> tuple[str | None, bytes | None, str | None]:
    """(media type, bytes, None) for a base64 image data URI, else (None, None, why not)."""
    match = _DATA_URI.match(uri)
    if match is None:
        return None, None, "malformed data URI (expected data:image/png;base64,...)"
    if ";base64" not in match.group("params"):
        return None, None, "data URI must be base64-encoded (data:image/png;base64,...)"
    try:
        data = base64.b64decode(match.group("data"), validate=True)
    except (binascii.Error, ValueError):
        return None, None, "data URI payload is not valid base64"
    if len(data) > MAX_IMAGE_BYTES:
        return None, None, f"{len(data) / 1024 / 1024:.1f} MB is over the 20 MB limit for images"
    media_type = sniff_image(data[:16])
    if media_type is None:
        return None, None, f"data URI does not hold a {IMAGE_FORMATS} image ({_describe(data[:16])})"
    declared = match.group("type").lower()
    if declared and declared != media_type and not (declared == "image/jpg" and media_type == "image/jpeg"):
        return None, None, f"data URI declares {declared} but holds {media_type} data"
    return media_type, data, None


def is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


@dataclass(frozen=True)
class ImageRef:
    """One image of a case: a checked local file, a checked data URI, or a URL (unchecked)."""

    source: ImageSource
    value: str  # absolute path, data URI, or URL
    media_type: str | None = None
    detail: str | None = None

    @property
    def name(self) -> str:
        """A short name for references such as "Image 1 (office.png)"."""
        if self.source == "file":
            return os.path.basename(self.value)
        if self.source == "url":
            tail = unquote(urlparse(self.value).path.rstrip("/").rsplit("/", 1)[-1])
            return tail or urlparse(self.value).netloc
        return f"inline {self.media_type or 'image'}"

    def url(self) -> str:
        """What a chat API receives: the URL, the data URI, or the file as a base64 data URI."""
        if self.source == "file":
            return _file_data_uri(self.value, self.media_type or "image/png")
        return self.value

    def path(self) -> str:
        """What a command or a code judge receives: a local path (data URIs are written to a
        temporary file once per process), or the URL itself."""
        if self.source == "data":
            return _materialise(self.value, self.media_type or "image/png")
        return self.value


@lru_cache(maxsize=64)
def _file_data_uri(path: str, media_type: str) -> str:
    """The image file as a base64 data URI; at most MAX_IMAGE_BYTES read (the file may have grown
    since it was checked at load)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise ValueError(f"image {os.path.basename(path)} is over the 20 MB limit for images")
    encoded = base64.b64encode(data).decode("ascii")
    return f"data:{media_type};base64,{encoded}"


_lock = threading.Lock()
_directory: list[str] = []


def _materialise(uri: str, media_type: str) -> str:
    digest = hashlib.blake2b(uri.encode("ascii", "replace"), digest_size=12).hexdigest()
    with _lock:
        if not _directory:
            directory = tempfile.mkdtemp(prefix="agentv-images-")
            atexit.register(shutil.rmtree, directory, True)
            _directory.append(directory)
        path = os.path.join(_directory[0], f"image-{digest}{_EXTENSIONS.get(media_type, '')}")
        if not os.path.exists(path):
            _, data, _ = parse_data_uri(uri)
            with open(path, "wb") as handle:
                handle.write(data or b"")
    return path


def image_references(images: list[ImageRef] | tuple[ImageRef, ...]) -> list[str]:
    """["Image 1 (office.png)", "Image 2 (inline image/jpeg)", ...]."""
    return [f"Image {i} ({image.name})" for i, image in enumerate(images, 1)]
