"""`agentv cache stats` and `agentv cache clear`, on caches written by real runs."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from agentv_py.runner.cache_store import CacheStore
from tests.cli.test_eval import invoke

DB = Path(".agentv/cache/cache.sqlite3")


def fill(directory: Path, entries: dict[str, int], hits: int = 0) -> None:
    """A cache with `entries[kind]` entries of each kind, the first entry of each looked up `hits` times."""
    store = CacheStore(directory)
    for kind, count in entries.items():
        for i in range(count):
            store.put(kind, f"v1:{kind}-{i}", "{}")  # type: ignore[arg-type]
        for _ in range(hits):
            store.get(kind, f"v1:{kind}-0")  # type: ignore[arg-type]
    store.close()


def test_stats_of_a_cache_never_written(ws):
    result = invoke("cache", "stats")
    assert result.exit_code == 0, result.output
    assert result.stdout == "cache: .agentv/cache/cache.sqlite3 (empty: nothing stored yet)\n"
    assert not DB.exists()  # looking creates nothing


def test_stats_counts_entries_and_hits_by_kind(ws):
    fill(DB.parent, {"target": 3, "judge": 2}, hits=2)
    result = invoke("cache", "stats")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"cache: \.agentv/cache/cache\.sqlite3 \(\d+\.\d KB on disk\)", lines[0]), lines[0]
    assert lines[1:] == ["  target  3 entries, 2 hits", "  judge   2 entries, 2 hits"]


def test_stats_and_clear_take_a_cache_dir(ws):
    fill(Path("other"), {"judge": 1})
    assert invoke("cache", "stats", "--cache-dir", "other").stdout.splitlines()[2] == "  judge   1 entry, 0 hits"
    result = invoke("cache", "clear", "--cache-dir", "other")
    assert result.stdout == "cache: removed 1 entry from other/cache.sqlite3\n"


@pytest.mark.parametrize(
    ("args", "said", "left"),
    [
        pytest.param((), "removed 5 entries", {}, id="all"),
        pytest.param(("--kind", "judge"), "removed 2 judge entries", {"target": 3}, id="judges-only"),
        pytest.param(("--kind", "target"), "removed 3 target entries", {"judge": 2}, id="targets-only"),
    ],
)
def test_clear(ws, args, said, left):
    fill(DB.parent, {"target": 3, "judge": 2})
    result = invoke("cache", "clear", *args)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"cache: {said} from .agentv/cache/cache.sqlite3\n"
    with sqlite3.connect(DB) as connection:
        assert dict(connection.execute("SELECT kind, COUNT(*) FROM entries GROUP BY kind").fetchall()) == left


def test_clear_of_nothing(ws):
    result = invoke("cache", "clear")
    assert result.exit_code == 0 and result.stdout == "cache: removed 0 entries from .agentv/cache/cache.sqlite3\n"


def test_an_unknown_kind_is_a_usage_error(ws):
    result = invoke("cache", "clear", "--kind", "answers")
    assert result.exit_code == 2
    assert result.stderr == "error: invalid --kind 'answers': choose target or judge\n"


def test_a_corrupt_database_is_reported_by_stats_and_left_alone_by_clear(ws):
    """`cache clear` touches only a database of agentv's schema: a file it cannot read as one may be
    another program's, and it says so instead of deleting it."""
    ws.file(str(DB), b"garbage" * 200)
    result = invoke("cache", "stats")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2, lines
    # ours up to the colon; then SQLite's own words for what is wrong
    assert re.fullmatch(re.escape("error: cannot read the cache .agentv/cache/cache.sqlite3: ") + ".+", lines[0])
    assert lines[1] == "hint: another agentv may be writing it (try again), or remove a corrupt one yourself"
    result = invoke("cache", "clear")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == (
        "error: .agentv/cache/cache.sqlite3 is not an SQLite database: not an agentv cache, not touched"
    )
    assert DB.read_bytes() == b"garbage" * 200
    DB.unlink()
    fill(DB.parent, {"target": 1}, hits=1)  # a new one can be made
    assert invoke("cache", "stats").stdout.splitlines()[1] == "  target  1 entry, 1 hit"


def test_clear_leaves_another_programs_sqlite_file_alone(ws):
    DB.parent.mkdir(parents=True)
    other = sqlite3.connect(DB)
    other.execute("CREATE TABLE notes (text TEXT)")
    other.execute("INSERT INTO notes VALUES ('precious')")
    other.commit()
    other.close()
    result = invoke("cache", "clear")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "error: .agentv/cache/cache.sqlite3 is not an agentv cache (no agentv schema in it): not touched"
    )
    assert sqlite3.connect(DB).execute("SELECT text FROM notes").fetchall() == [("precious",)]


def test_cache_is_listed_among_the_commands(ws):
    result = invoke("--help")
    assert re.search(r"\n  cache +Show or clear the answer cache \(agentv eval --cache\)\.\n", result.stdout)


@pytest.mark.parametrize("command", ["stats", "clear"])
def test_a_cache_dir_that_is_a_file_is_a_usage_error(ws, command):
    ws.file("afile", "x")
    result = invoke("cache", command, "--cache-dir", "afile")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == "error: --cache-dir afile is a file, not a directory"
    assert Path("afile").read_text() == "x"
