"""Rubric items with `score_ranges` (AgentV's 0-10 analytic rubrics, cdf415031): loading and its
located errors, the pure score, and the evaluator against a scripted chat server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentv_py.errors import ConfigError
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.loading import load_dataset
from agentv_py.models.dataset import EvalCase
from agentv_py.models.judges import RubricConfig, RubricItem
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.runner.targets import OpenAIRunner
from agentv_py.scoring.judging import gate_label, score_range_outcome, score_ranges_listing
from tests.chat_server import text

KEY = "sk-judge-SECRET-987654321"

# AgentV's example (examples/features/rubric, case 5): two criteria in the shorthand map form.
AGENTV_CASE = """\
evalcases:
  - id: summary-multi-criteria-score-ranges-proposed
    expected_outcome: Provide an accurate summary in under 50 words.
    input: Summarize this article in under 50 words.
    expected_output: Climate change is accelerating.
    rubrics:
      - id: factual_accuracy
        weight: 2.0
        required_min_score: 8
        score_ranges:
          0: Contains major factual errors or contradicts the article.
          3: Mostly on-topic but includes at least one clear factual error.
          6: Generally accurate but misses an important point.
          8: Accurate and covers the key points with only minor omissions.
          10: Fully accurate, captures all key points with no distortions.
      - id: brevity_and_clarity
        weight: 1.0
        score_ranges:
          0: Exceeds 50 words or is hard to understand.
          5: Under 50 words and mostly clear.
          10: Under 50 words, exceptionally clear.
"""


def _load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Any:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dataset.yaml").write_text(body)
    return load_dataset("dataset.yaml")


def test_agentv_example_loads_as_a_score_ranges_rubric(tmp_path, monkeypatch):
    [case] = _load(tmp_path, monkeypatch, AGENTV_CASE).cases
    [rubric] = case.evaluators
    assert isinstance(rubric, RubricConfig) and rubric.name == "rubric"
    accuracy, brevity = rubric.rubrics
    assert [(r.score_range, r.description[:12]) for r in accuracy.score_ranges or []] == [
        ((0, 2), "Contains maj"),
        ((3, 5), "Mostly on-to"),
        ((6, 7), "Generally ac"),
        ((8, 9), "Accurate and"),
        ((10, 10), "Fully accura"),
    ]
    assert (accuracy.weight, gate_label(accuracy), gate_label(brevity)) == (2.0, "8", None)
    assert [r.score_range for r in brevity.score_ranges or []] == [(0, 4), (5, 9), (10, 10)]


def _case(rubric: str) -> str:
    return "evalcases:\n  - id: c1\n    input: hi\n    rubrics:\n" + rubric


FULL = "[{score_range: [0, 4], expected_outcome: low}, {score_range: [5, 10], expected_outcome: high}]"
INVALID = [
    (
        "min-above-10",
        "      - {id: a, score_ranges: {0: x, 5: y}, required_min_score: 11}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].required_min_score: required_min_score must be an integer 0-10 "
        "(got 11)",
    ),
    (
        "min-not-integer",
        "      - {id: a, score_ranges: {0: x}, required_min_score: 7.5}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].required_min_score: required_min_score must be an integer 0-10 "
        "(got 7.5)",
    ),
    (
        "min-without-ranges",
        "      - {id: a, description: d, required_min_score: 7}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].required_min_score: required_min_score applies to an item with "
        "score_ranges (0-10 scoring); a checklist item uses required: true",
    ),
    (
        "overlapping",
        "      - score_ranges: [{score_range: [0, 5], description: a}, {score_range: [5, 10], description: b}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges overlap: [0, 5] overlaps with [5, 10]",
    ),
    (
        "gap",
        "      - score_ranges: [{score_range: [0, 3], description: a}, {score_range: [6, 9], description: b}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges must cover every integer score 0-10; "
        "not covered: 4, 5, 10",
    ),
    (
        "empty-list",
        "      - score_ranges: []\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges must cover every integer score 0-10; "
        "not covered: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
    ),
    (
        "out-of-scale",
        "      - score_ranges: [{score_range: [0, 11], description: a}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges[0].score_range: score_range values must be 0-10 "
        "(got [0, 11])",
    ),
    (
        "reversed",
        "      - score_ranges: [{score_range: [10, 0], description: a}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges[0].score_range: score_range min must be <= max "
        "(got [10, 0])",
    ),
    (
        "fraction",
        "      - score_ranges: [{score_range: [0, 9.5], description: a}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges[0].score_range: score_range values must be integers "
        "(got [0, 9.5])",
    ),
    (
        "not-a-pair",
        "      - score_ranges: [{score_range: [0], description: a}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges[0].score_range: score_range must be [min, max], two "
        "integers from 0 to 10",
    ),
    (
        "no-description",
        "      - score_ranges: [{score_range: [0, 10]}]\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges[0]: a score range needs a description (AgentV spells "
        "it expected_outcome)",
    ),
    (
        "map-not-from-0",
        "      - score_ranges: {3: ok, 10: good}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges shorthand map must start at 0 (got 3)",
    ),
    (
        "map-bad-key",
        "      - score_ranges: {0: bad, eleven: good}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges map keys must be the integer lowest "
        "scores 0-10 of the bands (got 'eleven')",
    ),
    (
        "map-empty-text",
        "      - score_ranges: {0: bad, 5: ''}\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges map value for 5 must be a non-empty "
        "description",
    ),
    (
        "a-string",
        "      - score_ranges: 0-10\n",
        "dataset.yaml:5: evalcases[0].rubrics[0].score_ranges: score_ranges must be a list of {score_range: [min, "
        "max], expected_outcome} or a map {lowest score: description}, e.g. {0: Wrong, 5: Partly right, 10: Right}",
    ),
]


@pytest.mark.parametrize(("rubric", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_score_ranges_are_located_load_errors(tmp_path, monkeypatch, rubric, message):
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, monkeypatch, _case(rubric))
    assert [str(p) for p in caught.value.problems] == [message]


def test_the_rubric_evaluator_checks_its_items_the_same_way():
    with pytest.raises(ValueError, match=r"score_ranges overlap: \[0, 5\] overlaps with \[5, 10\]"):
        RubricConfig.model_validate(
            {
                "type": "rubric",
                "rubrics": [
                    {
                        "id": "a",
                        "score_ranges": [
                            {"score_range": [0, 5], "description": "x"},
                            {"score_range": [5, 10], "description": "y"},
                        ],
                    }
                ],
            }
        )
    config = RubricConfig.model_validate(
        {"type": "rubric", "rubrics": [{"id": "a", "score_ranges": {"0": "x", "5": "y"}, "required_min_score": 5}]}
    )
    assert [r.score_range for r in config.rubrics[0].score_ranges or []] == [(0, 4), (5, 10)]


# -- the pure score (AgentV's calculateScoreRangeResult) ----------------------------------------


def item(id: str, weight: float = 1.0, **extra: Any) -> RubricItem:
    return RubricItem.model_validate(
        {"id": id, "weight": weight, "score_ranges": {0: "bad", 4: "fair", 7: "good", 10: "perfect"}, **extra}
    )


CHECKLIST = RubricItem.model_validate({"id": "cl", "description": "Says hi"})  # required: gate at 10
SCORES = [
    # id, items, scores, (score, required_failed, hits, misses)
    ("all-ten", [item("a"), item("b")], {"a": 10, "b": 10}, (1.0, [], ["a", "b"], [])),
    ("weighted", [item("a", 2.0), item("b")], {"a": 9, "b": 3}, (0.7, [], ["a"], ["b"])),
    ("seven-is-a-hit", [item("a")], {"a": 7}, (0.7, [], ["a"], [])),
    ("six-is-a-miss", [item("a")], {"a": 6}, (0.6, [], [], ["a"])),
    ("zero-weight", [item("a", 0.0), item("b")], {"a": 0, "b": 8}, (0.8, [], ["b"], ["a"])),
    ("below-min", [item("a", required_min_score=8)], {"a": 7}, (0.7, ["a"], [], ["a"])),
    ("at-min", [item("a", required_min_score=8)], {"a": 8}, (0.8, [], ["a"], [])),
    ("min-0", [item("a", required_min_score=0)], {"a": 0}, (0.0, [], [], ["a"])),
    ("required-written", [item("a", required=True)], {"a": 9}, (0.9, ["a"], [], ["a"])),
    ("required-default", [item("a")], {"a": 9}, (0.9, [], ["a"], [])),
    ("checklist-item-mixed-in", [item("a"), CHECKLIST], {"a": 10, "cl": 9}, (0.95, ["cl"], ["a"], ["cl"])),
]


@pytest.mark.parametrize(("items", "scores", "expected"), [c[1:] for c in SCORES], ids=[c[0] for c in SCORES])
def test_score_range_outcome(items, scores, expected):
    checks = [{"id": i, "score": s, "reasoning": "why"} for i, s in scores.items()]
    outcome = score_range_outcome(checks, items)
    ids = lambda lines: [line[1 : line.index("]")] for line in lines]  # noqa: E731
    got = (round(outcome.score, 10), outcome.required_failed, ids(outcome.hits), ids(outcome.misses))
    assert got == expected
    assert outcome.raw_scores == scores


def test_hit_and_miss_texts_name_the_band():
    outcome = score_range_outcome(
        [{"id": "a", "score": 8, "reasoning": "close"}, {"id": "b", "score": 2}],
        [item("a", description="Accurate"), item("b")],
    )
    assert outcome.hits == ["[a] Accurate - Score: 8/10 (good): close"]
    assert outcome.misses == ["[b] b - Score: 2/10 (bad)"]
    assert outcome.checks[0] == {"id": "a", "score": 8, "weight": 1.0, "range": [7, 9], "reasoning": "close"}


def test_the_criteria_listing():
    listing = score_ranges_listing([item("a", 2.0, description="Accurate", required_min_score=8), CHECKLIST])
    assert listing == (
        "### Criterion: a (weight: 2) [REQUIRED: min score 8]\n"
        "Description: Accurate\n"
        "Score ranges:\n"
        "  - Score 0-3: bad\n"
        "  - Score 4-6: fair\n"
        "  - Score 7-9: good\n"
        "  - Score 10: perfect\n"
        "\n"
        "### Criterion: cl [REQUIRED: min score 10]\n"
        "Description: Says hi"
    )


# -- the evaluator, against a scripted judge ----------------------------------------------------


def context(server: Any) -> EvalContext:
    case = EvalCase.model_validate(
        {"id": "c1", "expected_outcome": "Summarize", "input": "Summarize it.", "expected_output": "Short."}
    )
    config = OpenAITarget.model_validate(
        {
            "name": "judge",
            "provider": "openai",
            "model": "m",
            "api_key": KEY,
            "base_url": server.base_url,
            "max_retries": 1,
        }
    )
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=Path("."),
        answer="A short summary.",
        expected="Short.",
        question="Summarize it.",
        case=case,
        judges={"judge": OpenAIRunner(config, [KEY])},
        default_judge="judge",
    )


def agentv_rubric(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RubricConfig:
    [case] = _load(tmp_path, monkeypatch, AGENTV_CASE).cases
    [rubric] = case.evaluators
    assert isinstance(rubric, RubricConfig)
    return rubric


def reply(accuracy: Any, brevity: Any = 10) -> str:
    return json.dumps(
        {
            "checks": [
                {"id": "factual_accuracy", "score": accuracy, "reasoning": "facts"},
                {"id": "brevity_and_clarity", "score": brevity, "reasoning": "short"},
            ],
            "overall_reasoning": "good summary",
        }
    )


def test_a_score_ranges_rubric_is_scored_by_the_judge(tmp_path, monkeypatch, chat_server):
    chat_server.reply(text(reply(9, 6)))
    result = run_evaluator(agentv_rubric(tmp_path, monkeypatch), context(chat_server))

    assert (result.status, result.score, result.verdict, result.passed) == ("processed", 0.8, "pass", True)
    assert result.hits == [
        "[factual_accuracy] factual_accuracy - Score: 9/10 (Accurate and covers the key points with only minor "
        "omissions.): facts"
    ]
    assert result.misses == [
        "[brevity_and_clarity] brevity_and_clarity - Score: 6/10 (Under 50 words and mostly clear.): short"
    ]
    assert result.reasoning == "good summary"
    details = result.details
    assert details["raw_scores"] == {"factual_accuracy": 9, "brevity_and_clarity": 6}
    assert (details["normalization"], details["aggregation"], details["required_failed"]) == (
        "score / 10",
        "weighted_average",
        [],
    )
    system, user = chat_server.requests[0].body["messages"]
    assert "### Criterion: factual_accuracy (weight: 2) [REQUIRED: min score 8]" in system["content"]
    assert "  - Score 0-4: Exceeds 50 words or is hard to understand." in system["content"]
    assert '"score":{"type":"integer","minimum":0,"maximum":10}' in system["content"]
    assert user["content"].startswith("Score the candidate output on each criterion below, from 0 to 10")
    assert "A short summary." in user["content"]


def test_below_the_required_minimum_fails_whatever_the_score(tmp_path, monkeypatch, chat_server):
    chat_server.reply(text(reply(7)))
    result = run_evaluator(agentv_rubric(tmp_path, monkeypatch), context(chat_server))
    assert (result.status, result.verdict, result.passed) == ("processed", "fail", False)
    assert round(result.score, 10) == 0.8
    assert result.reasoning == "below the required minimum score: factual_accuracy (7 < 8); good summary"
    assert result.details["required_failed"] == ["factual_accuracy"]


def jsonschema_problem(where: str) -> str:
    """A pattern for `schema_problem`'s text: agentv's location ("checks[0].score: "), then
    jsonschema's own sentence, which may be any non-empty text (its wording is not agentv's)."""
    return re.escape(f"{where}: ") + ".+"


# (id, the reply, a pattern for the problem agentv reports)
BAD_REPLIES = [
    ("above-10", reply(11), jsonschema_problem("checks[0].score")),
    ("fraction", reply(7.5), jsonschema_problem("checks[0].score")),
    ("negative", reply(-1), jsonschema_problem("checks[0].score")),
    ("a-string", reply("8"), jsonschema_problem("checks[0].score")),
    (
        "satisfied-instead",
        json.dumps({"checks": [{"id": "factual_accuracy", "satisfied": True}]}),
        jsonschema_problem("checks[0]"),
    ),
    (
        "one-missing",
        json.dumps({"checks": [{"id": "factual_accuracy", "score": 9}]}),
        re.escape("checks: no check for rubric brevity_and_clarity"),  # agentv's own, exactly
    ),
]


@pytest.mark.parametrize(("bad", "problem"), [c[1:] for c in BAD_REPLIES], ids=[c[0] for c in BAD_REPLIES])
def test_a_reply_that_does_not_fit_is_retried_then_an_error(tmp_path, monkeypatch, chat_server, bad, problem):
    chat_server.reply(*[text(bad)] * 3)
    result = run_evaluator(agentv_rubric(tmp_path, monkeypatch), context(chat_server))
    assert (result.status, result.score) == ("error", 0.0)
    assert len(result.misses) == 1, result.misses
    pattern = (
        re.escape("rubric 'rubric': no valid reply from judge target 'judge' in 3 attempts (")
        + problem
        + re.escape(f"); last reply: {bad!r}")  # every bad reply here is under the 200-character quote limit
    )
    assert re.fullmatch(pattern, result.misses[0]), result.misses
    assert len(chat_server.requests) == 3


def test_a_fitting_second_reply_is_used(tmp_path, monkeypatch, chat_server):
    chat_server.reply(text(reply(11)), text(reply(10)))
    result = run_evaluator(agentv_rubric(tmp_path, monkeypatch), context(chat_server))
    assert (result.status, result.score, result.verdict) == ("processed", 1.0, "pass")
    retry = chat_server.requests[1].body["messages"][-1]["content"]
    pattern = (
        re.escape("That reply is not valid (")
        + jsonschema_problem("checks[0].score")
        + re.escape("). Reply again with only the JSON object the schema describes.")
    )
    assert re.fullmatch(pattern, retry), retry
