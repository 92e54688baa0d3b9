"""`agentv cache stats` and `agentv cache clear`: the answer cache of `agentv eval --cache`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentv_py.cli.base import EXIT_CONFIG, EXIT_INTERNAL, EXIT_OK, app, boundary
from agentv_py.cli.help import HelpGroup, with_exit_codes

if TYPE_CHECKING:
    import sqlite3

CACHE_EXIT_CODES = (
    (EXIT_OK, "done"),
    (EXIT_CONFIG, "usage error, or the cache database cannot be read or written (locked, read-only)"),
    (EXIT_INTERNAL, "internal error (a bug: traceback shown)"),
)
CacheCommand = with_exit_codes("CacheCommand", CACHE_EXIT_CODES)


class CacheGroup(HelpGroup):
    exit_codes = CACHE_EXIT_CODES


cache_app = typer.Typer(
    name="cache",
    cls=CacheGroup,
    help="The answer cache of `agentv eval --cache`: target answers and judge replies.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(cache_app, name="cache", short_help="Show or clear the answer cache (agentv eval --cache).")

_DIR_HELP = "Cache directory.  [default: .agentv/cache at the root of the current directory's repository, else here]"


def _directory(cache_dir: Path | None) -> Path:
    from agentv_py.runner.cache_store import default_cache_dir

    if cache_dir is not None:
        if cache_dir.exists() and not cache_dir.is_dir():
            from agentv_py.errors import AgentvError
            from agentv_py.report.text import visible

            raise AgentvError(
                f"--cache-dir {visible(str(cache_dir))} is a file, not a directory",
                hint="point --cache-dir at an agentv cache directory (it holds cache.sqlite3)",
            )
        return cache_dir
    found = default_cache_dir(Path.cwd())  # the project's, as eval finds it: shown relative to here
    return Path(os.path.relpath(found)) if found.is_relative_to(Path.cwd().resolve()) else found


def _failed(what: str, path: Path, exc: sqlite3.Error) -> Exception:
    """The error (exit 2) for a cache database that cannot be read or written."""
    from agentv_py.errors import AgentvError
    from agentv_py.report.text import visible

    return AgentvError(
        f"cannot {what} the cache {visible(str(path))}: {exc}",
        hint="another agentv may be writing it (try again), or remove a corrupt one yourself",
    )


@cache_app.command(cls=CacheCommand, short_help="Entries by kind, size on disk, hits.")
@boundary
def stats(
    cache_dir: Path | None = typer.Option(None, "--cache-dir", metavar="DIR", help=_DIR_HELP),
) -> int:
    """Entries by kind (target answers, judge replies), size on disk, and how often they were reused."""
    import sqlite3  # here, not at the top: every other command would import it too

    from agentv_py.report.text import visible
    from agentv_py.runner.cache_store import DATABASE_NAME, cache_stats

    directory = _directory(cache_dir)
    try:
        found = cache_stats(directory)
    except sqlite3.Error as exc:
        raise _failed("read", directory / DATABASE_NAME, exc) from None
    where = visible(str(found.path))
    if not found.exists:
        print(f"cache: {where} (empty: nothing stored yet)")
        return EXIT_OK
    print(f"cache: {where} ({format_size(found.size_bytes)} on disk)")
    for kind, counts in found.kinds.items():
        entries = f"{counts.entries} {'entry' if counts.entries == 1 else 'entries'}"
        print(f"  {kind:<7} {entries}, {counts.hits} {'hit' if counts.hits == 1 else 'hits'}")
    return EXIT_OK


@cache_app.command(cls=CacheCommand, short_help="Remove stored entries (all, or of one kind).")
@boundary
def clear(
    kind: str | None = typer.Option(None, "--kind", metavar="KIND", help="Only this kind: target or judge."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", metavar="DIR", help=_DIR_HELP),
) -> int:
    """Remove stored target answers and judge replies: the next run calls again."""
    import sqlite3

    from agentv_py.errors import AgentvError
    from agentv_py.report.text import visible
    from agentv_py.runner.cache_store import DATABASE_NAME, KINDS, NotOurs, clear_cache

    if kind is not None and kind not in KINDS:
        raise AgentvError(f"invalid --kind {kind!r}: choose target or judge")
    directory = _directory(cache_dir)
    try:
        removed = clear_cache(directory, next((k for k in KINDS if k == kind), None))
    except sqlite3.Error as exc:
        raise _failed("clear", directory / DATABASE_NAME, exc) from None
    except NotOurs as exc:
        raise AgentvError(visible(str(exc)), hint="point --cache-dir at an agentv cache directory") from None
    what = f"{kind} entries" if kind else "entries"
    noun = what if removed != 1 else what.replace("entries", "entry")
    print(f"cache: removed {removed} {noun} from {visible(str(directory / DATABASE_NAME))}")
    return EXIT_OK


def format_size(size: int) -> str:
    """A size for people: bytes below 1 KB, else KB or MB with one decimal."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
