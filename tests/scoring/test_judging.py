"""Pure judging helpers: templates, reply extraction, dimension and rubric scores (issue 6)."""

from __future__ import annotations

import re

import pytest

from agentv_py.models.judges import RubricItem, is_prompt_file, template_problem
from agentv_py.scoring.judging import dimension_score, extract_json, render_template, rubric_outcome

VALUES = {
    "input": "Q",
    "output": "A",
    "expected_output": "E",
    "expected_outcome": "O",
    "image_reference": "Image 1 (a.png)",
    "image_references": "Image 1 (a.png), Image 2 (b.png)",
}


@pytest.mark.parametrize(
    "template, rendered",
    [
        ("{{input}} -> {{output}}", "Q -> A"),
        ("{{ input }}|{{expected_output}}|{{ expected_outcome }}", "Q|E|O"),
        ("{{question}} {{candidate_answer}} {{reference_answer}} {{criteria}}", "Q A E O"),
        (
            "See {{image_reference}}; all: {{image_references}}",
            "See Image 1 (a.png); all: Image 1 (a.png), Image 2 (b.png)",
        ),
        ('JSON braces {"a": {"b": 1}} stay', 'JSON braces {"a": {"b": 1}} stay'),
        ("{{output}}{{output}}", "AA"),
    ],
    ids=["basic", "spaces", "agentv-aliases", "images", "json-braces", "repeated"],
)
def test_render_template(template, rendered):
    assert render_template(template, VALUES) == rendered


def test_a_value_containing_a_variable_is_not_rendered_again():
    assert render_template("{{output}} {{input}}", {**VALUES, "output": "{{input}}"}) == "{{input}} Q"


@pytest.mark.parametrize(
    "template, problem",
    [
        ("{{input}} {{output}}", None),
        (
            "{{ answer }}",
            "unknown template variable {{answer}}. Valid variables: {{input}}, {{output}}, "
            "{{expected_output}}, {{expected_outcome}}, {{image_reference}}, {{image_references}}",
        ),
        (
            "{{imagereference}}",
            "unknown template variable {{imagereference}} (did you mean {{image_reference}}?). "
            "Valid variables: {{input}}, {{output}}, {{expected_output}}, {{expected_outcome}}, "
            "{{image_reference}}, {{image_references}}",
        ),
    ],
    ids=["known", "unknown", "close"],
)
def test_template_problem(template, problem):
    assert template_problem(template) == problem


@pytest.mark.parametrize(
    "prompt, is_file",
    [
        ("judges/describe.md", True),
        ("./prompt", True),
        ("prompt.txt", True),
        ("Rate the answer {{output}}", False),
        ("Line one\nline two.md", False),
        ("Is this good.", False),
    ],
)
def test_prompt_file_or_inline(prompt, is_file):
    assert is_prompt_file(prompt) is is_file


@pytest.mark.parametrize(
    "reply, value, problem",
    [
        ('{"score": 0.5}', {"score": 0.5}, None),
        ('  \n{"score": 1}\n', {"score": 1}, None),
        ('```json\n{"score": 0.5}\n```', {"score": 0.5}, None),
        ('Sure:\n```\n{"score": 0.5}\n```\nHope that helps', {"score": 0.5}, None),
        ('The score is {"score": 0.5}', None, "the reply is not JSON"),
        ("I'd say 0.8", None, "the reply is not JSON"),
        (
            '```json\n{"score": 0.5,}\n```',
            None,
            # ours around the parentheses; inside, the json module's words
            re.compile(re.escape("the fenced block is not valid JSON (") + r".+\)"),
        ),
        (
            '```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```',
            None,
            "the reply holds 2 fenced blocks; exactly one JSON object was asked for",
        ),
        ('{"score": NaN}', None, "the reply is not JSON"),
    ],
    ids=[
        "json",
        "whitespace",
        "fenced",
        "fenced-with-prose",
        "prose-with-json",
        "prose",
        "bad-fence",
        "two-fences",
        "nan",
    ],
)
def test_extract_json(reply, value, problem):
    got_value, got_problem = extract_json(reply)
    assert got_value == value
    if isinstance(problem, re.Pattern):
        assert got_problem is not None and problem.fullmatch(got_problem), got_problem
    else:
        assert got_problem == problem


# The fence finder and the strict loader are jsontext's (shared with answers and code judges).
@pytest.mark.parametrize(
    "reply, value, problem",
    [
        ('```JSON\r\n{"score": 0.5}\r\n```', {"score": 0.5}, None),
        ('``` json\n{"score": 0.5}\n```', {"score": 0.5}, None),
        (
            'Here:\n```json\n{"score": 0.5}\n```\nor ```json\n{"score": 0.6}\n```',
            None,
            "the reply holds 2 fenced blocks; exactly one JSON object was asked for",
        ),
        ('```json\n{"score": 0.5}', None, "the reply is not JSON"),
        ('```json\n{"score": NaN}\n```', None, "the fenced block is not valid JSON (NaN is not valid JSON)"),
        ('{"score": 1e400}', None, "the reply is not JSON"),
        (
            '```json\n{"score": -Infinity}\n```',
            None,
            "the fenced block is not valid JSON (-Infinity is not valid JSON)",
        ),
    ],
    ids=[
        "crlf-upper-case",
        "space-before-tag",
        "two-fences-in-prose",
        "unterminated-fence",
        "fenced-nan",
        "overflow",
        "fenced-infinity",
    ],
)
def test_extract_json_fences_and_strictness(reply, value, problem):
    assert extract_json(reply) == (value, problem)


# The six vision judges' seed weights: (weights, dimension scores, expected score).
SEED_DIMENSIONS = [
    (
        "image-description",
        {"visual_accuracy": 40, "completeness": 30, "clarity": 20, "relevance": 10},
        {"visual_accuracy": 0.9, "completeness": 0.6, "clarity": 1.0, "relevance": 1.0},
        0.84,
    ),
    (
        "activity-recognition",
        {"activity_identification": 35, "count_and_pose_accuracy": 35, "detail": 20, "inference": 10},
        {"activity_identification": 1.0, "count_and_pose_accuracy": 0.5, "detail": 0.5, "inference": 0.0},
        0.625,
    ),
    (
        "image-comparison",
        {"change_detection": 40, "spatial_precision": 25, "completeness": 20, "clarity": 15},
        {"change_detection": 1.0, "spatial_precision": 1.0, "completeness": 1.0, "clarity": 1.0},
        1.0,
    ),
    (
        "visual-reasoning",
        {"logic": 40, "visual_understanding": 30, "problem_solving": 20, "explanation": 10},
        {"logic": 0.5, "visual_understanding": 1.0, "problem_solving": 0.5, "explanation": 0.0},
        0.6,
    ),
    (
        "structured-output",
        {"json_validity": 30, "schema_compliance": 35, "data_accuracy": 25, "completeness": 10},
        {"json_validity": 1.0, "schema_compliance": 0.8, "data_accuracy": 0.4, "completeness": 1.0},
        0.78,
    ),
    (
        "image-quality",
        {"technical": 30, "composition": 25, "aesthetics": 20, "overall_judgment": 15, "professional_tone": 10},
        {"technical": 0.8, "composition": 0.8, "aesthetics": 0.5, "overall_judgment": 1.0, "professional_tone": 1.0},
        0.79,
    ),
]


@pytest.mark.parametrize(
    "weights, scores, expected", [s[1:] for s in SEED_DIMENSIONS], ids=[s[0] for s in SEED_DIMENSIONS]
)
def test_dimension_scores_with_seed_weights(weights, scores, expected):
    result = dimension_score(scores, weights)
    assert result.score == pytest.approx(expected)
    assert {name: entry["weight"] for name, entry in result.breakdown.items()} == weights


def test_rubric_outcome():
    rubrics = [
        RubricItem(id="a", description="A", weight=3),
        RubricItem(id="b", description="B", required=False),
        RubricItem(id="c", description="C", weight=0),
    ]
    checks = [
        {"id": "c", "satisfied": False},
        {"id": "b", "satisfied": False, "reasoning": "nope"},
        {"id": "a", "satisfied": True, "reasoning": "yes"},
    ]
    outcome = rubric_outcome(checks, rubrics)
    assert outcome.score == 0.75 and outcome.required_failed == ["c"]
    assert outcome.hits == ["[a] A: yes"] and outcome.misses == ["[b] B: nope", "[c] C"]


def test_a_reply_nested_too_deeply_says_so():
    value, problem = extract_json("[" * 100_000 + "]" * 100_000)
    assert (value, problem) == (None, "the reply is JSON nested too deeply")
