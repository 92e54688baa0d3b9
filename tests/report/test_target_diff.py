"""`target_diff`: what changed in a target between two runs, from their manifests' fingerprints,
one short line a part and never a value."""

from __future__ import annotations

import pytest

from agentv_py.models.manifest import TargetFingerprint, TargetInfo
from agentv_py.report.target_diff import target_diff

BASE = TargetFingerprint(
    command="c" * 64,
    settings={"cwd": "1" * 64, "files_format": "2" * 64},
    scripts={"extract.py": "3" * 64, "../lib/util.py": "4" * 64},
    env={"MODEL": "5" * 64, "PATH": "6" * 64},
)


def _info(name: str = "t", sha256: str = "a" * 64, **changes: object) -> TargetInfo:
    fingerprint = None if changes.pop("unrecorded", False) else BASE.model_copy(update=changes)
    return TargetInfo(name=name, provider="cli", sha256=sha256, fingerprint=fingerprint)


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (_info(), []),
        (_info(sha256="b" * 64), []),  # a setting no answer depends on (a timeout): the fingerprint decides
        (_info(name="u"), []),  # renamed, nothing else: the same target (the cache agrees)
        (_info(command="d" * 64), ["command: changed"]),
        (_info(settings={"cwd": "9" * 64, "files_format": "2" * 64}), ["setting cwd: changed"]),
        (
            _info(scripts={"extract.py": "9" * 64, "helper.py": "8" * 64}),
            ["script ../lib/util.py: removed", "script extract.py: changed", "script helper.py: added"],
        ),
        (
            _info(env={"MODEL": "9" * 64, "DEBUG": "8" * 64}),
            ["env DEBUG: added", "env MODEL: changed", "env PATH: removed"],
        ),
        (_info(name="u", command="d" * 64), ["name: 't' → 'u'", "command: changed"]),
        (_info(env={**BASE.env, "EVIL\x1b[2J": "0" * 64}), ["env EVIL\\x1b[2J: added"]),
        (
            _info(env={**BASE.env, **{f"V{i:02}": "0" * 64 for i in range(12)}}),
            [f"env V{i:02}: added" for i in range(10)] + ["... and 2 more"],
        ),
    ],
    ids=[
        "same",
        "config-hash-only",
        "renamed-only",
        "command",
        "setting",
        "scripts",
        "env",
        "renamed-and-changed",
        "hostile-name",
        "long-diff-cut",
    ],
)
def test_target_diff_names_each_part_that_changed(new, expected):
    assert target_diff(_info(), new) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (_info(unrecorded=True), _info(), []),
        (_info(unrecorded=True), _info(sha256="b" * 64), [f"config: changed (sha256 {'a' * 12}… → {'b' * 12}…)"]),
        (_info(), _info(unrecorded=True, sha256="b" * 64), [f"config: changed (sha256 {'a' * 12}… → {'b' * 12}…)"]),
        (
            _info(unrecorded=True, sha256=""),
            _info(name="u", sha256="b" * 64),
            ["name: 't' → 'u'", f"config: changed (sha256 unknown → {'b' * 12}…)"],
        ),
    ],
    ids=["same-config", "config-changed", "unrecorded-now", "unknown-target"],
)
def test_without_a_fingerprint_the_configs_are_compared(old, new, expected):
    assert target_diff(old, new) == expected


def test_a_diff_never_holds_a_digest_of_a_value():
    changed = _info(command="d" * 64, scripts={"extract.py": "9" * 64}, env={"MODEL": "8" * 64})
    text = "\n".join(target_diff(_info(), changed))
    assert not any(digit * 8 in text for digit in "c3456789d")
