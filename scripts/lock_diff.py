"""Print each package whose installed version differs from requirements.lock, one line each: a
locked package at another version (or not installed), and an installed package the lock does not
name (what the newest releases would add). Exit 0. Used by scripts/check_latest.sh and
tests/test_lock.py."""

from __future__ import annotations

import importlib.metadata
import re
import sys
import sysconfig
from pathlib import Path

try:
    from packaging.markers import Marker
except ImportError:  # a base install: pip carries its own copy
    from pip._vendor.packaging.markers import Marker

LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)\s*(?:;\s*(.+))?$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(path: Path) -> dict[str, str]:
    """name -> version of every line of the lock whose marker holds for this interpreter."""
    versions = {}
    for line in path.read_text().splitlines():
        match = LINE.match(line.strip())
        if match and (match[3] is None or Marker(match[3]).evaluate()):
            versions[canonical(match[1])] = match[2]
    return versions


# In every virtual environment, never locked: the installer, and agentv itself.
NOT_LOCKED = frozenset({"pip", "setuptools", "wheel", "agentv-py"})


def installed() -> dict[str, str]:
    """name -> version of the distributions installed in this environment's site-packages (not
    those a package vendors and puts on sys.path, such as Ray's thirdparty_files)."""
    paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    return {canonical(d.metadata["Name"] or ""): d.version for d in importlib.metadata.distributions(path=paths)}


def differences(path: Path) -> list[tuple[str, str | None, str | None]]:
    """(name, locked version or None, installed version or None) for each package that differs."""
    pinned, present = locked(path), installed()
    found: list[tuple[str, str | None, str | None]] = [
        (name, version, present.get(name)) for name, version in sorted(pinned.items()) if present.get(name) != version
    ]
    found += [(name, None, present[name]) for name in sorted(set(present) - set(pinned) - NOT_LOCKED - {""})]
    return found


if __name__ == "__main__":
    for name, version, installed in differences(Path(sys.argv[1] if len(sys.argv) > 1 else "requirements.lock")):
        print(f"  {name}: locked {version or '(not locked)'}, installed {installed or '(none)'}")
