"""What changed in a target between two runs (`target_diff`), from the fingerprints their
manifests record (`models.manifest.TargetFingerprint`): the one comparison behind `agentv eval
--resume / --rerun-failed / --retry-errors` and `agentv merge`, so that rows of two versions of an
extractor are never put together unless `--allow-target-change` says so."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from agentv_py.models.manifest import TargetInfo
from agentv_py.report.reuse import short
from agentv_py.report.text import visible

LINES_SHOWN = 10  # lines of a diff shown before "... and N more"

ALLOW_HINT = "--allow-target-change"
# a manifest without the target's fingerprint: an older agentv's, or a re-score's of rows whose run is unknown
UNRECORDED = "does not record the target's fingerprint (an older agentv wrote it, or its target is unknown)"


def target_diff(old: TargetInfo, new: TargetInfo) -> list[str]:
    """What differs between the target that made some rows (`old`) and another one (`new`: the
    target now, or another shard's), one short line a part, never a value (an environment
    variable's may be a secret): `command: changed`, `setting cwd: changed`, `script
    extract.py: changed` (or `added`, `removed`), `env MODEL: changed` (or `added`, `removed`),
    and `name: 't' → 'u'` when more than the name differs. When either has no fingerprint (a
    manifest of an older agentv), the whole configs' hashes are compared instead: `config: changed
    (sha256 … → …)`. Empty: the same target. At most LINES_SHOWN lines, then `... and N more`."""
    before, after = old.fingerprint, new.fingerprint
    lines: list[str] = []
    if before is None or after is None:
        if old.sha256 != new.sha256:
            lines.append(
                f"config: changed (sha256 {short(old.sha256) or 'unknown'} → {short(new.sha256) or 'unknown'})"
            )
    else:
        if before.command != after.command:
            lines.append("command: changed")
        lines += _parts("setting", before.settings, after.settings)
        lines += _parts("script", before.scripts, after.scripts)
        lines += _parts("env", before.env, after.env)
    if lines and old.name != new.name:
        lines.insert(0, f"name: '{visible(old.name)}' → '{visible(new.name)}'")
    if len(lines) > LINES_SHOWN:
        lines[LINES_SHOWN:] = [f"... and {len(lines) - LINES_SHOWN} more"]
    return lines


def _parts(part: str, old: Mapping[str, str], new: Mapping[str, str]) -> Iterator[str]:
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            yield f"{part} {visible(key)}: removed"
        elif key not in old:
            yield f"{part} {visible(key)}: added"
        elif old[key] != new[key]:
            yield f"{part} {visible(key)}: changed"


def indented(lines: list[str], depth: int = 2) -> str:
    """A diff's lines as a message shows them under its first line."""
    return "\n".join(" " * depth + line for line in lines)
