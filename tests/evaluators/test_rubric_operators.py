"""AgentV v4.42's rubric item keys: `operator` (correctness / contradiction: prompt text only) and
`min_score` (the 0-1 gate, over `required_min_score`): located load errors, the prompt text, the
gate, and one dataset run with a scripted judge on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset
from agentv_py.models.judges import RubricItem
from agentv_py.scoring.judging import rubric_listing, score_range_outcome, score_ranges_listing
from tests.chat_server import text
from tests.cli.test_eval import invoke, rows

CORRECTNESS = (
    "Correctness: mark satisfied only when the answer positively supports or fulfills the outcome. "
    "Omission or contradiction should not satisfy it."
)
CONTRADICTION = (
    "Contradiction guard: mark satisfied when the answer does not make a claim that contradicts the outcome. "
    "Do not require the answer to mention the outcome; mark unsatisfied only for incompatible claims."
)

# -- load errors ---------------------------------------------------------------------------------

OURS = "evalcases:\n  - id: c1\n    input: hi\n    evaluators:\n      - type: rubric\n        rubrics:\n"
CASE = "evalcases:\n  - id: c1\n    input: hi\n    rubrics:\n"
V442 = "tests:\n  - id: t1\n    input: hi\n    criteria: c\n    assertions:\n      - type: rubrics\n        criteria:\n"
WHERE = "evalcases[0].evaluators[0].rubrics[0]"
VALID = "Valid operators: correctness, contradiction"
INVALID = [
    (
        "unknown-operator",
        OURS + "          - {id: a, description: x, operator: negation}\n",
        f"dataset.yaml:7: {WHERE}.operator: Invalid operator: negation. {VALID}",
    ),
    (
        "operator-wrong-case",
        OURS + "          - {id: a, description: x, operator: Correctness}\n",
        f"dataset.yaml:7: {WHERE}.operator: Invalid operator: Correctness. {VALID}",
    ),
    (
        "operator-not-text",
        OURS + "          - {id: a, description: x, operator: 3}\n",
        f"dataset.yaml:7: {WHERE}.operator: Invalid operator: 3. {VALID}",
    ),
    (
        "case-rubric-operator",
        CASE + "      - {description: x, operator: contradicts}\n",
        f"dataset.yaml:5: evalcases[0].rubrics[0].operator: Invalid operator: contradicts. {VALID}",
    ),
    (
        "v4-42-criteria-operator",
        V442 + "          - {id: a, outcome: x, operator: guard}\n",
        f"dataset.yaml:8: tests[0].assertions[0].criteria[0].operator: Invalid operator: guard. {VALID}",
    ),
    (
        "min-score-zero",
        OURS + "          - {id: a, score_ranges: {0: x}, min_score: 0}\n",
        f"dataset.yaml:7: {WHERE}.min_score: min_score must be a number in (0, 1] (got 0)",
    ),
    (
        "min-score-0-10-scale",
        OURS + "          - {id: a, score_ranges: {0: x}, min_score: 8}\n",
        f"dataset.yaml:7: {WHERE}.min_score: min_score must be a number in (0, 1] (got 8)",
    ),
    (
        "min-score-text",
        OURS + "          - {id: a, score_ranges: {0: x}, min_score: '0.8'}\n",
        f"dataset.yaml:7: {WHERE}.min_score: min_score must be a number in (0, 1] (got '0.8')",
    ),
    (
        "min-score-boolean",
        OURS + "          - {id: a, score_ranges: {0: x}, min_score: true}\n",
        f"dataset.yaml:7: {WHERE}.min_score: min_score must be a number in (0, 1] (got True)",
    ),
    (
        "min-score-on-checklist-item",
        CASE + "      - {description: x, min_score: 0.8}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].min_score: min_score applies to an item with score_ranges "
        "(0-10 scoring); a checklist item uses required: true",
    ),
]


def _load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Any:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dataset.yaml").write_text(body)
    return load_dataset("dataset.yaml")


@pytest.mark.parametrize(("body", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_bad_operator_and_min_score_are_located_load_errors(tmp_path, monkeypatch, body, message):
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, monkeypatch, body)
    assert [str(p) for p in caught.value.problems] == [message]


def test_case_rubrics_keep_operator_and_min_score(tmp_path, monkeypatch):
    body = CASE + "      - {description: x, operator: contradiction}\n      - {score_ranges: {0: x}, min_score: 0.7}\n"
    [case] = _load(tmp_path, monkeypatch, body).cases
    first, second = case.evaluators[0].rubrics
    assert (first.operator, first.gate, second.operator, second.gate) == ("contradiction", 1.0, None, 0.7)


# -- the prompt text -----------------------------------------------------------------------------


def item(id: str, **extra: Any) -> RubricItem:
    return RubricItem.model_validate({"id": id, **extra})


def ranged(id: str, **extra: Any) -> RubricItem:
    return item(id, score_ranges={0: "bad", 7: "good"}, **extra)


LISTINGS = [
    (
        "checklist-no-operator",
        rubric_listing,
        [item("a", description="A")],
        "- [a] A (required, weight 1)",
    ),
    (
        "checklist-operators",
        rubric_listing,
        [
            item("a", description="A", operator="contradiction"),
            item("b", description="B", required=False, weight=2),
            item("c", description="C", operator="correctness"),
            item("d", description="D", operator="contradiction"),
        ],
        "\nOperator guidance:\n"
        f"- {CONTRADICTION}\n"
        f"- {CORRECTNESS}\n"
        "\n"
        "- [a] A (required, weight 1) (operator: contradiction)\n"
        "- [b] B (optional, weight 2)\n"
        "- [c] C (required, weight 1) (operator: correctness)\n"
        "- [d] D (required, weight 1) (operator: contradiction)",
    ),
    (
        "score-ranges-operator-and-min-score",
        score_ranges_listing,
        [
            ranged("a", description="A", operator="correctness", min_score=0.8),
            ranged("b", min_score=1, required_min_score=3),
            ranged("c", required_min_score=7),
            ranged("d"),
        ],
        "### Criterion: a [REQUIRED: min score 0.8]\n"
        "Operator: correctness\n"
        "Description: A\n"
        "Score ranges:\n"
        "  - Score 0-6: bad\n"
        "  - Score 7-10: good\n"
        "\n"
        "### Criterion: b [REQUIRED: min score 1]\n"
        "Score ranges:\n"
        "  - Score 0-6: bad\n"
        "  - Score 7-10: good\n"
        "\n"
        "### Criterion: c [REQUIRED: min score 7]\n"
        "Score ranges:\n"
        "  - Score 0-6: bad\n"
        "  - Score 7-10: good\n"
        "\n"
        "### Criterion: d\n"
        "Score ranges:\n"
        "  - Score 0-6: bad\n"
        "  - Score 7-10: good\n"
        "\n"
        f"{CORRECTNESS}",
    ),
]


@pytest.mark.parametrize(("listing", "items", "expected"), [c[1:] for c in LISTINGS], ids=[c[0] for c in LISTINGS])
def test_prompt_listing(listing, items, expected):
    assert listing(items) == expected


# -- the gate (AgentV's calculateScoreRangeResult: score / 10 < gate fails) ----------------------

GATES = [
    # id, item keys, the judge's 0-10 score, (gate, failed)
    ("min-score-below", {"min_score": 0.8}, 7, (0.8, True)),
    ("min-score-met", {"min_score": 0.8}, 8, (0.8, False)),
    ("min-score-between-steps", {"min_score": 0.75}, 7, (0.75, True)),
    ("min-score-between-steps-met", {"min_score": 0.75}, 8, (0.75, False)),
    ("min-score-1", {"min_score": 1}, 9, (1.0, True)),
    ("min-score-wins-over-required-min-score", {"min_score": 0.5, "required_min_score": 9}, 6, (0.5, False)),
    ("min-score-gates-when-not-required", {"min_score": 0.6, "required": False}, 5, (0.6, True)),
    ("required-min-score-over-10", {"required_min_score": 7}, 6, (0.7, True)),
    ("required-written-is-10", {"required": True}, 9, (1.0, True)),
    ("no-gate", {}, 0, (None, False)),
]


@pytest.mark.parametrize(("keys", "score", "expected"), [c[1:] for c in GATES], ids=[c[0] for c in GATES])
def test_gate(keys, score, expected):
    rubric = ranged("a", **keys)
    outcome = score_range_outcome([{"id": "a", "score": score}], [rubric])
    assert (rubric.gate, outcome.required_failed == ["a"]) == expected


def test_details_name_the_scale_written():
    outcome = score_range_outcome(
        [{"id": "a", "score": 9}, {"id": "b", "score": 9}],
        [ranged("a", min_score=0.8, required_min_score=2), ranged("b", required_min_score=8)],
    )
    assert [{k: c[k] for k in c if "min_score" in k} for c in outcome.checks] == [
        {"min_score": 0.8},
        {"required_min_score": 8},
    ]


# -- a dataset in this tool's format, run with a scripted judge ----------------------------------

KEY = "sk-rubric-ops-SECRET-1"


def test_a_dataset_with_operators_and_min_score(ws, chat_server, monkeypatch):
    monkeypatch.setenv("OPS_KEY", KEY)
    ws.targets(f"""
        targets:
          - {{name: t, provider: mock, response: Revenue rose to $10M.}}
          - name: judge
            provider: openai
            model: judge-model
            base_url: {chat_server.base_url}
            api_key: ${{{{ OPS_KEY }}}}
            max_retries: 0
    """)
    ws.dataset("""
        execution:
          target: t
          judge_target: judge
          evaluators:
            - type: rubric
              name: finance
              rubrics:
                - {id: revenue, description: States revenue rose to $10M., operator: correctness}
                - id: margin
                  description: Gross margin declined to 42%.
                  operator: contradiction
                  min_score: 0.8
                  score_ranges: {0: Contradicts it, 5: Vague, 8: Consistent}
        evalcases:
          - id: c1
            input: Summarize the note.
    """)
    checks = [{"id": "revenue", "score": 10, "reasoning": "stated"}, {"id": "margin", "score": 7, "reasoning": "vague"}]
    chat_server.reply(text(json.dumps({"checks": checks, "overall_reasoning": "close"})))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 1, result.output
    [row] = rows("o.jsonl")
    [rubric] = row["evaluator_results"]
    assert (rubric["score"], rubric["verdict"], rubric["passed"]) == (0.85, "fail", False)
    assert rubric["reasoning"] == "below the required minimum score: margin (7/10 < 0.8); close"
    system = chat_server.requests[0].body["messages"][0]["content"]
    assert (
        "### Criterion: revenue [REQUIRED: min score 10]\nOperator: correctness\nDescription: States revenue rose "
        "to $10M.\n\n### Criterion: margin [REQUIRED: min score 0.8]\nOperator: contradiction\n"
    ) in system
    assert f"  - Score 8-10: Consistent\n\n{CORRECTNESS}\n{CONTRADICTION}" in system
    assert KEY not in (ws.root / "o.jsonl").read_text()
