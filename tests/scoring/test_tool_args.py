"""`args_match` (AgentV v4.42.4: exact, superset, subset, ignore, a list of fields) and the
`superset` and `subset` trajectory modes: AgentV's scores and texts, word for word."""

from __future__ import annotations

import pytest

from agentv_py.scoring.tool_args import ExpectedCall, args_match, subset, superset
from agentv_py.scoring.trace import ToolCall

Q = {"q": "x", "limit": 5}
# id, expected args, actual input, mode, matches
ARGS = [
    ("exact-same", {"q": "x", "limit": 5}, Q, "exact", True),
    ("exact-extra-key", {"q": "x"}, Q, "exact", False),
    ("exact-missing-key", {"q": "x", "limit": 5, "page": 1}, Q, "exact", False),
    ("exact-int-float", {"q": "x", "limit": 5.0}, Q, "exact", True),
    ("superset-extra-key", {"q": "x"}, Q, "superset", True),
    ("superset-wrong-value", {"q": "y"}, Q, "superset", False),
    ("superset-missing-key", {"page": 1}, Q, "superset", False),
    ("subset-fewer-keys", {"q": "x", "limit": 5, "page": 1}, Q, "subset", True),
    ("subset-unexpected-key", {"q": "x"}, Q, "subset", False),
    ("subset-wrong-value", {"q": "x", "limit": 6, "page": 1}, Q, "subset", False),
    ("ignore", {"q": "y"}, Q, "ignore", True),
    ("ignore-no-input", {"q": "y"}, None, "ignore", True),
    ("fields-listed-only", {"q": "x", "limit": 9}, Q, ("q",), True),
    ("fields-listed-differs", {"q": "y"}, Q, ("q",), False),
    ("fields-not-in-expected-skipped", {"q": "x"}, Q, ("q", "page"), True),
    ("fields-absent-in-input", {"page": 1}, Q, ("page",), False),
    ("fields-dot-path", {"o": {"a": 1, "b": 2}}, {"o": {"a": 1, "b": 3}}, ("o.a",), True),
    ("fields-dot-path-differs", {"o": {"a": 1}}, {"o": {"a": 2}}, ("o.a",), False),
    ("fields-list-index", {"xs": [1, 2]}, {"xs": [1, 3]}, ("xs.0",), True),
    ("fields-list-index-differs", {"xs": [1, 2]}, {"xs": [1, 3]}, ("xs.1",), False),
    ("no-args-any-mode", None, Q, "exact", True),
    ("args-any", "any", None, "exact", True),
    ("no-input", {"q": "x"}, None, "superset", False),
    ("input-not-an-object", {"q": "x"}, "q=x", "exact", False),
    ("null-is-a-value", {"q": None}, {}, "superset", False),
]


@pytest.mark.parametrize(("expected", "actual", "mode", "result"), [a[1:] for a in ARGS], ids=[a[0] for a in ARGS])
def test_args_match_modes(expected, actual, mode, result):
    assert args_match(expected, actual, mode) is result


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(name, args or None)


def step(tool: str, args: object = None, mode: object = "superset") -> ExpectedCall:
    return ExpectedCall(tool, args, None, mode)  # type: ignore[arg-type]


# id, expected, calls, score, hits, misses
SUPERSET = [
    ("empty", [], [call("a")], 1.0, ["No expected tools specified"], []),
    (
        "all-found-extras-ok",
        [step("b"), step("a")],
        [call("a"), call("x"), call("b")],
        1.0,
        ["Found b at position 2", "Found a at position 0"],
        [],
    ),
    (
        "each-call-used-once",
        [step("a"), step("a")],
        [call("a")],
        0.5,
        ["Found a at position 0"],
        ["Expected a not found in actual trajectory"],
    ),
    (
        "args-checked",
        [step("a", {"q": 1}, "exact")],
        [call("a", q=1, r=2), call("a", q=1)],
        1.0,
        ["Found a at position 1"],
        [],
    ),
]


@pytest.mark.parametrize(
    ("expected", "calls", "score", "hits", "misses"), [c[1:] for c in SUPERSET], ids=[c[0] for c in SUPERSET]
)
def test_superset(expected, calls, score, hits, misses):
    outcome = superset(expected, calls)
    assert (outcome.score, outcome.hits, outcome.misses) == (score, hits, misses)


SUBSET = [
    ("empty-allowed-no-calls", [], [], 1.0, ["No tool calls and no expected tools"], []),
    (
        "empty-allowed-some-calls",
        [],
        [call("a"), call("b")],
        0.0,
        [],
        ["2 unexpected tool call(s) with empty allowed list"],
    ),
    ("no-calls", [step("a")], [], 1.0, ["No actual tool calls (trivially a subset)"], []),
    (
        "reusable-allowed-set",
        [step("a"), step("b")],
        [call("a"), call("a"), call("c")],
        2 / 3,
        ["Position 0: a is in allowed set", "Position 1: a is in allowed set"],
        ["Position 2: c is not in allowed set"],
    ),
    (
        "args-checked",
        [step("a", {"path": "/tmp"}, "exact")],
        [call("a", path="/tmp"), call("a", path="/etc")],
        0.5,
        ["Position 0: a is in allowed set"],
        ["Position 1: a is not in allowed set"],
    ),
]


@pytest.mark.parametrize(
    ("expected", "calls", "score", "hits", "misses"), [c[1:] for c in SUBSET], ids=[c[0] for c in SUBSET]
)
def test_subset(expected, calls, score, hits, misses):
    outcome = subset(expected, calls)
    assert (outcome.score, outcome.hits, outcome.misses) == (pytest.approx(score), hits, misses)
