"""`tool_trajectory`'s v4.42 options as configured in a dataset: `args_match` on the evaluator
and on each expected step (the step's wins; neither: `superset`), modes `superset` and `subset`,
and their load errors (exact, located)."""

from __future__ import annotations

import pytest

from agentv_py.evaluators import run_evaluator
from tests.evaluators.test_trace_evaluators import AT, context, load_evaluator, problems

INVALID = [
    (
        "bad-args-match",
        "{type: tool_trajectory, mode: in_order, args_match: loose, expected: [{tool: a}]}",
        f"{AT}.args_match: Invalid args_match: loose. Valid values: exact, superset, subset, ignore",
    ),
    (
        "empty-field-list",
        "{type: tool_trajectory, mode: in_order, args_match: [], expected: [{tool: a}]}",
        f"{AT}.args_match: args_match must be one of exact, superset, subset, ignore or a list of argument "
        "fields (dot paths such as [source, options.limit]), got []",
    ),
    (
        "bad-step-args-match",
        "{type: tool_trajectory, mode: exact, expected: [{tool: a, args_match: 3}]}",
        f"{AT}.expected[0].args_match: args_match must be one of exact, superset, subset, ignore or a list of "
        "argument fields (dot paths such as [source, options.limit]), got 3",
    ),
    (
        "args-match-on-any-order",
        "{type: tool_trajectory, mode: any_order, minimums: {a: 1}, args_match: exact}",
        f"{AT}.args_match: 'args_match' does not apply to mode any_order (it counts calls by tool name)",
    ),
    (
        "latency-in-superset",
        "{type: tool_trajectory, mode: superset, expected: [{tool: a, max_duration_ms: 5}]}",
        f"{AT}.expected: max_duration_ms (on 'a') applies to modes in_order and exact only",
    ),
    (
        "empty-superset",
        "{type: tool_trajectory, mode: superset, expected: []}",
        f"{AT}.expected: expected must list at least one tool call",
    ),
]


@pytest.mark.parametrize(("evaluator", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_options_are_located_load_errors(ws, evaluator, message):
    assert problems(ws, evaluator) == [message]


MESSAGES = [
    {
        "role": "assistant",
        "tool_calls": [
            {"tool": "search", "input": {"q": "paris", "limit": 5}},
            {"tool": "fetch", "input": {"url": "u", "opts": {"retry": 1}}},
        ],
    }
]
# id, evaluator, score, hits, misses
RUNS = [
    (
        "default-superset-extra-key-ok",
        "{type: tool_trajectory, mode: in_order, expected: [{tool: search, args: {q: paris}}]}",
        1.0,
        ["Found search at position 0"],
        [],
    ),
    (
        "exact-refuses-extra-key",
        "{type: tool_trajectory, mode: in_order, args_match: exact, expected: [{tool: search, args: {q: paris}}]}",
        0.0,
        [],
        ["Expected search at position 0: tool found at 0 but args mismatch"],
    ),
    (
        "step-overrides-evaluator",
        "{type: tool_trajectory, mode: exact, args_match: exact, expected: "
        "[{tool: search, args: {q: paris}, args_match: superset}, {tool: fetch, args: {opts: {retry: 1}}, "
        "args_match: [opts.retry]}]}",
        1.0,
        ["Position 0: search", "Position 1: fetch"],
        [],
    ),
    (
        "superset-any-order",
        "{type: tool_trajectory, mode: superset, expected: [{tool: fetch}, {tool: search}, {tool: write}]}",
        2 / 3,
        ["Found fetch at position 1", "Found search at position 0"],
        ["Expected write not found in actual trajectory"],
    ),
    (
        "subset-allowed-set",
        "{type: tool_trajectory, mode: subset, args_match: ignore, expected: [{tool: search, args: {q: x}}]}",
        0.5,
        ["Position 0: search is in allowed set"],
        ["Position 1: fetch is not in allowed set"],
    ),
    (
        "subset-empty-allows-nothing",
        "{type: tool_trajectory, mode: subset, expected: []}",
        0.0,
        [],
        ["2 unexpected tool call(s) with empty allowed list"],
    ),
]


@pytest.mark.parametrize(("evaluator", "score", "hits", "misses"), [r[1:] for r in RUNS], ids=[r[0] for r in RUNS])
def test_args_match_and_modes_score_as_agentv(ws, evaluator, score, hits, misses):
    result = run_evaluator(load_evaluator(ws, evaluator), context(MESSAGES))
    assert (result.score, result.hits, result.misses) == (pytest.approx(score), hits, misses)
    assert result.details["tool_calls"] == ["search", "fetch"]


def test_args_match_spelled_in_camel_case(ws):
    loaded = load_evaluator(ws, "{type: tool_trajectory, mode: exact, argsMatch: ignore, expected: [{tool: a}]}")
    assert loaded.args_match == "ignore"
