"""The report's on-disk case details: replaced slots, order, and base64 of a gzip stream that
equals the whole (chunks of a multiple of 3 bytes, so no padding falls between them)."""

from __future__ import annotations

import base64
import gzip
import json

from agentv_py.report import spill
from agentv_py.report.spill import Spill


def test_slots_are_replaced_ordered_and_streamed_as_one_gzip_json_array(monkeypatch):
    monkeypatch.setattr(spill, "_CHUNK", 3 * 7)  # many small chunks
    store = Spill()
    try:
        for slot, text in enumerate([b'{"id":"a"}', b'{"id":"b"}', b'{"id":"c"}']):
            store.put(slot, text)
        store.put(1, b'{"id":"b2","x":"' + b"y" * 500 + b'"}')  # a resumed case: its last row wins
        packed = b"".join(store.base64_gzip([2, 0, 1], lambda slot, data: data[:-1] + b',"n":%d}' % slot))
    finally:
        store.close()
    value = json.loads(gzip.decompress(base64.b64decode(packed)))
    assert [(item["id"], item["n"]) for item in value] == [("c", 2), ("a", 0), ("b2", 1)]
    assert b"=" not in packed[:-4]  # padding only at the very end
