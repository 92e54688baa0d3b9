"""The code-judge result contract (agentv_py.scoring.judge_contract), shared by the code_judge
evaluator and the judge SDK."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentv_py.scoring.judge_contract import RESULT_KEYS, STATUSES, is_score, result_problems

NAN, INF = float("nan"), float("inf")

# (id, result, problems shown as JSON, problems shown as reprs)
CASES = [
    ("minimal", {"score": 0.5}, [], []),
    (
        "full",
        {
            "score": 1,
            "hits": ["a"],
            "misses": [],
            "reasoning": "r",
            "details": {"k": [1]},
            "passed": False,
            "status": "processed",
            "other": "ignored",
        },
        [],
        [],
    ),
    ("zero-and-one", {"score": 0}, [], []),
    (
        "no-score",
        {"reasoning": "fine"},
        ["the result has no 'score' (a number in [0, 1])"],
        ["the result has no 'score' (a number in [0, 1])"],
    ),
    (
        "string-score",
        {"score": "0.9"},
        ['score must be a number in [0, 1], got "0.9"'],
        ["score must be a number in [0, 1], got '0.9'"],
    ),
    (
        "bool-score",
        {"score": True},
        ["score must be a number in [0, 1], got true"],
        ["score must be a number in [0, 1], got True"],
    ),
    (
        "null-score",
        {"score": None},
        ["score must be a number in [0, 1], got null"],
        ["score must be a number in [0, 1], got None"],
    ),
    (
        "above-one",
        {"score": 1.5},
        ["score must be a number in [0, 1], got 1.5"],
        ["score must be a number in [0, 1], got 1.5"],
    ),
    (
        "negative",
        {"score": -0.1},
        ["score must be a number in [0, 1], got -0.1"],
        ["score must be a number in [0, 1], got -0.1"],
    ),
    (
        "nan",
        {"score": NAN},
        ["score must be a number in [0, 1], got nan"],
        ["score must be a number in [0, 1], got nan"],
    ),
    (
        "infinity",
        {"score": INF},
        ["score must be a number in [0, 1], got inf"],
        ["score must be a number in [0, 1], got inf"],
    ),
    (
        "huge-int",
        {"score": 10**400},
        ["score must be a number in [0, 1], got " + "1" + "0" * 59],
        ["score must be a number in [0, 1], got " + "1" + "0" * 59],
    ),
    (
        "hits-not-strings",
        {"score": 1, "hits": [1]},
        ["'hits' must be a list of strings, got [1]"],
        ["'hits' must be a list of strings, got [1]"],
    ),
    (
        "misses-not-a-list",
        {"score": 1, "misses": "x"},
        ["'misses' must be a list of strings, got \"x\""],
        ["'misses' must be a list of strings, got 'x'"],
    ),
    (
        "reasoning-null",
        {"score": 1, "reasoning": None},
        ["'reasoning' must be a string, got null"],
        ["'reasoning' must be a string, got None"],
    ),
    (
        "details-not-object",
        {"score": 1, "details": "x"},
        ["'details' must be an object, got \"x\""],
        ["'details' must be an object, got 'x'"],
    ),
    (
        "passed-not-bool",
        {"score": 1, "passed": 1},
        ["'passed' must be true or false, got 1"],
        ["'passed' must be true or false, got 1"],
    ),
    (
        "bad-status",
        {"score": 1, "status": "ok"},
        ['status must be processed, error or skipped, got "ok"'],
        ["status must be processed, error or skipped, got 'ok'"],
    ),
    (
        "long-value-cut-at-60",
        {"score": 1, "hits": ["x" * 100, 1]},
        ["'hits' must be a list of strings, got " + json.dumps(["x" * 100])[:60]],
        ["'hits' must be a list of strings, got " + repr(["x" * 100])[:60]],
    ),
    # the score matters only when the status is processed
    ("skipped-without-score", {"status": "skipped", "reasoning": "no items"}, [], []),
    ("skipped-with-null-score", {"status": "skipped", "score": None}, [], []),
    ("error-with-bad-score", {"status": "error", "score": "x"}, [], []),
    (
        "bad-status-skips-score",
        {"status": "ok", "score": 2},
        ['status must be processed, error or skipped, got "ok"'],
        ["status must be processed, error or skipped, got 'ok'"],
    ),
    (
        "every-problem-in-order",
        {
            "status": "processed",
            "score": 2,
            "hits": "a",
            "misses": [None],
            "reasoning": 1,
            "details": [],
            "passed": "yes",
        },
        [
            "'hits' must be a list of strings, got \"a\"",
            "'misses' must be a list of strings, got [null]",
            "'reasoning' must be a string, got 1",
            "'details' must be an object, got []",
            "'passed' must be true or false, got \"yes\"",
            "score must be a number in [0, 1], got 2",
        ],
        [
            "'hits' must be a list of strings, got 'a'",
            "'misses' must be a list of strings, got [None]",
            "'reasoning' must be a string, got 1",
            "'details' must be an object, got []",
            "'passed' must be true or false, got 'yes'",
            "score must be a number in [0, 1], got 2",
        ],
    ),
]


@pytest.mark.parametrize("result, as_json, as_repr", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_result_problems(result, as_json, as_repr):
    assert result_problems(result, show=json.dumps) == as_json
    assert result_problems(result, show=repr) == as_repr
    assert result_problems(result) == as_repr  # repr is the default


@pytest.mark.parametrize(
    "value, ok",
    [
        (0, True),
        (1, True),
        (0.0, True),
        (1.0, True),
        (0.5, True),
        (True, False),
        (False, False),
        (-0.01, False),
        (1.01, False),
        (NAN, False),
        (INF, False),
        (-INF, False),
        ("0.5", False),
        (None, False),
        ([0.5], False),
        (10**400, False),
    ],
)
def test_is_score(value, ok):
    assert is_score(value) is ok


def test_keys_and_statuses():
    assert RESULT_KEYS == ("score", "hits", "misses", "reasoning", "details", "passed", "status")
    assert STATUSES == ("processed", "error", "skipped")


def test_imports_no_pydantic():
    """The judge SDK imports the contract in judges' own interpreters, which may lack pydantic."""
    code = (
        "import sys, agentv_py.scoring.judge_contract; "
        "print(sorted(m for m in ('pydantic', 'dataclasses', 'agentv_py.models') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
