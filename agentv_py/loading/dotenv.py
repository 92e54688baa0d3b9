"""`.env` files, read before targets are resolved, as AgentV read them (agentv-reference §2.2).

Every `.env` in the directories a targets file is looked for in (`targets_search_dirs`: the
dataset's directory up to the repository root, then the current directory when inside the
project) is applied to the process environment, outermost first and never overriding a variable
that is already set: a variable in the environment wins, then the outermost file's value.
Values are taken literally (no `${VAR}` expansion, as AgentV's dotenv did not expand).
"""

from __future__ import annotations

import os
import stat
from collections.abc import MutableMapping
from pathlib import Path

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.source import display_path
from agentv_py.locate import targets_search_dirs

MAX_DOTENV_BYTES = 1024 * 1024


def dotenv_files(dataset_dir: Path) -> list[Path]:
    """The `.env` files that apply to a dataset, innermost first (anything named `.env` but a
    directory: a FIFO or a device is refused when read, never opened for reading blindly)."""
    return [
        d / ".env"
        for d in targets_search_dirs(dataset_dir)
        if os.path.lexists(d / ".env") and not (d / ".env").is_dir()
    ]


def _read(path: Path) -> dict[str, str]:
    """The variables of one `.env` file: a regular file of at most 1 MB of UTF-8 text."""
    from dotenv import dotenv_values  # lazy: only runs that read a targets file

    shown = display_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ConfigError([Problem(shown, None, "", f"cannot read .env file: {exc.strerror}")]) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError([Problem(shown, None, "", "a .env file must be a regular file")])
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_DOTENV_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_DOTENV_BYTES:
        raise ConfigError([Problem(shown, None, "", "a .env file must be at most 1 MB")])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"a .env file must be UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise ConfigError([Problem(shown, None, "", message)]) from None
    import io

    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


def apply_dotenv(dataset_dir: Path, environ: MutableMapping[str, str] | None = None) -> list[Path]:
    """Apply the `.env` files of a dataset to `environ` (the process environment by default):
    outermost first, never overriding a variable already set. Returns the files applied.
    Raises ConfigError for a file that cannot be read."""
    target = os.environ if environ is None else environ
    files = dotenv_files(dataset_dir)
    for path in reversed(files):
        for key, value in _read(path).items():
            if key not in target:
                target[key] = value
    return files
