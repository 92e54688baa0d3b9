"""The answer cache's database (docs/incremental.md): where it lies, when it is trusted, and the
store itself: safe for several threads and several agentv processes at once (one connection per
thread, WAL mode, a busy timeout). When the database cannot be used (corrupt, a directory that
cannot be written, a newer layout, not ours to trust) the run goes on without it and says so once;
a lookup or store that stays locked past the busy timeout is skipped. `cache_stats` and
`clear_cache` serve `agentv cache`."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from agentv_py.locate import repo_root

DEFAULT_CACHE_DIR = Path(".agentv") / "cache"  # under the project's root (`default_cache_dir`)


def default_cache_dir(base: Path) -> Path:
    """The cache of the project `base` lies in: `.agentv/cache` at its repository's root, else in
    `base` itself. Never the current directory's: a run started elsewhere finds the same cache,
    and a directory someone else prepared is not picked up by accident."""
    where = base.resolve()
    return (repo_root(where) or where) / DEFAULT_CACHE_DIR


DATABASE_NAME = "cache.sqlite3"
SCHEMA_VERSION = 1  # the tables' layout; a database of another layout is not used
BUSY_TIMEOUT_SECONDS = 5.0

T = TypeVar("T")
Kind = Literal["target", "judge"]
KINDS: tuple[Kind, ...] = ("target", "judge")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
"""


# SQLite's primary result codes (https://sqlite.org/rescode.html): what went wrong is read from
# the code, never from the message, whose words can change with any SQLite release.
_BUSY, _LOCKED, _READONLY, _CORRUPT, _CANTOPEN, _NOTADB = 5, 6, 8, 11, 14, 26


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _is_locked(exc: sqlite3.Error) -> bool:
    return _code(exc) in (_BUSY, _LOCKED)


@dataclass
class KindStats:
    entries: int = 0
    hits: int = 0


@dataclass
class CacheStats:
    """What `agentv cache stats` shows: entries and hits by kind, the database's size on disk."""

    path: Path
    exists: bool
    size_bytes: int = 0
    kinds: dict[str, KindStats] = field(default_factory=dict)


SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database and reads with it


def untrusted(path: Path) -> str | None:
    """Why the cache directory or database at `path` is not ours to trust (None: it is, or it does
    not exist yet): owned by another user, or writable by group or others. A cache is trusted
    only when nobody else could have put answers in it."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} cannot be checked: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link: a cache is used only where it lies"
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {info.st_uid}): a cache is trusted only when it is yours"
    if info.st_mode & 0o022:
        mode = stat.S_IMODE(info.st_mode)
        return f"{path} is writable by group or others (mode {mode:o}): not trusted (chmod go-w to use it)"
    return None


class CacheStore:
    """The database of one cache directory. `disabled` says why it is not used (None: it is);
    `notice` is told once when it becomes unusable, and once when a locked database makes it skip
    a lookup or a store."""

    def __init__(
        self,
        directory: Path,
        notice: Callable[[str], None] = lambda message: None,
        busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    ) -> None:
        self.directory = directory
        self.path = directory / DATABASE_NAME
        self.busy_timeout = busy_timeout
        self.disabled: str | None = None
        self._notice = notice
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._said_locked = False
        self._hits: dict[tuple[str, str], int] = {}  # counted in memory, written once at close
        self._open()

    # -- opening ---------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            if not self.directory.exists():  # ours alone whatever the umask: trusted next time
                self.directory.mkdir(parents=True, exist_ok=True)
                self.directory.chmod(0o700)
            created = not self.path.exists()
        except OSError as exc:
            self._disable(f"cannot create the cache directory {self.directory}: {exc.strerror or exc}")
            return
        if not os.access(self.directory, os.W_OK):
            self._disable(f"the cache directory {self.directory} is not writable")
            return
        side_files = [self.path.with_name(self.path.name + suffix) for suffix in SIDE_FILES]
        for path in (self.directory, self.path, *side_files):  # SQLite reads its side files too
            distrust = untrusted(path)
            if distrust is not None:  # a planted database could change a run's answers
                self._disable(distrust)
                return
        # Another agentv opening the same new database at the same moment can hold the lock that
        # turning WAL on needs, and SQLite does not wait for that one: try again until the timeout.
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                connection = self._connection()
                if connection is not None:
                    self._check_schema(connection)
                    if created:
                        for made in (self.path, *side_files):
                            with contextlib.suppress(OSError):
                                made.chmod(0o600)
                return
            except sqlite3.Error as exc:
                if not (_is_locked(exc) and time.monotonic() < deadline):
                    self._disable(self._describe(exc))
                    return
                self._forget_connection()
                time.sleep(0.02)

    def _forget_connection(self) -> None:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            return
        self._local.connection = None
        with self._lock:
            self._connections.remove(connection)
        with contextlib.suppress(sqlite3.Error):
            connection.close()

    def _check_schema(self, connection: sqlite3.Connection) -> None:
        found = self._schema_version(connection)
        if found is None:
            with connection:
                connection.executescript(_SCHEMA)
                connection.execute(
                    "INSERT OR IGNORE INTO meta (name, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            found = self._schema_version(connection)
        if found != str(SCHEMA_VERSION):
            self._disable(
                f"{self.path} has layout {found}, this agentv reads layout {SCHEMA_VERSION} "
                "(`agentv cache clear` starts a new one)"
            )

    @staticmethod
    def _schema_version(connection: sqlite3.Connection) -> str | None:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:
            return None
        row = connection.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        return str(row[0]) if row else None

    def _connection(self) -> sqlite3.Connection | None:
        """This thread's connection (made on first use), None when the store is disabled."""
        if self.disabled is not None:
            return None
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=self.busy_timeout, check_same_thread=False)
            try:
                mode = connection.execute("PRAGMA journal_mode").fetchone()
                if not mode or str(mode[0]).lower() != "wal":
                    mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()
                connection.execute("PRAGMA synchronous=NORMAL")
            except BaseException:
                connection.close()
                raise
            if not mode or str(mode[0]).lower() != "wal":
                connection.close()
                self._disable(f"{self.path} cannot be put in WAL mode (journal mode {mode[0] if mode else None})")
                return None
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _disable(self, why: str) -> None:
        if self.disabled is None:
            self.disabled = why
            self._notice(f"cache disabled: {why}; running without it")

    def _describe(self, exc: sqlite3.Error) -> str:
        text = str(exc)
        if _code(exc) in (_NOTADB, _CORRUPT):
            return f"{self.path} is not a usable SQLite database ({text}; remove it to start a new cache)"
        if _code(exc) in (_READONLY, _CANTOPEN):
            return f"cannot write {self.path} ({text})"
        return f"{self.path}: {text}"

    # -- use -------------------------------------------------------------------------------

    def _use(self, what: str, action: Callable[[sqlite3.Connection], T]) -> T | None:
        """`action` with this thread's connection, for one lookup or store. None when the store is
        disabled; a database locked past the busy timeout skips it (said once); any other database
        error disables the store (said once)."""
        try:
            connection = self._connection()
            return None if connection is None else action(connection)
        except sqlite3.Error as exc:
            if not _is_locked(exc):
                self._disable(self._describe(exc))
            elif not self._said_locked:
                self._said_locked = True
                self._notice(
                    f"cache: {self.path} stayed locked for {self.busy_timeout:g}s: a {what} was skipped "
                    "(later ones are tried again)"
                )
            return None

    def get(self, kind: Kind, key: str) -> str | None:
        """The stored value of `key`, or None (a miss, or the lookup was skipped)."""

        def lookup(connection: sqlite3.Connection) -> str | None:
            row = connection.execute("SELECT value FROM entries WHERE kind = ? AND key = ?", (kind, key)).fetchone()
            return row[0] if row is not None and isinstance(row[0], str) else None

        value = self._use("lookup", lookup)
        if value is not None:
            with self._lock:
                self._hits[(kind, key)] = self._hits.get((kind, key), 0) + 1
        return value

    def put(self, kind: Kind, key: str, value: str) -> None:
        """Store (or replace) the value of `key`; skipped when the database stays locked."""

        def store(connection: sqlite3.Connection) -> None:
            with connection:
                connection.execute(
                    "INSERT OR REPLACE INTO entries (kind, key, value, created, hits) VALUES (?, ?, ?, ?, 0)",
                    (kind, key, value, time.time()),
                )

        self._use("store", store)

    def delete(self, kind: Kind, key: str) -> None:
        """Forget one entry (a stored reply that no longer validates)."""

        def forget(connection: sqlite3.Connection) -> None:
            with connection:
                connection.execute("DELETE FROM entries WHERE kind = ? AND key = ?", (kind, key))

        with self._lock:
            self._hits.pop((kind, key), None)
        self._use("store", forget)

    def close(self) -> None:
        """Write the hit counts (skipped if the database stays locked) and close every connection."""
        with self._lock:
            hits, self._hits = self._hits, {}

        def count(connection: sqlite3.Connection) -> None:
            with connection:
                connection.executemany(
                    "UPDATE entries SET hits = hits + ? WHERE kind = ? AND key = ?",
                    [(n, kind, key) for (kind, key), n in hits.items()],
                )

        if hits:
            self._use("store", count)
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            with contextlib.suppress(sqlite3.Error):
                connection.close()
        self._local = threading.local()

    def __enter__(self) -> CacheStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cache_stats(directory: Path) -> CacheStats:
    """Entries and hits by kind and the size on disk (the database and its WAL files); raises
    sqlite3.Error when the database cannot be read. A cache never written reports nothing."""
    path = directory / DATABASE_NAME
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    stats = CacheStats(path, path.is_file(), sum(f.stat().st_size for f in files if f.is_file()))
    stats.kinds = {kind: KindStats() for kind in KINDS}
    if not stats.exists:
        return stats
    uri = f"{path.resolve().as_uri()}?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS)
    try:
        for kind, entries, hits in connection.execute(
            "SELECT kind, COUNT(*), COALESCE(SUM(hits), 0) FROM entries GROUP BY kind"
        ):
            stats.kinds[str(kind)] = KindStats(int(entries), int(hits))
    finally:
        connection.close()
    return stats


class NotOurs(Exception):
    """`agentv cache clear` was pointed at a file that is not an agentv cache: it is not touched."""


def clear_cache(directory: Path, kind: Kind | None = None) -> int:
    """Remove every entry (of `kind`, when given) and return how many there were. Only a database
    of agentv's schema is touched: another program's SQLite file, or a file that is not SQLite at
    all, raises NotOurs and stays as it is. Raises sqlite3.Error when the cache cannot be written
    (locked past the busy timeout, read-only)."""
    path = directory / DATABASE_NAME
    if path.is_symlink():
        raise NotOurs(f"{path} is a symbolic link, not an agentv cache: not touched")
    if not path.is_file():
        return 0
    connection = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_SECONDS)
    try:
        try:
            version = CacheStore._schema_version(connection)
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                raise
            raise NotOurs(f"{path} is not an SQLite database: not an agentv cache, not touched") from None
        if version is None:
            raise NotOurs(f"{path} is not an agentv cache (no agentv schema in it): not touched")
        (count,) = connection.execute(
            "SELECT COUNT(*) FROM entries" + (" WHERE kind = ?" if kind else ""), (kind,) if kind else ()
        ).fetchone()
        with connection:
            connection.execute("DELETE FROM entries" + (" WHERE kind = ?" if kind else ""), (kind,) if kind else ())
        if kind is None:
            connection.execute("VACUUM")
        return int(count)
    finally:
        connection.close()
