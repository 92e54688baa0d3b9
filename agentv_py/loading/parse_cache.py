"""The content-hash parse cache of YAML files: a large dataset is parsed once, not per run.

The cache holds only the parsed data; validation always runs in full. Any cache problem falls
back to parsing. A dataset file read with its cases packed (`read_yaml(pack_cases=True)`) of
SPOOL_MIN bytes or more is never read whole: it is hashed in blocks, parsed from the file, and its
packed cases are written to disk as they are parsed, a chunk at a time (`case_spool`), into its
cache entry (or, without a cache, an unlinked temporary file); a cache hit reads the entry back a
chunk at a time. Other files are read whole and cached as one `marshal` value.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import yaml

from agentv_py.loading.case_spool import SpoolWriter, read_spool

CACHE_VERSION = "3"  # 2: files are refused by the bounded composer before they are cached; 3: tags
CACHE_MAX_ENTRIES = 32
SPOOL_MIN = 64 * 1024  # bytes: a smaller file is parsed from memory, and cached only whole
_BLOCK = 1024 * 1024

_KEY_DIGITS = 40  # hex digits of a cache key (160 bits)
Opener = Callable[[], IO[bytes]]


def _hash(data: bytes = b"") -> Any:
    """The digest cache keys are made with: SHA-256, which processors hash in hardware (SHA
    extensions), two to three times as fast as BLAKE2b here."""
    return hashlib.sha256(data)


Load = Callable[[bytes | Opener, bool, SpoolWriter | None], Any]


def cache_dir() -> Path | None:
    """Where parsed YAML is cached (None when AGENTV_NO_CACHE is set)."""
    if os.environ.get("AGENTV_NO_CACHE"):
        return None
    base = os.environ.get("AGENTV_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agentv"
    )
    return Path(base) / "yaml"


def _key(digest: Any, pack_cases: bool) -> str:
    digest.update(f"{CACHE_VERSION}/{yaml.__version__}/{int(pack_cases)}".encode())
    return str(digest.hexdigest())[:_KEY_DIGITS]


def _prune(directory: Path) -> None:
    entries = [*directory.glob("*.marshal"), *directory.glob("*.cases")]
    entries.sort(key=lambda p: p.stat().st_mtime)
    for old in entries[:-CACHE_MAX_ENTRIES]:
        old.unlink(missing_ok=True)


def parse_cached(content: bytes, pack_cases: bool, load: Load) -> Any:
    """`load(content)`, memoised on disk by content hash (files under SPOOL_MIN bytes: not cached)."""
    directory = cache_dir()
    if directory is None or len(content) < SPOOL_MIN:
        return load(content, pack_cases, None)
    entry = directory / f"{_key(_hash(content), pack_cases)}.marshal"
    try:
        cached = entry.read_bytes()
        with collector_paused():
            return marshal.loads(cached)
    except (OSError, ValueError, EOFError, TypeError):
        pass
    data = load(content, pack_cases, None)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(marshal.dumps(data))
        os.replace(temporary, entry)
        _prune(directory)
    except (OSError, ValueError):
        pass
    return data


class _HashingReader:
    """A file read by the YAML parser, hashed as it is read (the file the cache key was made of?)."""

    name = "<byte string>"  # as marks name bytes read whole

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.digest = _hash()

    def read(self, size: int = -1) -> bytes:
        block = self._handle.read(size)
        self.digest.update(block)
        return block


def file_key(path: Path, pack_cases: bool) -> str:
    """The cache key of a file's content, hashed in blocks."""
    digest = _hash()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return _key(digest, pack_cases)


def parse_spooled(path: Path, load: Load) -> Any:
    """A dataset file parsed with its cases packed and spooled (module doc), from its cache
    entry when there is a whole one. `load(opener, True, writer)` parses the file `opener` opens
    (once more when its fast path gives up), packing each case into `writer`."""
    directory = cache_dir()
    entry: Path | None = None
    key = ""
    if directory is not None:
        key = file_key(path, True)
        entry = directory / f"{key}.cases"
        try:
            handle = entry.open("rb")
        except OSError:
            pass
        else:
            try:
                found = read_spool(handle)
            except OSError:
                found = None
            if found is not None:
                return found[0]
            handle.close()
    temporary: Path | None = None
    spool: IO[bytes]
    try:
        if entry is None:
            raise OSError("no cache")
        entry.parent.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        spool = temporary.open("w+b")
    except OSError:
        temporary = None
        spool = tempfile.TemporaryFile(prefix="agentv-parse-")  # noqa: SIM115 - lives as long as the cases
    readers: list[_HashingReader] = []
    files: list[IO[bytes]] = []

    def opener() -> IO[bytes]:
        files.append(path.open("rb"))
        readers.append(_HashingReader(files[-1]))
        return readers[-1]  # type: ignore[return-value]  # read() is all the parser uses

    try:
        writer = SpoolWriter(spool)
        data = writer.finish(load(opener, True, writer))
    except BaseException:
        spool.close()
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise
    finally:
        for opened in files:
            opened.close()
    if temporary is not None and entry is not None:
        try:
            if _key(readers[-1].digest, True) == key:  # the file did not change since it was hashed
                os.replace(temporary, entry)
                _prune(entry.parent)
            else:
                temporary.unlink()
        except OSError:
            pass
    return data


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused within the block (as it was after it): parsing or
    unpacking a dataset builds hundreds of thousands of objects, none of them garbage, and the
    collections those allocations trigger would take longer than the work itself."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def made_old() -> None:
    """Every object the cyclic collector tracks moved to its oldest generation at once (O(1):
    `gc.freeze` then `gc.unfreeze`), so that young collections stop traversing them: for a chunk
    of cases just unpacked, which lives on while it is validated and holds no cycle, each young
    collection would otherwise walk all of it again (about as long as reading it took). Not done
    while anything is frozen (someone else's `gc.freeze`): unfreezing would thaw that too."""
    if not gc.get_freeze_count():
        gc.freeze()
        gc.unfreeze()
