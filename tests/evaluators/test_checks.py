"""The deterministic checks as configured in a dataset: load errors (exact, located) where AgentV
skipped the check with a warning or failed it at run time, AgentV's default names, results
(hits, misses, negation, an unusable schema), and a property: a check never raises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.errors import ConfigError
from agentv_py.evaluators import run_evaluator
from agentv_py.evaluators.base import EvalContext
from agentv_py.loading import load_dataset
from agentv_py.models.checks import CHECK_TYPES
from tests.scoring.test_checks import CASES, config


def load_evaluator(ws, evaluator: str):
    ws.dataset(f"execution:\n  evaluators:\n    - {evaluator}\nevalcases:\n  - id: c1\n    input: hi\n")
    return load_dataset("dataset.yaml").cases[0].evaluators[0]


def problems(ws, evaluator: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_evaluator(ws, evaluator)
    return [str(p) for p in caught.value.problems]


def context(answer: str) -> EvalContext:
    return EvalContext("c1", "d", Path("."), answer, None)


AT = "dataset.yaml:3: execution.evaluators[0]"
INVALID = [
    ("contains-without-value", "{type: contains}", f"{AT}.value: missing required key 'value'"),
    (
        "contains-empty-value",
        "{type: contains, value: ''}",
        f"{AT}.value: value must not be empty: give the text to look for",
    ),
    (
        "contains-number-value",
        "{type: equals, value: 4}",
        f"{AT}.value: input should be a valid string, got number 4",
    ),
    (
        "contains-any-string-value",
        "{type: contains_any, value: abc}",
        f'{AT}.value: input should be a valid list, got string "abc"',
    ),
    ("contains-all-empty-list", "{type: contains_all, value: []}", f"{AT}.value: value must list at least one string"),
    ("icontains-any-empty-item", "{type: icontains_any, value: [a, '']}", f"{AT}.value: value[1] must not be empty"),
    (
        "regex-bad-pattern",
        "{type: regex, value: '(a'}",
        f"{AT}.value: value is not a valid regular expression: missing ), unterminated subpattern at position 0",
    ),
    (
        "regex-unknown-flag",
        "{type: regex, value: a, flags: ix}",
        f"{AT}.flags: unknown flag 'x'. Valid flags: d, g, i, m, s, u, y",
    ),
    ("regex-flag-twice", "{type: regex, value: a, flags: ii}", f"{AT}.flags: flag 'i' given twice"),
    (
        "is-json-bad-schema",
        "{type: is_json, schema: {type: 12}}",
        f"{AT}.schema: schema is not a valid JSON Schema: 12 is not valid under any of the given schemas (at type)",
    ),
    (
        "is-json-value",
        "{type: is_json, value: x}",
        f"{AT}.value: unknown key 'value'. Valid keys: name, weight, pass_threshold, negate, id, type, schema",
    ),
    (
        "negate-not-bool",
        "{type: contains, value: a, negate: 'yes'}",
        f'{AT}.negate: input should be a valid boolean, got string "yes"',
    ),
    (
        "unknown-type-did-you-mean",
        "{type: contains_al, value: [a]}",
        f"{AT}.type: Unknown evaluator type: contains_al (did you mean 'contains_all'?). Valid types: "
        "field_accuracy, code_judge, iou_score, coordinate_distance, llm_judge, rubric, composite, tool_trajectory, "
        "latency, cost, token_usage, execution_metrics, skill_trigger, contains, contains_any, contains_all, "
        "icontains, icontains_any, icontains_all, starts_with, ends_with, regex, equals, is_json, "
        "anls_star",
    ),
]


@pytest.mark.parametrize(("evaluator", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_check_configs_are_located_load_errors(ws, evaluator, message):
    assert problems(ws, evaluator) == [message]


NAMES = [
    ("contains", "{type: contains, value: Hello}", "contains-Hello"),
    ("contains-any", "{type: contains_any, value: [a, b]}", "contains-any-2"),
    ("icontains-all", "{type: icontains_all, value: [a, b, c]}", "icontains-all-3"),
    ("starts-with", "{type: starts_with, value: Dear}", "starts-with-Dear"),
    (
        "regex-cut-at-30",
        "{type: regex, value: '0123456789012345678901234567890123'}",
        "regex-012345678901234567890123456789",
    ),
    ("is-json", "{type: is_json}", "is-json"),
    ("own-name", "{name: greeting, type: equals, value: hi}", "greeting"),
]


@pytest.mark.parametrize(("evaluator", "name"), [c[1:] for c in NAMES], ids=[c[0] for c in NAMES])
def test_default_names_are_agentvs(ws, evaluator, name):
    loaded = load_evaluator(ws, evaluator)
    assert loaded.display_name == name
    assert run_evaluator(loaded, context("")).name == name


def test_a_passing_check_is_a_hit_and_a_failing_one_a_miss():
    hit = run_evaluator(config("contains", value="4", weight=2.0), context("2 + 2 = 4"))
    assert (hit.status, hit.score, hit.verdict, hit.hits, hit.misses, hit.weight) == (
        "processed",
        1.0,
        "pass",
        ['Output contains "4"'],
        [],
        2.0,
    )
    assert hit.type == "contains" and hit.reasoning == 'Output contains "4"'
    miss = run_evaluator(config("contains", value="5"), context("2 + 2 = 4"))
    assert (miss.score, miss.verdict, miss.hits, miss.misses) == (0.0, "fail", [], ['Output does not contain "5"'])


@pytest.mark.parametrize(
    ("kind", "options", "answer", "passed", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_negate_inverts_the_score_and_keeps_the_text(kind, options, answer, passed, text):
    result = run_evaluator(config(kind, negate=True, **options), context(answer))
    assert (result.score, result.passed) == (0.0 if passed else 1.0, not passed)
    assert (result.hits, result.misses) == (([], [text]) if passed else ([text], []))
    assert result.details["negated"] is True


def test_negate_makes_agentvs_passing_text_a_miss():
    result = run_evaluator(config("contains", value="error", negate=True), context("an error occurred"))
    assert (result.score, result.passed, result.hits, result.misses) == (0.0, False, [], ['Output contains "error"'])
    assert result.reasoning == 'Output contains "error" (negated)'
    assert result.details == {"negated": True}


def test_the_checked_text_is_the_answer_as_given():
    # a JSON answer is checked as its text: keys with their quotes, as AgentV's candidate string
    result = run_evaluator(config("contains", value='"total": 12'), context('{"total": 12}'))
    assert result.score == 1.0


def test_an_unusable_schema_is_an_error_result_never_a_score():
    result = run_evaluator(config("is_json", schema={"$ref": "other.json"}), context("{}"))
    assert result.status == "error"
    assert result.misses == ["is-json: schema cannot be applied: _WrappedReferencingError: Unresolvable: other.json"]


def test_pass_threshold_makes_a_check_a_must_pass():
    result = run_evaluator(config("equals", value="x", pass_threshold=1.0), context("y"))
    assert result.verdict == "fail" and result.failed_hard


CHECKS = [
    config("contains", value="a"),
    config("icontains", value="\u0130"),
    config("contains_any", value=["\ud7ff", "a"]),
    config("icontains_any", value=["ß", "İ"]),
    config("contains_all", value=["{", "}"], negate=True),
    config("icontains_all", value=["A"]),
    config("starts_with", value=" x"),
    config("ends_with", value="\u2028"),
    config("equals", value="{}"),
    config("regex", value="^(a|b)*c$", flags="ims"),
    config("regex", value="(?<n>\\w)\\k<n>", flags="y"),
    config("is_json"),
    config("is_json", schema={"type": "array", "items": {"type": "number"}}),
]


def test_the_property_covers_every_type():
    assert {c.type for c in CHECKS} == set(CHECK_TYPES)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4),
    max_leaves=20,
)
answers = (
    st.text(max_size=200) | json_values.map(json.dumps) | st.binary(max_size=50).map(lambda b: b.decode("latin-1"))
)


@settings(max_examples=300, deadline=None)
@given(answer=answers)
def test_a_check_never_raises_and_scores_0_or_1(answer):
    for check in CHECKS:
        result = run_evaluator(check, context(answer))
        assert result.status == "processed", result.reasoning
        assert result.score in (0.0, 1.0)
        assert len(result.hits) + len(result.misses) == 1
        json.dumps(result.model_dump())
