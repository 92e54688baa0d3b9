"""AgentV's main-branch (5.1 and later) syntax in targets files, refused with one line each: the
release that brought it and what AgentV v4.42 (the format read here) wrote instead
(docs/agentv-compat.md, "Main-branch syntax")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.agentv_values import strings_containing
from agentv_py.loading.source import Source

# target key -> (release, what v4.42 wrote)
TARGET_KEYS: dict[str, tuple[str, str]] = {
    "id": ("5.1.0", "name the target with `name:`"),
    "config": ("5.1.0", "put the provider's keys (endpoint, api_key, model, command, ...) on the target itself"),
    "runtime": ("5.1.0", "remove it: targets run on this host"),
}
ENV_REFERENCE = "{{ env."
PROVIDERS_FILE = Path(".agentv") / "providers.yaml"


def main_branch_problems(source: Source, raw: Any) -> list[Problem]:
    """Each use of main-branch syntax in a parsed targets file, located."""
    problems: list[Problem] = []
    targets = raw.get("targets") if isinstance(raw, dict) else None
    for i, target in enumerate(targets if isinstance(targets, list) else []):
        if not isinstance(target, dict):
            continue
        for key, (version, instead) in TARGET_KEYS.items():
            if key in target and not (key == "id" and "name" in target):
                problems.append(
                    source.problem(
                        ["targets", i, key],
                        f"target key '{key}' is AgentV {version}'s syntax (after v4.42.4, the format read here); "
                        f"instead, {instead}",
                    )
                )
    for where, _ in strings_containing(raw, ENV_REFERENCE):
        problems.append(
            source.problem(
                where,
                "{{ env.NAME }} is AgentV 5.1.0's syntax (after v4.42.4, the format read here); "
                "instead, write ${{ NAME }}",
            )
        )
    return sorted(problems, key=lambda p: p.line or 0)


def providers_file_hint(directories: list[Path]) -> str | None:
    """When a searched directory has AgentV 5.1's `.agentv/providers.yaml`: what to do instead."""
    for directory in directories:
        if (directory / PROVIDERS_FILE).is_file():
            return (
                f"{directory / PROVIDERS_FILE} is AgentV 5.1.0's file (after v4.42.4, the format read here) and "
                "is not read; instead, name the targets in .agentv/targets.yaml"
            )
    return None
