"""Image inputs: signature sniffing, file and data-URI checks, references (issue 6 §2)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from agentv_py.media import ImageRef, check_image_file, image_references, parse_data_uri, sniff_image
from tests.pngs import GIF, JPEG, WEBP, data_uri, png


@pytest.mark.parametrize(
    "head, expected",
    [
        (png(), "image/png"),
        (JPEG, "image/jpeg"),
        (GIF, "image/gif"),
        (WEBP, "image/webp"),
        (b"%PDF-1.7", None),
        (b"", None),
        (b"RIFF\x00\x00\x00\x00WAVE", None),
    ],
    ids=["png", "jpeg", "gif", "webp", "pdf", "empty", "riff-wave"],
)
def test_sniff(head, expected):
    assert sniff_image(head[:16]) == expected


@pytest.mark.parametrize(
    "content, expected",
    [
        (png(), ("image/png", None)),
        (b"", (None, "not a png, jpeg, webp, gif image (the file is empty)")),
        (b"%PDF-1.7\n", (None, "not a png, jpeg, webp, gif image (it is a PDF)")),
        (b'{"a": 1}', (None, "not a png, jpeg, webp, gif image (it looks like text)")),
        (b"\x00\x01\x02\x03", (None, "not a png, jpeg, webp, gif image (it starts with bytes 00 01 02 03)")),
    ],
    ids=["png", "empty", "pdf", "text", "binary"],
)
def test_check_image_file(tmp_path, content, expected):
    path = tmp_path / "x.png"
    path.write_bytes(content)
    assert check_image_file(path) == expected


def test_image_over_20_mb_is_refused(tmp_path):
    path = tmp_path / "big.png"
    with open(path, "wb") as handle:
        handle.write(png())
        handle.truncate(21 * 1024 * 1024)  # sparse: no 21 MB written
    assert check_image_file(path) == (None, "21.0 MB is over the 20 MB limit for images")


@pytest.mark.parametrize(
    "uri, problem",
    [
        (data_uri(png()), None),
        (data_uri(JPEG, "image/jpg"), None),
        (data_uri(png(), ""), None),
        ("data:image/png,abc", "data URI must be base64-encoded (data:image/png;base64,...)"),
        ("data:image/png;base64,@@@", "data URI payload is not valid base64"),
        ("data:image/png;base64", "malformed data URI (expected data:image/png;base64,...)"),
        (
            data_uri(b"hello"),
            "data URI does not hold a png, jpeg, webp, gif image (it starts with bytes 68 65 6c 6c 6f)",
        ),
        (data_uri(JPEG, "image/png"), "data URI declares image/png but holds image/jpeg data"),
    ],
    ids=["png", "jpg-alias", "no-type", "not-base64", "bad-base64", "no-comma", "not-image", "wrong-type"],
)
def test_parse_data_uri(uri, problem):
    media_type, data, error = parse_data_uri(uri)
    assert error == problem
    if problem is None:
        assert media_type in ("image/png", "image/jpeg") and data


def test_refs_names_urls_and_paths(tmp_path):
    path = tmp_path / "office.png"
    path.write_bytes(png())
    file_ref = ImageRef("file", str(path), "image/png")
    inline = ImageRef("data", data_uri(png(3, 3)), "image/png")
    remote = ImageRef("url", "https://example.com/img/chart%201.jpg?x=1")
    assert image_references([file_ref, inline, remote]) == [
        "Image 1 (office.png)",
        "Image 2 (inline image/png)",
        "Image 3 (chart 1.jpg)",
    ]
    assert file_ref.url() == data_uri(png())
    assert remote.url() == remote.path() == "https://example.com/img/chart%201.jpg?x=1"
    written = inline.path()
    assert written.endswith(".png") and Path(written).read_bytes() == png(3, 3)
    assert inline.path() == written  # written once per process
    assert base64.b64decode(file_ref.url().split(",", 1)[1]) == png()
    assert os.path.isabs(written)
