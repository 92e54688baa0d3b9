"""The report's on-disk cases: a later row of a case replaces it where it stands, the dataset's
order first (unlisted cases after, as first read), columns read back in that order, and the
details as base64 of a gzip stream that equals the whole (chunks of a multiple of 3 bytes, so no
padding falls between them)."""

from __future__ import annotations

import base64
import gzip
import json

from agentv_py.report import spill
from agentv_py.report.spill import CaseStore


def test_cases_are_replaced_ordered_and_streamed_as_one_gzip_json_array(monkeypatch):
    monkeypatch.setattr(spill, "_CHUNK", 3 * 7)  # many small chunks
    monkeypatch.setattr(spill, "_BATCH", 2)  # read back a few at a time
    store = CaseStore()
    try:
        for case_id in ["a", "b", "c", "d"]:
            store.put(case_id, b"[%s]" % case_id.encode(), b'{"id":"%s"}' % case_id.encode(), b"{}", case_id == "b")
        store.put("b", b"[b2]", b'{"id":"b2","x":"' + b"y" * 500 + b'"}', b"{}", False)  # resumed: the last row wins
        store.set_order(["c", "zz", "a", "b"])  # "d" is not listed: it goes after, "zz" has no row
        assert len(store) == 4
        assert list(store.column("entry")) == [("c", b"[c]"), ("a", b"[a]"), ("b", b"[b2]"), ("d", b"[d]")]
        assert list(store.geometry_cases()) == []  # b's last row has no shapes
        packed = b"".join(store.base64_gzip(lambda case_id, data: data[:-1] + b',"n":"%s"}' % case_id.encode()))
    finally:
        store.close()
    value = json.loads(gzip.decompress(base64.b64decode(packed)))
    assert [(item["id"], item["n"]) for item in value] == [("c", "c"), ("a", "a"), ("b2", "b"), ("d", "d")]
    assert b"=" not in packed[:-4]  # padding only at the very end


def test_geometry_cases_in_order():
    store = CaseStore()
    try:
        for case_id in ["a", "b", "c"]:
            store.put(case_id, b"[]", b"{}", b"{}", case_id != "b")
        store.set_order(["c", "b", "a"])
        assert list(store.geometry_cases()) == ["c", "a"]
    finally:
        store.close()
