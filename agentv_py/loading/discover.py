"""The files a command's PATH arguments stand for: a file as given, a glob's matches, and below a
directory every dataset (docs/cli.md, "Several files and directories").

Below a directory, a dataset is a `.yaml` / `.yml` file with a top-level `evalcases:` key, or a
`.jsonl` file whose first line is a case (an object with an `id`, not a result row's `eval_id`)
or that has a same-name `.yaml` sidecar. Hidden directories (`.agentv`, `.git`, `.venv`) and
`node_modules` are not entered; links are not followed. A YAML file is read a line at a time up
to its `evalcases:`; of a JSONL file, its first line.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
_HEAD_BYTES = 64 * 1024  # how much of a file is read to tell whether it is a dataset
_GLOB_CHARS = frozenset("*?[")


@dataclass
class Expanded:
    """The files to check, in order, and the arguments that stood for none (with why)."""

    files: list[Path] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)  # (argument, why nothing)


def expand_paths(arguments: Sequence[Path]) -> Expanded:
    """Each argument: a directory → the datasets below it (sorted); a pattern with `*`, `?` or
    `[` that names no file → its matches (sorted, `**` across directories); anything else as
    given (a missing file is the loader's to report). A file reached twice is listed once."""
    out = Expanded()
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = Path(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            out.files.append(path)

    for argument in arguments:
        text = str(argument)
        if argument.is_dir():
            found = sorted(datasets_below(argument))
            if not found:
                out.empty.append((text, "no dataset below it (a .yaml with evalcases:, or a .jsonl of cases)"))
            for path in found:
                add(path)
        elif not argument.exists() and _GLOB_CHARS & set(text):
            import glob  # here: a plain path (the usual argument) needs no pattern matching

            matches = sorted(Path(match) for match in glob.glob(text, recursive=True) if Path(match).is_file())
            if not matches:
                out.empty.append((text, "the pattern matches no file"))
            for path in matches:
                add(path)
        else:
            add(argument)
    return out


def datasets_below(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = [name for name in dirs if not name.startswith(".") and name not in SKIPPED_DIRS]
        for name in files:
            path = Path(root) / name
            if _regular(path) and is_dataset(path):  # never a FIFO (opening one would wait forever)
                yield path


def _regular(path: Path) -> bool:
    """A regular file, not a link to one."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_dataset(path: Path) -> bool:
    """Whether a file found below a directory is a dataset (see the module's rule)."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        if path.with_suffix(".jsonl").is_file():
            return False  # the sidecar of a JSONL dataset: checked with it
        return _has_line(path, (b"evalcases:", b'"evalcases":'))
    if suffix == ".jsonl":
        if path.with_suffix(".yaml").is_file():
            return True
        first = next((line for line in _head(path).splitlines() if line.strip()), "")
        try:
            data = json.loads(first)
        except ValueError:
            return False
        return isinstance(data, dict) and "id" in data and "eval_id" not in data
    return False


def _has_line(path: Path, starts: tuple[bytes, ...]) -> bool:
    """Whether a line of the file starts with one of `starts` (read a line at a time, up to the
    first that does)."""
    try:
        with path.open("rb") as handle:
            return any(line.startswith(starts) for line in iter(lambda: handle.readline(_HEAD_BYTES), b""))
    except OSError:
        return False


def _head(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
