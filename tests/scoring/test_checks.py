"""AgentV's deterministic checks as pure functions: each type's score and text word for word
(AgentV v4.42.4's graders/assertions.ts), case sensitivity, JavaScript's trim, negation, empty and
JSON answers, regex flags and JavaScript pattern syntax, `is_json` with a schema."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_py.models.checks import CHECK_TYPES, regex_for
from agentv_py.models.evaluators import EVALUATOR_CONFIG_TYPES
from agentv_py.scoring.checks import REGEX_SCAN_CHARS, js_trim, run_check

MODELS = {cls.model_fields["type"].annotation.__args__[0]: cls for cls in EVALUATOR_CONFIG_TYPES}


def config(kind: str, **options: Any) -> Any:
    return MODELS[kind].model_validate({"type": kind, **options})


CASES = [
    # id, type, options, answer, passed, text
    ("contains-hit", "contains", {"value": "Hello"}, "Hello, world", True, 'Output contains "Hello"'),
    ("contains-is-case-sensitive", "contains", {"value": "hello"}, "Hello", False, 'Output does not contain "hello"'),
    (
        "contains-in-json-text",
        "contains",
        {"value": '"status"'},
        '{"status": "ok"}',
        True,
        'Output contains ""status""',
    ),
    ("contains-empty-answer", "contains", {"value": "x"}, "", False, 'Output does not contain "x"'),
    ("icontains-hit", "icontains", {"value": "HELLO"}, "hello", True, 'Output contains "HELLO" (case-insensitive)'),
    (
        "icontains-miss",
        "icontains",
        {"value": "bye"},
        "hello",
        False,
        'Output does not contain "bye" (case-insensitive)',
    ),
    ("contains-any-first-match", "contains_any", {"value": ["x", "b", "a"]}, "ab", True, 'Output contains "b"'),
    (
        "contains-any-miss",
        "contains_any",
        {"value": ["X", "Y"]},
        "xy",
        False,
        'Output does not contain any of: "X", "Y"',
    ),
    (
        "icontains-any-hit",
        "icontains_any",
        {"value": ["nope", "WORLD"]},
        "hello world",
        True,
        'Output contains "WORLD" (case-insensitive)',
    ),
    (
        "icontains-any-miss",
        "icontains_any",
        {"value": ["a", "b"]},
        "xyz",
        False,
        'Output does not contain any of: "a", "b" (case-insensitive)',
    ),
    (
        "contains-all-hit",
        "contains_all",
        {"value": ["a", "b", "c"]},
        "cab",
        True,
        "Output contains all 3 expected strings",
    ),
    ("contains-all-miss", "contains_all", {"value": ["a", "B", "C"]}, "abc", False, 'Output missing: "B", "C"'),
    (
        "icontains-all-hit",
        "icontains_all",
        {"value": ["A", "b"]},
        "ab",
        True,
        "Output contains all 2 expected strings (case-insensitive)",
    ),
    (
        "icontains-all-miss",
        "icontains_all",
        {"value": ["A", "z"]},
        "ab",
        False,
        'Output missing (case-insensitive): "z"',
    ),
    (
        "starts-with-trims-both",
        "starts_with",
        {"value": " Dear "},
        "\n  Dear User",
        True,
        'Output starts with " Dear "',
    ),
    ("starts-with-miss", "starts_with", {"value": "Dear"}, "Hi Dear", False, 'Output does not start with "Dear"'),
    (
        "ends-with-trims-both",
        "ends_with",
        {"value": "Regards."},
        "Kind Regards.\n",
        True,
        'Output ends with "Regards."',
    ),
    ("ends-with-miss", "ends_with", {"value": "!"}, "Hi.", False, 'Output does not end with "!"'),
    ("equals-trims", "equals", {"value": "4"}, " 4\n", True, 'Output equals "4"'),
    ("equals-is-case-sensitive", "equals", {"value": "Yes"}, "yes", False, 'Output does not equal "Yes"'),
    ("equals-bom-trimmed-as-js", "equals", {"value": "4"}, "\ufeff4\u00a0", True, 'Output equals "4"'),
    ("regex-hit", "regex", {"value": "[Hh]ello"}, "hello", True, "Output matches pattern /[Hh]ello/"),
    ("regex-miss", "regex", {"value": "^\\d+$"}, "12a", False, "Output does not match pattern /^\\d+$/"),
    ("regex-flags", "regex", {"value": "^B", "flags": "im"}, "a\nb", True, "Output matches pattern /^B/im (flags: im)"),
    # JavaScript's `$` without `m` is the end of the text: not before a final line break
    ("regex-dollar-is-end", "regex", {"value": "^\\d+$"}, "42\n", False, "Output does not match pattern /^\\d+$/"),
    (
        "regex-named-group",
        "regex",
        {"value": "(?<d>\\d)\\k<d>"},
        "a11",
        True,
        "Output matches pattern /(?<d>\\d)\\k<d>/",
    ),
    (
        "regex-sticky",
        "regex",
        {"value": "b", "flags": "y"},
        "ab",
        False,
        "Output does not match pattern /b/y (flags: y)",
    ),
    ("regex-empty-answer", "regex", {"value": "a*"}, "", True, "Output matches pattern /a*/"),
    ("is-json-object", "is_json", {}, ' {"a": 1}\n', True, "Output is valid JSON"),
    ("is-json-scalar", "is_json", {}, "42", True, "Output is valid JSON"),
    ("is-json-fenced-is-not", "is_json", {}, '```json\n{"a": 1}\n```', False, "Output is not valid JSON"),
    ("is-json-nan-is-not", "is_json", {}, "NaN", False, "Output is not valid JSON"),
    ("is-json-empty", "is_json", {}, "", False, "Output is not valid JSON"),
    (
        "is-json-schema-fits",
        "is_json",
        {"schema": {"type": "object", "required": ["a"]}},
        '{"a": 1}',
        True,
        "Output is valid JSON and matches the schema",
    ),
    (
        "is-json-schema-misses",
        "is_json",
        {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        '{"a": 1}',
        False,
        "Output is valid JSON but does not match the schema: a: 1 is not of type 'string'",
    ),
    (
        "is-json-schema-not-json",
        "is_json",
        {"schema": {"type": "object"}},
        "{a: 1}",
        False,
        "Output is not valid JSON",
    ),
]


@pytest.mark.parametrize(
    ("kind", "options", "answer", "passed", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_check_scores_and_words_as_agentv(kind, options, answer, passed, text):
    outcome = run_check(config(kind, **options), answer)
    assert (outcome.score, outcome.passed, outcome.text, outcome.error) == (1.0 if passed else 0.0, passed, text, None)


@pytest.mark.parametrize(
    ("kind", "options", "answer", "passed", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_pure_check_never_negates(kind, options, answer, passed, text):
    # `negate` is every evaluator's, applied to the result (tests/evaluators/test_checks.py)
    outcome = run_check(config(kind, negate=True, **options), answer)
    assert (outcome.score, outcome.passed, outcome.text) == (1.0 if passed else 0.0, passed, text)
    assert "negated" not in outcome.details


def test_every_check_type_is_tested():
    assert {c[1] for c in CASES} == set(CHECK_TYPES)


def test_js_trim_is_javascripts():
    assert js_trim("\ufeff\u3000 a \u2028") == "a"
    assert js_trim("\x85a\x1c") == "\x85a\x1c"  # not JavaScript whitespace (Python's str.strip removes both)


def test_regex_scans_a_bounded_prefix_of_the_answer():
    answer = "a" * REGEX_SCAN_CHARS + "needle"
    outcome = run_check(config("regex", value="needle"), answer)
    assert outcome.passed is False
    assert outcome.text == (
        f"Output does not match pattern /needle/ (the first {REGEX_SCAN_CHARS} of {len(answer)} characters scanned)"
    )
    assert outcome.details == {"scanned_chars": REGEX_SCAN_CHARS, "answer_chars": len(answer)}
    assert run_check(config("regex", value="^a+"), answer).text == "Output matches pattern /^a+/"


def test_a_quadratic_pattern_on_a_hostile_answer_finishes():
    # AgentV's own email example pattern, on an answer built to backtrack: bounded by the scan
    pattern = "[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}"
    outcome = run_check(config("regex", value=pattern), "a" * 1_000_000)
    assert outcome.passed is False


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("x$", "x\\Z"),
        ("[$]$", "[$]\\Z"),
        ("\\$", "\\$"),
        ("(?<y>a)\\k<y>", "(?P<y>a)(?P=y)"),
        ("(?<=a)b(?<!c)", "(?<=a)b(?<!c)"),
        ("a[]", "a(?!)"),
        ("[^]", "[\\s\\S]"),
        ("[\\]$]", "[\\]$]"),
    ],
    ids=[
        "dollar",
        "dollar-in-class",
        "escaped-dollar",
        "named-group",
        "lookbehinds",
        "empty-class",
        "any",
        "class-escape",
    ],
)
def test_javascript_pattern_syntax_becomes_pythons(pattern, python):
    assert regex_for(pattern, None)[0].pattern == python


def test_multiline_keeps_dollar():
    assert regex_for("x$", "m")[0].pattern == "x$"


def test_an_unresolvable_schema_reference_is_an_error_never_a_fetch():
    check = config("is_json", schema={"$ref": "http://127.0.0.1:9/schema.json"})
    outcome = run_check(check, "{}")
    assert (
        outcome.error
        == "schema cannot be applied: _WrappedReferencingError: Unresolvable: http://127.0.0.1:9/schema.json"
    )
