"""A code grader's reply read as AgentV v4.42.4 reads it (`payload_format: "4.42"`): the score
given or derived from the assertions, and every shape that cannot be scored named, never a 0."""

from __future__ import annotations

import pytest

from agentv_py.scoring.grader_reply import Assertion, GraderReply, plain_text_reply, read_grader_reply

OK = {"text": "has total", "passed": True}
BAD = {"text": "has date", "passed": False, "evidence": "no date found"}

SCORED = [
    ("assertions-only-all-passed", {"assertions": [OK, OK]}, 1.0, ["has total", "has total"], []),
    (
        "assertions-only-derived",
        {"assertions": [OK, BAD, {"text": "c", "passed": False}]},
        1 / 3,
        ["has total"],
        ["has date: no date found", "c"],
    ),
    (
        "score-wins-over-assertions",
        {"score": 0.9, "assertions": [OK, BAD]},
        0.9,
        ["has total"],
        ["has date: no date found"],
    ),
    ("score-only", {"score": 0.25}, 0.25, [], []),
    ("score-int", {"score": 1}, 1.0, [], []),
    ("null-evidence-is-none", {"assertions": [{**BAD, "evidence": None}]}, 0.0, [], ["has date"]),
    ("other-keys-ignored", {"score": 0.5, "hits": ["x"], "misses": 3, "status": "odd"}, 0.5, [], []),
]


@pytest.mark.parametrize("data, score, hits, misses", [c[1:] for c in SCORED], ids=[c[0] for c in SCORED])
def test_replies_are_scored_as_agentv_scores_them(data, score, hits, misses):
    reply = read_grader_reply(data)
    assert isinstance(reply, GraderReply)
    assert reply.score == pytest.approx(score)
    assert (reply.hits, reply.misses) == (hits, misses)


def test_details_and_reasoning_are_kept_when_of_the_right_kind():
    reply = read_grader_reply({"score": 1, "details": {"n": 1}, "reasoning": "fine"})
    assert isinstance(reply, GraderReply) and (reply.details, reply.reasoning) == ({"n": 1}, "fine")
    dropped = read_grader_reply({"score": 1, "details": [1], "reasoning": 7})
    assert isinstance(dropped, GraderReply) and (dropped.details, dropped.reasoning) == (None, "")


PROBLEMS = [
    (
        "empty-object",
        {},
        "the result has neither 'score' (a number in [0, 1]) nor 'assertions' "
        "(a list of {text, passed, evidence?} objects): nothing to score",
    ),
    ("empty-assertions", {"assertions": []}, "'assertions' is empty and the result has no 'score': nothing to score"),
    ("score-above-one", {"score": 1.5}, "score must be a number in [0, 1], got 1.5"),
    ("score-negative", {"score": -0.1, "assertions": [OK]}, "score must be a number in [0, 1], got -0.1"),
    ("score-nan", {"score": float("nan")}, "score must be a number in [0, 1], got nan"),
    ("score-infinite", {"score": float("inf")}, "score must be a number in [0, 1], got inf"),
    ("score-string", {"score": "0.9"}, 'score must be a number in [0, 1], got "0.9"'),
    ("score-bool", {"score": True}, "score must be a number in [0, 1], got true"),
    ("score-null", {"score": None, "assertions": [OK]}, "score must be a number in [0, 1], got null"),
    (
        "assertions-object",
        {"assertions": {"text": "x"}},
        """'assertions' must be a list of {text, passed, evidence?} objects, got {"text": "x"}""",
    ),
    (
        "assertion-string",
        {"assertions": [OK, "ok"]},
        'assertions[1] must be an object {text, passed, evidence?}, got "ok"',
    ),
    ("assertion-no-text", {"assertions": [{"passed": True}]}, "assertions[0].text must be a string, got nothing"),
    (
        "assertion-text-number",
        {"assertions": [{"text": 1, "passed": True}]},
        "assertions[0].text must be a string, got 1",
    ),
    ("assertion-no-passed", {"assertions": [{"text": "x"}]}, "assertions[0].passed must be true or false, got nothing"),
    (
        "assertion-passed-string",
        {"assertions": [{"text": "x", "passed": "yes"}]},
        'assertions[0].passed must be true or false, got "yes"',
    ),
    (
        "assertion-evidence-object",
        {"assertions": [{"text": "x", "passed": True, "evidence": {"a": 1}}]},
        'assertions[0].evidence must be a string, got {"a": 1}',
    ),
    (
        "bad-value-cut",
        {"score": "x" * 500},
        f'score must be a number in [0, 1], got "{"x" * 59}',
    ),
]


@pytest.mark.parametrize("data, problem", [c[1:] for c in PROBLEMS], ids=[c[0] for c in PROBLEMS])
def test_unscorable_replies_name_the_key(data, problem):
    assert read_grader_reply(data) == problem


PLAIN = [
    ("exit-0-text", "looks good\n", 0, 1.0, Assertion("looks good", True)),
    ("exit-0-empty", "", 0, 1.0, Assertion("exit 0", True)),
    ("exit-1-text", "missing total", 1, 0.0, Assertion("missing total", False)),
    ("exit-3-empty", "  ", 3, 0.0, Assertion("exit 3", False)),
]


@pytest.mark.parametrize("stdout, code, score, assertion", [c[1:] for c in PLAIN], ids=[c[0] for c in PLAIN])
def test_plain_text_is_a_verdict_by_exit_code(stdout, code, score, assertion):
    assert plain_text_reply(stdout, code) == GraderReply(score=score, assertions=(assertion,))
