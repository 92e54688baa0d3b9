"""`agentv validate` runs no case: it keeps only the prepared cases the checks before a run read
back (`PreparedCases(flagged_only=True)`: those with images, their own evaluators, rubrics, URL
files or `skip:`), ids and flags for all of them, and finds what a full load finds."""

from __future__ import annotations

import pytest

from agentv_py.loading import load_dataset
from agentv_py.prepared import OWN_EVALUATORS, PreparedCases

SUITE = """\
execution:
  target: mock
  evaluators:
    - {type: field_accuracy, fields: [{path: a}]}
evalcases:
"""


def case(i: int, extra: str = "") -> str:
    return (
        f"  - id: c{i}\n    input_messages: [{{role: user, content: doc {i}}}]\n"
        f"    expected_messages: [{{role: assistant, content: {{a: {i}}}}}]\n{extra}"
    )


OWN = "    evaluators:\n      - {type: field_accuracy, fields: [{path: a}]}\n"


@pytest.fixture
def chunks_of_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PreparedCases, "chunk_cases", 2)


def test_only_flagged_cases_are_kept_and_every_id(ws, chunks_of_two):
    path = ws.file("dataset.yaml", SUITE + "".join(case(i, OWN if i in (1, 4) else "") for i in range(6)))
    full = load_dataset(path)
    lean = load_dataset(path, flagged_only=True)
    assert lean.cases.ids == full.cases.ids == [f"c{i}" for i in range(6)]
    assert lean.cases.where(OWN_EVALUATORS) == full.cases.where(OWN_EVALUATORS) == [1, 4]
    assert [lean.cases[i].case.id for i in (1, 4)] == ["c1", "c4"]
    assert lean.cases[4].evaluators == full.cases[4].evaluators
    with pytest.raises(LookupError, match="case 2 has no flags: not kept"):
        lean.cases[2]


def test_without_suite_evaluators_every_case_is_kept(ws, chunks_of_two):
    """Every case may then get the default judge: the checks read them all back."""
    text = SUITE.replace("  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n", "")
    path = ws.file("dataset.yaml", text + "".join(case(i) for i in range(5)))
    lean = load_dataset(path, flagged_only=True)
    assert [prepared.case.id for prepared in lean.cases] == [f"c{i}" for i in range(5)]
