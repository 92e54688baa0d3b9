"""The report page's header: the run (from its manifest when there is one, else from the rows)
and the gate line, said in the page's own words (the terminal and Markdown have theirs)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentv_py.models.manifest import GateInfo, RunManifest

_SAID_AGAIN = "gate failed: "  # how a failed gate's message starts: the page's headline says it already
_RULES = {"every case passed": "every case passes"}  # the rule as a rule, not as an outcome


def gate_parts(gate: GateInfo) -> tuple[str, str, str]:
    """The page's gate line in three parts: the headline ("gate passed", "gate failed"), the rule
    and why it failed (the message without its own "gate failed: "; "" when it passed), shown as
    "gate failed — rule: every case passes — 1 of 16 cases did not pass"."""
    said = gate.message.removeprefix(_SAID_AGAIN) if not gate.passed else ""
    return ("gate passed" if gate.passed else "gate failed"), _RULES.get(gate.rule, gate.rule), said


def page_header(
    manifest: RunManifest | None, datasets: Iterable[str], targets: Iterable[str], results: Path
) -> dict[str, Any]:
    """The run header: from the manifest when there is one, else from the rows' datasets and
    targets."""
    names = list(datasets)
    header: dict[str, Any] = {
        "results": str(results),
        "dataset": ", ".join(names) if names else "-",
        "several_datasets": len(names) > 1,
        "target": ", ".join(sorted(targets)) or "-",
        "tool": None,
        "run_id": None,
        "started_at": None,
        "ended_at": None,
        "status": None,
        "dataset_path": None,
        "gate": None,
        "gate_line": None,
    }
    if manifest is not None:
        header.update(
            tool=f"{manifest.tool.get('name', 'agentv')} {manifest.tool.get('version', '')}".strip(),
            run_id=manifest.run_id,
            started_at=manifest.started_at,
            ended_at=manifest.ended_at,
            status=manifest.status,
            dataset_path=manifest.dataset.path,
            dataset=manifest.dataset.name if not header["several_datasets"] else header["dataset"],
            target=f"{manifest.target.name} ({manifest.target.provider})",
            gate=manifest.gate,
            gate_line=gate_parts(manifest.gate) if manifest.gate is not None else None,
        )
    return header
