"""Finding the programs that targets and judges name."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

_CACHE: dict[tuple[str, str, str], str | None] = {}

INSTALL_HINTS = {
    "uv": "uv is not installed: `pip install uv` (it is a dependency of agentv, so reinstalling agentv "
    "also brings it), or see https://docs.astral.sh/uv/getting-started/installation/",
}


def find_program(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Absolute path of a bare command name: on PATH, else beside the Python running agentv (so
    tools installed into agentv's virtual environment, such as uv, work without activating it).

    Cached per (name, PATH, cwd): subprocess would otherwise search PATH on every spawn. Names
    with a `/` are paths, not looked up (None).
    """
    if "/" in name:
        return None
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    key = (name, path, os.getcwd())
    if key not in _CACHE:
        _CACHE[key] = shutil.which(name, path=path) or shutil.which(name, path=os.path.dirname(sys.executable))
    return _CACHE[key]


def missing_program_message(name: str) -> str:
    return INSTALL_HINTS.get(name, f"command not found: {name} (not on PATH)")


def program_problem(
    program: str, cwd: Path, env: Mapping[str, str] | None = None, *, noun: str = "program", as_script: bool = False
) -> str | None:
    """Why `program` cannot be started from `cwd` with `env` (None when it can): a path (one with
    a `/`, relative to `cwd`) must be an executable file; a bare name must be found by
    `find_program` on the environment's PATH. The one check for targets and code judges alike:
    `noun` names the thing in messages, and `as_script` phrases the interpreter hint as a code
    judge's `script:` list instead of a command line."""
    if "/" not in program:
        return None if find_program(program, env) else missing_program_message(program)
    path = cwd / os.path.expanduser(program)
    if not path.is_file():
        where = "" if Path(program).is_absolute() else f" (looked in {cwd})"
        return f"{noun} not found: {program}{where}"
    if not os.access(path, os.X_OK):
        interpreter = "python3" if as_script or program.endswith(".py") else "sh"
        example = f"script: [{interpreter}, {program}]" if as_script else f"`{interpreter} {program}`"
        return f"not executable: {program}; run `chmod +x {program}`, or name its interpreter first, e.g. {example}"
    return None
