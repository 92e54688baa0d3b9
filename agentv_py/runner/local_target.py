"""What every target run as local processes shares (`LocalTarget`): its working directory,
environment, secrets to mask, output cap; the checks of a command line before it is run; reading
{OUTPUT_FILE}."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from agentv_py.locate import working_dir
from agentv_py.models.targets import (
    CliTarget,
    PythonTarget,
)
from agentv_py.process.environ import environ_bytes, environ_snapshot
from agentv_py.process.redact import Redactor


class LocalTarget:
    """What every target run as local processes has: its name, working directory, environment,
    secrets to mask, output cap and scratch directory."""

    def __init__(
        self,
        config: CliTarget | PythonTarget,
        dataset_dir: Path,
        work_dir: Path,
        secrets: list[str] | None,
        output_cap: int,
    ) -> None:
        self.name = config.name
        self.vision = config.vision
        self.cwd = str(working_dir(dataset_dir, config.cwd))
        self.work_dir = work_dir
        self.redact = Redactor(secrets or [])
        self.output_cap = output_cap
        self.env = target_env(config)


MISSING_OUTPUT = "did not write {OUTPUT_FILE}"
STRAYS_SHOWN = 3  # files written beside a missing {OUTPUT_FILE} that its error names


def written_beside(output_path: str, suffix: str) -> list[str]:
    """Files a call wrote beside its {OUTPUT_FILE} under another ending (`c1.1.0.out.json`,
    `c1.1.0.json`: a tool that chose its own suffix), oldest name first."""
    path = Path(output_path)
    stem = path.name[: -len(suffix)] if suffix and path.name.endswith(suffix) else path.stem
    try:
        names = sorted(entry.name for entry in os.scandir(path.parent) if entry.name.startswith(stem + "."))
    except OSError:
        return []
    return [str(path.parent / name) for name in names if name != path.name]


def missing_output_hint(output_path: str, strays: list[str]) -> str:
    """What a missing-output error adds when the call wrote files beside it: first the
    `output_suffix` that would match (a summary that shortens the error keeps it), then what was
    written instead and where the output was expected."""
    shown = ", ".join(Path(stray).name for stray in strays[:STRAYS_SHOWN])
    more = f" and {len(strays) - STRAYS_SHOWN} more" if len(strays) > STRAYS_SHOWN else ""
    ending = Path(strays[0]).suffix
    return (
        f": set output_suffix: {ending} on the target (the tool chooses its own ending: it wrote "
        f"{shown}{more} beside {output_path})"
    )


def read_output_file(path: str, cap: int) -> tuple[bytes | None, str | None]:
    """An {OUTPUT_FILE}'s bytes, or (None, what went wrong: MISSING_OUTPUT, or how it was
    written wrongly). Never follows a symlink, never blocks on a FIFO: only a regular file of at
    most `cap` bytes is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None, MISSING_OUTPUT
    except OSError as exc:
        kind = "a symlink" if exc.errno == errno.ELOOP else "a socket" if exc.errno == errno.ENXIO else None
        if kind:
            return None, f"wrote {{OUTPUT_FILE}} as {kind}, not a regular file"
        return None, f"wrote an unreadable {{OUTPUT_FILE}}: {exc.strerror}"
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a directory"
                if stat.S_ISDIR(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "a device"
            )
            return None, f"wrote {{OUTPUT_FILE}} as {kind}, not a regular file"
        with open(fd, "rb", closefd=False) as handle:
            raw = handle.read(cap + 1)
    finally:
        os.close(fd)
    if len(raw) > cap:
        return None, f"wrote more than the {cap // (1024 * 1024)} MB cap"
    return raw, None


# Linux refuses one argument of MAX_ARG_STRLEN (32 pages) bytes or more, its NUL included.
MAX_ARG_BYTES: int | None = 32 * 4096 - 1 if sys.platform.startswith("linux") else None


def command_line_problem(argv: list[str], env: Mapping[str, str] | None, values: dict[str, list[str]]) -> str | None:
    """Why the operating system would refuse this command line (E2BIG), said before trying: an
    argument over MAX_ARG_BYTES, or arguments and environment (`env`; None: agentv's own) over
    ARG_MAX. The message names the largest placeholder value and what to do instead."""
    sizes = [len(os.fsencode(arg)) for arg in argv]
    environ = environ_snapshot() if env is None else env
    env_bytes = environ_bytes(environ)
    total = sum(size + 1 for size in sizes) + env_bytes + 8 * (len(argv) + len(environ) + 2)
    arg_max = os.sysconf("SC_ARG_MAX")
    if MAX_ARG_BYTES is not None and max(sizes, default=0) > MAX_ARG_BYTES:
        over = f"an argument can hold at most {MAX_ARG_BYTES} bytes (Linux MAX_ARG_STRLEN)"
    elif total > arg_max:
        over = f"the arguments and environment come to {total} bytes, over the {arg_max} the system allows (ARG_MAX)"
    else:
        return None
    name, words = max(values.items(), key=lambda item: sum(len(w.encode()) for w in item[1]))
    size = sum(len(w.encode()) for w in words)
    instead = "pass long text in a file ({FILES})"
    if name == "GUIDELINES":
        instead = "read the guideline files from {FILES} instead"
    return f"{{{name}}} is {size} bytes and {over}: {instead}"


def target_env(config: CliTarget | PythonTarget) -> dict[str, str] | None:
    """The environment of a cli target's commands (cases and healthcheck alike): agentv's own
    plus the target's `env:` (None: inherit agentv's unchanged)."""
    return {**environ_snapshot(), **config.env} if config.env else None
