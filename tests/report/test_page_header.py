"""The report page's gate line: the headline, the rule and why, each said once (the message's
own "gate failed: " is not repeated; the terminal and Markdown keep their wording)."""

from __future__ import annotations

import pytest

from agentv_py.models.manifest import GateInfo
from agentv_py.report.page_header import gate_parts


def line(gate: GateInfo) -> str:
    """The gate line as the page shows it (report.html.j2)."""
    headline, rule, said = gate_parts(gate)
    return f"{headline} — rule: {rule}" + (f" — {said}" if said else "")


@pytest.mark.parametrize(
    ("gate", "shown"),
    [
        (
            GateInfo(rule="every case passed", outcome="ok", passed=True),
            "gate passed — rule: every case passes",
        ),
        (
            GateInfo(
                rule="every case passed",
                outcome="gate_failed",
                passed=False,
                message="gate failed: 1 of 16 cases did not pass",
            ),
            "gate failed — rule: every case passes — 1 of 16 cases did not pass",
        ),
        (
            GateInfo(
                rule="mean score >= 0.9",
                outcome="gate_failed",
                passed=False,
                message="gate failed: mean score 0.812 < threshold 0.9",
            ),
            "gate failed — rule: mean score >= 0.9 — mean score 0.812 < threshold 0.9",
        ),
        (
            GateInfo(
                rule="every gate holds (2 gates)",
                outcome="gate_failed",
                passed=False,
                message="gate failed: 1 gate of 2 failed",
            ),
            "gate failed — rule: every gate holds (2 gates) — 1 gate of 2 failed",
        ),
        (
            GateInfo(
                rule="every case passed",
                outcome="errors",
                passed=False,
                message="1 case had a target error (the target call failed)",
            ),
            "gate failed — rule: every case passes — 1 case had a target error (the target call failed)",
        ),
        (
            GateInfo(rule="every case passed", outcome="interrupted", passed=False, message="the run was interrupted"),
            "gate failed — rule: every case passes — the run was interrupted",
        ),
    ],
    ids=["passed", "cases-did-not-pass", "threshold", "dataset-gates", "target-errors", "interrupted"],
)
def test_gate_line(gate, shown):
    assert line(gate) == shown
