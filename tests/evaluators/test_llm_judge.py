"""llm_judge and rubric against a real scripted chat-completions server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import re

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.media import ImageRef
from agentv_py.models.dataset import EvalCase
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.runner.targets import OpenAIRunner
from tests.chat_server import error, text
from tests.pngs import png

KEY = "sk-judge-SECRET-987654321"
VALID = {
    "score": 0.75,
    "hits": ["names the cat"],
    "misses": ["misses the mat"],
    "reasoning": "mostly right",
    "details": {"hallucinations": ["a dog"], "missing_elements": ["mat"]},
}


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "office.png"
    path.write_bytes(png(5, 4))
    return ImageRef("file", str(path), "image/png", "high")


def judge(server, vision=True, **extra) -> OpenAIRunner:
    config = OpenAITarget.model_validate(
        {
            "name": "judge",
            "provider": "openai",
            "model": "judge-model",
            "api_key": KEY,
            "base_url": server.base_url,
            "vision": vision,
            "max_retries": 1,
            **extra,
        }
    )
    return OpenAIRunner(config, [KEY])


def context(server, images=(), answer="A cat sits on a mat.", **judge_options) -> EvalContext:
    case = EvalCase.model_validate(
        {
            "id": "c1",
            "expected_outcome": "Mentions the cat",
            "input": "Describe the image.",
            "expected_output": "A cat on a mat.",
        }
    )
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=server and __import__("pathlib").Path("."),
        answer=answer,
        expected="A cat on a mat.",
        question="Describe the image.",
        images=tuple(images),
        case=case,
        judges={"judge": judge(server, **judge_options)},
        default_judge="judge",
    )


def llm(**config) -> LlmJudgeConfig:
    return LlmJudgeConfig.model_validate({"type": "llm_judge", "name": "describe", **config})


def test_request_model_template_images_and_no_key(chat_server, image):
    chat_server.reply(text(json.dumps(VALID)))
    prompt = (
        "Look at {{image_reference}} ({{ image_references }}).\n"
        "Q: {{question}}\nA: {{output}}\nRef: {{expected_output}}\nGoal: {{criteria}}"
    )
    result = run_evaluator(llm(prompt=prompt), context(chat_server, [image]))
    assert result.status == "processed", result.misses
    [request] = chat_server.requests
    assert request.body["model"] == "judge-model"
    system, user = request.body["messages"]
    assert system["role"] == "system" and '"required":["score"]' in system["content"]
    rendered, picture = user["content"]
    assert rendered == {
        "type": "text",
        "text": "Look at Image 1 (office.png) (Image 1 (office.png)).\nQ: Describe the image.\n"
        "A: A cat sits on a mat.\nRef: A cat on a mat.\nGoal: Mentions the cat",
    }
    header, payload = picture["image_url"]["url"].split(",", 1)
    assert header == "data:image/png;base64" and base64.b64decode(payload) == png(5, 4)
    assert picture["image_url"]["detail"] == "high"
    assert KEY not in json.dumps(result.model_dump())


def test_valid_reply_is_kept_verbatim(chat_server):
    chat_server.reply(text(json.dumps(VALID)))
    result = run_evaluator(llm(), context(chat_server))
    assert (result.score, result.verdict, result.hits, result.misses, result.reasoning) == (
        0.75,
        "partial",
        ["names the cat"],
        ["misses the mat"],
        "mostly right",
    )
    assert result.details["hallucinations"] == ["a dog"] and result.details["missing_elements"] == ["mat"]
    assert result.details["judge"] == {
        "target": "judge",
        "model": "judge-model",
        "replies": 1,
        "http_attempts": 1,
        "duration_ms": result.details["judge"]["duration_ms"],
        "token_usage": {"input": 42, "output": 7},
    }


def test_fenced_json_is_accepted(chat_server):
    chat_server.reply(text("Here is my evaluation:\n```json\n" + json.dumps(VALID) + "\n```"))
    assert run_evaluator(llm(), context(chat_server)).score == 0.75


def test_prose_is_retried_then_an_error_quoting_the_last_reply(chat_server):
    prose = "The answer looks good to me, I would give it a high score. " * 5
    chat_server.reply(text("I think 0.9."), text("Score: 9/10"), text(prose))
    result = run_evaluator(llm(), context(chat_server))
    assert result.status == "error" and result.score == 0.0 and result.verdict == "fail"
    assert result.misses == [
        "llm_judge 'describe': no valid reply from judge target 'judge' in 3 attempts (the reply is not JSON); "
        f"last reply: {prose[:200] + '...'!r}"
    ]
    assert len(chat_server.requests) == 3
    retry = chat_server.requests[1].body["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I think 0.9."}
    assert retry[-1]["content"].startswith("That reply is not valid (the reply is not JSON).")
    assert result.details["judge"]["replies"] == 3


def jsonschema_problem(where: str) -> str:
    """A pattern for `schema_problem`'s text: agentv's location ("score: "), then jsonschema's own
    sentence, which may be any non-empty text (its wording is jsonschema's, not agentv's)."""
    return re.escape(f"{where}: ") + ".+" if where else ".+"


def no_valid_reply(evaluator: str, problem: str, reply: str) -> str:
    """A pattern for the whole miss after three invalid replies; `problem` is itself a pattern."""
    return (
        re.escape(f"{evaluator}: no valid reply from judge target 'judge' in 3 attempts (")
        + problem
        + re.escape(f"); last reply: {reply!r}")
    )


def test_prose_then_valid_json(chat_server):
    chat_server.reply(text("Sure!"), text(json.dumps(VALID)))
    result = run_evaluator(llm(), context(chat_server))
    assert result.score == 0.75 and result.details["judge"]["replies"] == 2


@pytest.mark.parametrize(
    "reply, where",
    [
        ({"score": 1.5}, "score"),
        ({"score": -0.1}, "score"),
        ({"score": "0.9"}, "score"),
        ({"hits": []}, ""),  # a missing key is reported at the object itself: no location
        ({"score": 0.5, "hits": "good"}, "hits"),
    ],
    ids=["above-1", "below-0", "string", "missing", "hits-not-list"],
)
def test_out_of_range_or_malformed_scores_are_never_clamped(chat_server, reply, where):
    chat_server.reply(*[text(json.dumps(reply))] * 3)
    result = run_evaluator(llm(), context(chat_server))
    assert result.status == "error" and result.score == 0.0
    assert len(result.misses) == 1, result.misses
    pattern = no_valid_reply("llm_judge 'describe'", jsonschema_problem(where), json.dumps(reply))
    assert re.fullmatch(pattern, result.misses[0]), result.misses


def test_429_then_success(chat_server):
    chat_server.reply(error(429, "rate limited", headers={"retry-after-ms": "10"}), text(json.dumps(VALID)))
    result = run_evaluator(llm(), context(chat_server))
    assert result.score == 0.75 and result.details["judge"]["http_attempts"] == 2


def test_500_is_an_error_after_the_clients_retries(chat_server):
    chat_server.reply(*[error(500, "model crashed", headers={"retry-after-ms": "5"})] * 2)
    result = run_evaluator(llm(), context(chat_server))
    assert result.misses == [
        f"llm_judge 'describe': judge target 'judge' failed: HTTP 500 from {chat_server.base_url} "
        "(2 attempts): model crashed"
    ]
    assert len(chat_server.requests) == 2


def test_a_reply_that_never_comes(chat_server):
    chat_server.reply(text("{}", delay=3), text("{}", delay=3))
    result = run_evaluator(llm(), context(chat_server, timeout_seconds=0.3))
    assert result.misses == [
        f"llm_judge 'describe': judge target 'judge' failed: no reply within 0.3s from "
        f"{chat_server.base_url} (2 attempts)"
    ]


def test_images_need_a_vision_judge(chat_server, image):
    result = run_evaluator(llm(), context(chat_server, [image], vision=False))
    assert result.misses == [
        "llm_judge 'describe': judge target 'judge' is not marked vision: true, but this case has images"
    ]
    assert chat_server.requests == []


def test_dimension_scores_use_declared_weights(chat_server):
    reply = {
        "dimensions": {
            "visual_accuracy": 1.0,
            "completeness": {"score": 0.5, "reasoning": "no mat"},
            "clarity": 0.8,
            "relevance": 0.0,
        },
        "details": {"hallucinations": [], "missing_elements": ["mat"]},
    }
    chat_server.reply(text(json.dumps(reply)))
    config = llm(dimensions={"visual_accuracy": 40, "completeness": 30, "clarity": 20, "relevance": 10})
    result = run_evaluator(config, context(chat_server))
    assert result.score == pytest.approx((40 * 1.0 + 30 * 0.5 + 20 * 0.8) / 100)
    assert result.details["dimension_scores"]["completeness"] == {"score": 0.5, "weight": 30.0, "reasoning": "no mat"}
    assert result.details["missing_elements"] == ["mat"]
    system = chat_server.requests[0].body["messages"][0]["content"]
    assert "- visual_accuracy: weight 40%" in system and "- relevance: weight 10%" in system


@pytest.mark.parametrize(
    "dimensions, where",
    [
        ({"visual_accuracy": 1.0}, "dimensions"),
        ({"visual_accuracy": 1.0, "completeness": 1.0, "style": 1.0}, "dimensions"),
        ({"visual_accuracy": 1.0, "completeness": 2}, "dimensions.completeness"),
    ],
    ids=["missing", "extra", "out-of-range"],
)
def test_invalid_dimension_replies(chat_server, dimensions, where):
    chat_server.reply(*[text(json.dumps({"dimensions": dimensions}))] * 3)
    result = run_evaluator(llm(dimensions={"visual_accuracy": 1, "completeness": 1}), context(chat_server))
    assert result.status == "error" and len(result.misses) == 1, result.misses
    pattern = no_valid_reply("llm_judge 'describe'", jsonschema_problem(where), json.dumps({"dimensions": dimensions}))
    assert re.fullmatch(pattern, result.misses[0]), result.misses


RUBRICS = [
    {"id": "cat", "description": "Mentions the cat", "weight": 2},
    {"id": "mat", "description": "Mentions the mat"},
    {"id": "style", "description": "One sentence", "required": False},
]


def rubric(**extra) -> RubricConfig:
    return RubricConfig.model_validate({"type": "rubric", "name": "checks", "rubrics": RUBRICS, **extra})


def checks(cat=True, mat=True, style=True, **extra):
    return {
        "checks": [
            {"id": "cat", "satisfied": cat, "reasoning": "says cat"},
            {"id": "mat", "satisfied": mat, "reasoning": "says mat"},
            {"id": "style", "satisfied": style, "reasoning": "one line"},
        ],
        "overall_reasoning": "fine",
        **extra,
    }


def test_rubric_all_satisfied(chat_server):
    chat_server.reply(text(json.dumps(checks())))
    result = run_evaluator(rubric(), context(chat_server))
    assert (result.score, result.verdict, result.passed) == (1.0, "pass", True)
    assert result.hits == [
        "[cat] Mentions the cat: says cat",
        "[mat] Mentions the mat: says mat",
        "[style] One sentence: one line",
    ]
    assert "[cat] Mentions the cat (required, weight 2)" in chat_server.requests[0].body["messages"][0]["content"]


def test_rubric_optional_miss_lowers_the_score(chat_server):
    chat_server.reply(text(json.dumps(checks(style=False))))
    result = run_evaluator(rubric(), context(chat_server))
    assert (result.score, result.verdict) == (0.75, "partial")
    assert result.misses == ["[style] One sentence: one line"]


def test_rubric_required_miss_fails_whatever_the_score(chat_server):
    chat_server.reply(text(json.dumps(checks(mat=False))))
    result = run_evaluator(rubric(), context(chat_server))
    assert (result.score, result.verdict, result.passed) == (0.75, "fail", False)
    assert result.reasoning == "required rubric not met: mat; fine"
    assert result.details["required_failed"] == ["mat"]


@pytest.mark.parametrize(
    "reply, problem",
    [
        # agentv's own problems, exactly
        ({"checks": [{"id": "cat", "satisfied": True}]}, re.escape("checks: no check for rubric mat, style")),
        ({"checks": [{"id": "cat", "satisfied": True}] * 2}, re.escape("checks: rubric cat checked more than once")),
        # the schema's: agentv's location, then jsonschema's sentence
        ({"checks": [{"id": "dog", "satisfied": True}]}, jsonschema_problem("checks[0].id")),
        ({"checks": [{"id": "cat", "satisfied": "yes"}]}, jsonschema_problem("checks[0].satisfied")),
    ],
    ids=["missing", "duplicate", "unknown-id", "not-bool"],
)
def test_invalid_rubric_replies(chat_server, reply, problem):
    chat_server.reply(*[text(json.dumps(reply))] * 3)
    result = run_evaluator(rubric(), context(chat_server))
    assert result.status == "error" and len(result.misses) == 1, result.misses
    assert re.fullmatch(no_valid_reply("rubric 'checks'", problem, json.dumps(reply)), result.misses[0]), result.misses


def test_rubric_strings_are_shorthand():
    config = RubricConfig.model_validate({"type": "rubric", "rubrics": ["Mentions the cat", "Is short"]})
    assert [(r.id, r.description, r.weight, r.required) for r in config.rubrics] == [
        ("r1", "Mentions the cat", 1.0, True),
        ("r2", "Is short", 1.0, True),
    ]
