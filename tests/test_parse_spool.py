"""A big dataset file is never read whole: it is hashed in blocks, its packed cases go to disk as
they are parsed (`case_spool`), into its parse cache entry, and a cache hit reads that entry back a
chunk at a time. The data must be exactly what a whole-file parse gives, and a cache entry that is
not whole (truncated, corrupt, another format) is parsed again, never used."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentv_py.loading import case_spool, load_dataset
from agentv_py.loading.case_spool import CaseSpool, read_spool
from agentv_py.loading.fingerprint import dataset_sha256, file_sha256
from agentv_py.loading.parse_cache import SPOOL_MIN
from agentv_py.loading.source import _load, read_yaml, unpack_cases
from agentv_py.models.results import ResultRow
from agentv_py.report import row_store
from agentv_py.report.row_store import RowSelection, RowStore

SUITE = (
    "description: big\nexecution:\n  target: mock\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
)


def cases(count: int, extra: str = "") -> str:
    return "".join(
        f"  - id: c{i}\n    input_messages: [{{role: user, content: doc {i}}}]\n"
        f"    expected_messages: [{{role: assistant, content: '{{\"a\": {i}}}'}}]\n{extra}"
        for i in range(count)
    )


BIG = 700  # cases: past SPOOL_MIN bytes
DATASETS = {
    "plain": SUITE + "evalcases:\n" + cases(BIG),
    "anchors (node path)": SUITE + "shared: &doc {x: 1}\nevalcases:\n" + cases(BIG, "    meta: *doc\n"),
    "cases after a later key": "evalcases:\n" + cases(BIG) + SUITE,
    "no cases": SUITE + "evalcases: []\n" + "# padding\n" * 8000,
    "null cases": SUITE + "evalcases:\n" + "# padding\n" * 8000,
    "cases not a list": SUITE + "evalcases:\n  c0: {id: c0}\n" + "# padding\n" * 8000,
    "not a mapping": "- a\n" * 20000,
}


def plain(data: Any) -> Any:
    """Parsed data with its packed cases unpacked, and its keys in order."""
    if isinstance(data, dict) and isinstance(data.get("evalcases"), (tuple, CaseSpool)):
        return list(data), {**data, "evalcases": unpack_cases(data["evalcases"])}
    return data


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "yaml").glob("*.cases"))


@pytest.fixture
def cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path_factory.mktemp("parse-cache")
    monkeypatch.setenv("AGENTV_CACHE_DIR", str(directory))
    monkeypatch.setattr(case_spool, "CHUNK_CASES", 64)  # several chunks, the last one short
    return directory


@pytest.mark.parametrize("text", DATASETS.values(), ids=DATASETS.keys())
def test_a_spooled_parse_gives_what_a_whole_parse_gives(ws, cache, monkeypatch, text):
    path = ws.dataset(text)
    assert path.stat().st_size >= SPOOL_MIN
    whole = plain(_load(path.read_bytes(), True))
    first = read_yaml(path, pack_cases=True)[1]  # parsed, the cache entry written
    assert plain(first) == whole
    assert len(entries(cache)) == 1
    assert plain(read_yaml(path, pack_cases=True)[1]) == whole  # from the cache entry
    monkeypatch.setenv("AGENTV_NO_CACHE", "1")
    assert plain(read_yaml(path, pack_cases=True)[1]) == whole  # spooled to a temporary file


def test_a_spooled_dataset_loads_as_a_dataset_read_whole(ws, cache, monkeypatch):
    ws.dataset(SUITE + "evalcases:\n" + cases(BIG))
    spooled = load_dataset("dataset.yaml")
    monkeypatch.setattr("agentv_py.loading.source.SPOOL_MIN", 1 << 40)
    whole = load_dataset("dataset.yaml")
    assert [p.case.id for p in spooled.cases] == [f"c{i}" for i in range(BIG)]
    assert [(p.case, p.expected) for p in spooled.cases] == [(p.case, p.expected) for p in whole.cases]


def _cut(at: Callable[[int], int]) -> Callable[[bytes], bytes]:
    return lambda data: data[: at(len(data))]


def _flip(at: Callable[[int], int]) -> Callable[[bytes], bytes]:
    return lambda data: data[: at(len(data))] + bytes([data[at(len(data))] ^ 0x01]) + data[at(len(data)) + 1 :]


DAMAGE = {
    "empty": lambda data: b"",
    "only the magic line": lambda data: case_spool.MAGIC,
    "another magic line": lambda data: b"agentv-cases 0\n" + data[len(case_spool.MAGIC) :],
    "cut in a chunk": _cut(lambda n: n // 2),
    "cut before the end record": _cut(lambda n: n - 200),
    "last byte missing": _cut(lambda n: n - 1),
    "a byte flipped in a chunk": _flip(lambda n: n // 3),
    "a byte flipped in the end record": _flip(lambda n: n - 5),
    "a byte flipped in a record head": _flip(lambda n: len(case_spool.MAGIC) + 9),
    "bytes after the end record": lambda data: data + b"\0",
    "the old whole-file format": lambda data: b"\xe3" + data,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_cache_entry_is_parsed_again(ws, cache, damage):
    path = ws.dataset(SUITE + "evalcases:\n" + cases(BIG))
    whole = plain(read_yaml(path, pack_cases=True)[1])
    [entry] = entries(cache)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    with entry.open("rb") as handle:
        assert read_spool(handle) is None  # not an entry
    assert plain(read_yaml(path, pack_cases=True)[1]) == whole
    assert entries(cache) == [entry] and entry.read_bytes() == good  # written again, whole


def test_an_entry_of_other_content_is_never_used(ws, cache):
    path = ws.dataset(SUITE + "evalcases:\n" + cases(BIG))
    read_yaml(path, pack_cases=True)
    path.write_text(SUITE + "evalcases:\n" + cases(BIG + 1))
    assert len(plain(read_yaml(path, pack_cases=True)[1])[1]["evalcases"]) == BIG + 1
    assert len(entries(cache)) == 2


@pytest.mark.parametrize("sidecar", [False, True], ids=["yaml", "jsonl with sidecar"])
def test_the_dataset_hash_is_of_its_bytes_read_in_blocks(ws, sidecar):
    data = os.urandom(3 * 1024 * 1024 + 7)
    path = ws.file("big.jsonl" if sidecar else "big.yaml", data)
    expected = hashlib.sha256(data)
    if sidecar:
        side = ws.file("big.yaml", b"execution: {}\n")
        expected.update(b"\0sidecar\0" + side.read_bytes())

    class Loaded:
        pass

    loaded = Loaded()
    loaded.path = path  # type: ignore[attr-defined]
    assert dataset_sha256(loaded) == expected.hexdigest()  # type: ignore[arg-type]
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def row(i: int) -> ResultRow:
    return ResultRow(
        timestamp="2026-01-01T00:00:00Z",
        eval_id=f"c{i}",
        dataset="d",
        target="t",
        status="ok",
        score=1.0,
        verdict="pass",
        run_id="r1" if i % 2 else None,
    )


@pytest.mark.parametrize("count", [0, 1, 5, 6, 7], ids=lambda n: f"{n} rows")
def test_stored_rows_read_back_in_order(monkeypatch, count):
    monkeypatch.setattr(row_store, "CHUNK_ROWS", 3)
    store, rows = RowStore(), [row(i) for i in range(count)]
    for item in rows:
        store.append(item)
    assert list(store) == rows and len(store) == count and store[:] == rows
    assert store.eval_ids == [r.eval_id for r in rows] and store.run_ids == [r.run_id for r in rows]
    if count:
        assert store[-1] == rows[-1] and store.pop() == rows[-1]
        assert list(store) == rows[:-1] and store.eval_ids == [r.eval_id for r in rows[:-1]]
    picked = RowSelection(store, [i for i in range(len(store)) if i % 2 == 0])
    assert list(picked) == [r for i, r in enumerate(rows[: len(store)]) if i % 2 == 0] == picked[:]
