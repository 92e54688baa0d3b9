"""Finding the programs that targets and judges name."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

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
