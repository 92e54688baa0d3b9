"""`llm_judge` and `rubric`: a judge target (any ChatClient) scores the answer.

The judge's reply must be JSON valid against the evaluator's schema. An invalid reply is sent
back with the reason (up to 3 attempts); after that the result is an error quoting the first 200
characters of the last reply. A judge that cannot be reached is an error at once (the client has
already retried 429/5xx/timeouts with backoff).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentv_py.chat import ChatClient, ChatMessage, ChatReply, at_temperature, sum_usage
from agentv_py.evaluators.base import EvalContext, error_result, processed_result, reference_answer
from agentv_py.evaluators.code_judge import run_prompt_script
from agentv_py.evaluators.preprocess import judged_answer
from agentv_py.media import image_references
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig
from agentv_py.models.results import EvaluatorResult
from agentv_py.prompts import read_prompt_template
from agentv_py.scoring.judging import (
    dimension_score,
    dimensions_schema,
    extract_json,
    gate_label,
    render_template,
    rubric_checks_problem,
    rubric_listing,
    rubric_outcome,
    rubric_schema,
    schema_problem,
    score_range_outcome,
    score_ranges_listing,
    score_ranges_schema,
    score_schema,
    uses_score_ranges,
)

REPLY_ATTEMPTS = 3
QUOTE_CHARS = 200

_CASE = """
[Task input]
{{input}}

[Expected outcome]
{{expected_outcome}}

[Reference answer]
{{expected_output}}

[Candidate output]
{{output}}
"""
DEFAULT_PROMPT = "Evaluate the candidate output for the task below.\n" + _CASE
RUBRIC_PROMPT = (
    "Check the candidate output against each rubric item below. An item is satisfied only when the\n"
    "output clearly meets it.\n" + _CASE
)
SCORE_RANGES_PROMPT = (
    "Score the candidate output on each criterion below, from 0 to 10, using the criterion's score ranges.\n" + _CASE
)


def _template(config: LlmJudgeConfig, context: EvalContext) -> tuple[str, str | None]:
    """The judge's prompt template: inline or already read at load time, else its prompt file
    read now (a config built in code), else the default prompt. (template, None) or ("", why)."""
    if config.template is not None:
        return config.template, None
    if config.prompt_file is None:
        return DEFAULT_PROMPT, None
    text, problem = read_prompt_template(config.prompt_file, context.dataset_dir)
    return (text, None) if text is not None else ("", problem)


def template_values(context: EvalContext, output: str | None = None) -> dict[str, str]:
    """A judge template's values; `output`: the answer as the judge sees it (default: as given)."""
    references = image_references(context.images)
    case = context.case
    return {
        "input": context.question,
        "output": context.answer if output is None else output,
        "expected_output": reference_answer(context.case, context.expected),
        "expected_outcome": (case.expected_outcome if case else None) or "",
        "image_reference": references[0] if references else "(no image)",
        "image_references": ", ".join(references) if references else "(no images)",
    }


def system_prompt(schema: dict[str, Any], instructions: str, has_images: bool) -> str:
    seeing = " and the attached images" if has_images else ""
    return (
        "You are a careful, impartial evaluator. Judge only from the information given"
        + seeing
        + ".\n"
        + instructions
        + "\nReply with only a JSON object (no prose before or after it) valid against this JSON Schema:\n"
        + json.dumps(schema, separators=(",", ":"))
    )


def score_instructions(config: LlmJudgeConfig) -> str:
    if not config.dimensions:
        return (
            "Give `score` from 0.0 (wrong or useless) to 1.0 (fully correct), with short `hits` and "
            "`misses`, a one-line `reasoning`, and any structured findings under `details`."
        )
    total = sum(config.dimensions.values())
    listed = "\n".join(f"- {name}: weight {weight / total:.0%}" for name, weight in config.dimensions.items())
    return (
        "Score every dimension below from 0.0 to 1.0 under `dimensions` (a number, or {score, reasoning}); "
        "add short `hits` and `misses`, a one-line `reasoning`, and structured findings under `details`.\n" + listed
    )


@dataclass
class Exchange:
    """One judge conversation: the replies it took and what they cost."""

    client: ChatClient
    messages: list[ChatMessage]
    replies: list[ChatReply] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        usage = sum_usage(reply.usage for reply in self.replies)
        last = self.replies[-1] if self.replies else None
        data: dict[str, Any] = {
            "target": self.client.name,
            "model": last.model if last else None,
            "replies": len(self.replies),
            "http_attempts": sum(r.attempts for r in self.replies),
            "duration_ms": round(sum(r.duration_ms for r in self.replies), 3),
        }
        if usage:
            data["token_usage"] = usage
        if self.replies and all(reply.cached for reply in self.replies):
            data["cached"] = True  # every reply came from the judge cache: no call was made
        return {k: v for k, v in data.items() if v is not None}


def judge_client(config: LlmJudgeConfig | RubricConfig, context: EvalContext) -> tuple[ChatClient | None, str | None]:
    name = config.target or context.default_judge
    if name is None:
        return None, (
            "no judge target: set target: NAME on the evaluator, execution.judge_target in the "
            "dataset, or judge_target on the eval target"
        )
    client = context.judges.get(name)
    if client is None:
        return None, f"judge target '{name}' is not available in this run"
    if context.images and not client.vision:
        return None, f"judge target '{name}' is not marked vision: true, but this case has images"
    return at_temperature(client, config.temperature), None


def _ask(exchange: Exchange, validate: Callable[[Any], str | None]) -> tuple[ChatReply, Any, str | None]:
    """One reply, its value and why it is not valid (None: it is). The judge cache is told the
    verdict (`ChatReply.settle`): it keeps only valid replies."""
    reply = exchange.client.complete(exchange.messages)
    if reply.text is None:
        return reply, None, None
    value, problem = extract_json(reply.text)
    if problem is None:
        problem = validate(value)
    if reply.settle is not None:
        reply.settle(problem is None)
    return reply, value, problem


def converse(exchange: Exchange, validate: Callable[[Any], str | None]) -> tuple[Any, str | None]:
    """Ask until a reply validates (REPLY_ATTEMPTS at most). Returns (value, None) or (None, error)."""
    problem = "no reply"
    for _ in range(REPLY_ATTEMPTS):
        reply, value, problem_or_none = _ask(exchange, validate)
        if reply.cached and problem_or_none is not None:  # a stored reply that no longer validates:
            reply, value, problem_or_none = _ask(exchange, validate)  # forgotten (settle), asked afresh
        exchange.replies.append(reply)
        if reply.text is None:
            return None, f"judge target '{exchange.client.name}' failed: {reply.error}"
        if problem_or_none is None:
            return value, None
        problem = problem_or_none
        exchange.messages = [
            *exchange.messages,
            ChatMessage("assistant", [reply.text]),
            ChatMessage(
                "user",
                [f"That reply is not valid ({problem}). Reply again with only the JSON object the schema describes."],
            ),
        ]
    last = exchange.replies[-1].text or ""
    quoted = last[:QUOTE_CHARS] + ("..." if len(last) > QUOTE_CHARS else "")
    return None, (
        f"no valid reply from judge target '{exchange.client.name}' in {REPLY_ATTEMPTS} attempts "
        f"({problem}); last reply: {quoted!r}"
    )


def _start(
    config: LlmJudgeConfig | RubricConfig, context: EvalContext, template: str, system: str, render: bool = True
) -> Exchange | str:
    """The judge conversation: system prompt, then the user prompt (`template` rendered, or, from
    a prompt script, as it is) with the case's images."""
    client, problem = judge_client(config, context)
    if client is None:
        return problem or "no judge"
    answer = judged_answer(context, config.preprocessors)
    prompt = render_template(template, template_values(context, answer)) if render else template
    user = ChatMessage("user", [prompt, *context.images])
    return Exchange(client, [ChatMessage("system", [system]), user])


def _error(config: LlmJudgeConfig | RubricConfig, message: str, exchange: Exchange | None = None) -> EvaluatorResult:
    details = {"judge": exchange.metadata()} if exchange and exchange.replies else None
    return error_result(
        name=config.display_name,
        type=config.type,
        weight=config.weight,
        message=f"{config.type} '{config.display_name}': {message}",
        details=details,
    )


def evaluate_llm_judge(config: LlmJudgeConfig, context: EvalContext) -> EvaluatorResult:
    """`type: llm_judge`. Options: `prompt` (a template file or inline template with `{{input}}`,
    `{{output}}`, `{{expected_output}}`, `{{expected_outcome}}`, `{{image_reference(s)}}`;
    or `{script: [...], config?, cwd?, timeout_seconds?}`, a program printing the user prompt;
    default: a built-in prompt), `dimensions` (name -> weight; the score is their weighted
    mean), `target` (the judge target), `name`, `weight`. Replies are schema-checked (3 tries)."""
    schema = dimensions_schema(config.dimensions) if config.dimensions else score_schema()
    system = system_prompt(schema, score_instructions(config), bool(context.images))
    if config.prompt_script is not None:  # the script's output is the user prompt, never rendered
        prompt, problem = run_prompt_script(config.prompt_script, context)
        if prompt is None:
            return _error(config, problem or "prompt script failed")
        exchange = _start(config, context, prompt, system, render=False)
    else:
        template, problem = _template(config, context)
        if problem:
            return _error(config, problem)
        exchange = _start(config, context, template, system)
    if isinstance(exchange, str):
        return _error(config, exchange)
    value, problem = converse(exchange, lambda v: schema_problem(v, schema))
    if problem:
        return _error(config, problem, exchange)
    details = dict(value.get("details") or {})  # the judge's own findings, verbatim
    if config.dimensions:
        scored = dimension_score(value["dimensions"], config.dimensions)
        score = scored.score
        details["dimension_scores"] = scored.breakdown  # agentv's own: a reply's key is replaced
    else:
        score = float(value["score"])
    details["judge"] = exchange.metadata()  # reserved: what the call cost (a reply's own `judge` key is replaced)
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=score,
        weight=config.weight,
        hits=value.get("hits") or [],
        misses=value.get("misses") or [],
        reasoning=value.get("reasoning") or "",
        details=details,
    )


def evaluate_rubric(config: RubricConfig, context: EvalContext) -> EvaluatorResult:
    """`type: rubric`. Options: `rubrics` (items with `id`, `description`, `weight` (default 1),
    `required` (default true); plain strings are shorthand), `target`, `name`, `weight`. Score =
    satisfied weight / total weight; an unmet required item fails the case. With `score_ranges` on
    an item, every item is scored 0-10 instead (`_evaluate_score_ranges`)."""
    if uses_score_ranges(config.rubrics):
        return _evaluate_score_ranges(config, context)
    ids = [r.id for r in config.rubrics]
    schema = rubric_schema(ids)
    instructions = (
        "Return one check per rubric item, in `checks`, with `id`, `satisfied` (true/false) and a "
        "short `reasoning`, plus an `overall_reasoning`.\nRubric items:\n" + rubric_listing(config.rubrics)
    )
    asked = _ask_rubric(config, context, RUBRIC_PROMPT, schema, instructions)
    if isinstance(asked, EvaluatorResult):
        return asked
    value, exchange = asked
    outcome = rubric_outcome(value["checks"], config.rubrics)
    reasoning = value.get("overall_reasoning") or ""
    if outcome.required_failed:
        reasoning = f"required rubric not met: {', '.join(outcome.required_failed)}" + (
            f"; {reasoning}" if reasoning else ""
        )
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=outcome.score,
        weight=config.weight,
        hits=outcome.hits,
        misses=outcome.misses,
        reasoning=reasoning,
        details={"checks": outcome.checks, "required_failed": outcome.required_failed, "judge": exchange.metadata()},
        passed=False if outcome.required_failed else None,
        verdict="fail" if outcome.required_failed else None,
    )


def _ask_rubric(
    config: RubricConfig, context: EvalContext, prompt: str, schema: dict[str, Any], instructions: str
) -> tuple[Any, Exchange] | EvaluatorResult:
    """Ask the judge for one check per rubric item (either rubric form): the schema-checked reply
    and its exchange, or the evaluator's error result."""
    exchange = _start(config, context, prompt, system_prompt(schema, instructions, bool(context.images)))
    if isinstance(exchange, str):
        return _error(config, exchange)
    value, problem = converse(
        exchange, lambda v: schema_problem(v, schema) or rubric_checks_problem(v["checks"], config.rubrics)
    )
    if problem:
        return _error(config, problem, exchange)
    return value, exchange


def _evaluate_score_ranges(config: RubricConfig, context: EvalContext) -> EvaluatorResult:
    """AgentV's analytic rubric: the judge gives each item an integer score 0-10 (schema-checked,
    never clamped); score = weighted mean of score / 10; an item below its minimum fails the case."""
    schema = score_ranges_schema([r.id for r in config.rubrics])
    instructions = (
        "For each criterion, give an integer `score` from 0 to 10 that falls in the score range that best "
        "matches the candidate output, with a short `reasoning`: one check per criterion, in `checks`, plus "
        "an `overall_reasoning`.\nCriteria:\n" + score_ranges_listing(config.rubrics)
    )
    asked = _ask_rubric(config, context, SCORE_RANGES_PROMPT, schema, instructions)
    if isinstance(asked, EvaluatorResult):
        return asked
    value, exchange = asked
    outcome = score_range_outcome(value["checks"], config.rubrics)
    reasoning = value.get("overall_reasoning") or ""
    if outcome.required_failed:
        below = ", ".join(
            f"{r.id} ({outcome.raw_scores[r.id]}{'/10' if r.min_score is not None else ''} < {gate_label(r)})"
            for r in config.rubrics
            if r.id in outcome.required_failed
        )
        reasoning = f"below the required minimum score: {below}" + (f"; {reasoning}" if reasoning else "")
    details = {
        "checks": outcome.checks,
        "required_failed": outcome.required_failed,
        "raw_scores": outcome.raw_scores,
        "normalization": "score / 10",
        "aggregation": "weighted_average",
        "judge": exchange.metadata(),
    }
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=outcome.score,
        weight=config.weight,
        hits=outcome.hits,
        misses=outcome.misses,
        reasoning=reasoning,
        details=details,
        passed=False if outcome.required_failed else None,
        verdict="fail" if outcome.required_failed else None,
    )
