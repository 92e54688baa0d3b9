"""requirements.lock pins the whole dependency tree (base, every extra, dev), and the README's
commands install exactly it: every dependency pyproject.toml names is locked, and what is installed
is what is locked (scripts/check_latest.sh runs the suite on the newest releases instead)."""

from __future__ import annotations

import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from lock_diff import canonical, differences, locked  # noqa: E402

LOCK = ROOT / "requirements.lock"


def declared() -> set[str]:
    """The distributions pyproject.toml asks for, base and every extra (agentv-py's own extras aside)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    names = {canonical(re.match(r"[A-Za-z0-9._-]+", r)[0]) for r in requirements}  # type: ignore[index]
    return names - {"agentv-py"}


def test_every_declared_dependency_is_locked():
    assert declared() - set(locked(LOCK)) == set()


def test_the_readme_commands_install_from_the_lock():
    readme = (ROOT / "README.md").read_text()
    installs = re.findall(r"\.venv/bin/pip install [^&\n]*", readme)
    assert installs and all("-c requirements.lock" in command for command in installs), installs
    assert "-c requirements.lock -e '.[dev]'" in (ROOT / ".ci" / "run").read_text()


def test_the_installed_versions_are_the_locked_ones():
    found = differences(LOCK)
    if os.environ.get("AGENTV_UNLOCKED"):
        pytest.skip(f"scripts/check_latest.sh: {len(found)} of the installed packages differ from the lock")
    assert found == []
