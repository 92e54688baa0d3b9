"""`composite` (agentv-reference §3.3): member evaluators run on the same case, and an aggregator
makes one result of theirs; the members' results are nested under `evaluator_results`.

Aggregators: `weighted_average` (AgentV's: weights by member name, default 1; hits and misses
prefixed `[member] `; reasoning `member: reasoning` joined with `; `), `threshold` (AgentV
v4.42's: the share of members that pass, against a threshold), `code_judge` (a command
reading `{"results": {member: score object}}` on stdin and printing one code-judge result), and
`llm_judge` (a judge target reads the members' results through `{{EVALUATOR_RESULTS_JSON}}`).

A member that errors makes the composite an error (score 0, counted against the case like any
evaluator error): its score is unknown, so no aggregate of it would be honest. Skipped members
are left out of a weighted average (as skipped evaluators are left out of a case score); when
every member is skipped, so is the composite.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from agentv_py.chat import ChatMessage
from agentv_py.evaluators.base import EvalContext, error_result, judge_costs, processed_result, skipped_result
from agentv_py.evaluators.code_judge import judge_result
from agentv_py.evaluators.judge_payload import judge_env

# Pieces of llm_judge, reused so the aggregator asks its judge exactly as llm_judge does.
from agentv_py.evaluators.llm_judge import (
    Exchange,
    converse,
    judge_client,
    score_instructions,
    system_prompt,
    template_values,
)
from agentv_py.locate import working_dir
from agentv_py.models.evaluators import (
    RESULTS_VARIABLE,
    CodeJudgeConfig,
    CompositeAggregator,
    CompositeConfig,
    aggregator_template_problem,
)
from agentv_py.models.judges import TEMPLATE_VARIABLE_RE
from agentv_py.models.results import EvaluatorResult
from agentv_py.process.command import script_argv
from agentv_py.process.spawn import run_process
from agentv_py.prompts import read_prompt_template
from agentv_py.scoring.case import is_hard_failure
from agentv_py.scoring.jsontext import loads
from agentv_py.scoring.judging import render_template, schema_problem, score_schema
from agentv_py.scoring.thresholds import at_least
from agentv_py.scoring.trace import js_number

RunEvaluator = Callable[[Any, EvalContext], EvaluatorResult]

DEFAULT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all evaluator results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail/borderline), and reasoning."""
"""AgentV's default llm_judge aggregator prompt, verbatim."""

AGENTV_VERDICTS: dict[str | None, str | None] = {"pass": "pass", "partial": "borderline", "fail": "fail", None: None}
"""agentv's verdicts in AgentV's words, for aggregators written for AgentV (`partial` was `borderline`)."""

AGGREGATOR_VERDICTS = ("pass", "borderline", "partial", "fail")
"""The `verdict` a code aggregator may print (AgentV honoured it); `fail` fails the composite."""


def evaluate_composite(config: CompositeConfig, context: EvalContext, run: RunEvaluator) -> EvaluatorResult:
    """`type: composite`: run every member with `run` (agentv_py.evaluators.run_evaluator, which
    never raises), then aggregate. The result nests the members' results, each with the weight
    the aggregator gave it (weighted_average) or 1."""
    members = [run(member, context) for member in config.evaluators]
    aggregator = config.aggregator
    weights = aggregator.weights or {}
    children = [
        member.model_copy(update={"weight": weights.get(member.name, 1.0) if weights else 1.0}) for member in members
    ]
    failed = [member for member in members if member.status == "error"]
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        message = f"composite '{config.display_name}': member '{failed[0].name}' failed{more}: {failed[0].reasoning}"
        result = error_result(name=config.display_name, type=config.type, weight=config.weight, message=message)
    elif all(member.status == "skipped" for member in members):
        reasons = "; ".join(f"{member.name}: {member.reasoning}" for member in members)
        result = skipped_result(
            name=config.display_name,
            type=config.type,
            weight=config.weight,
            reasoning=f"no member produced a score: {reasons}",
        )
    elif aggregator.type == "weighted_average":
        result = _weighted_average(config, children)
    elif aggregator.type == "threshold":
        result = _threshold(config, children)
    elif aggregator.type == "code_judge":
        result = _code_aggregator(config, members, context)
    else:
        result = _llm_aggregator(config, members, context)
    details = dict(result.details)
    record = details.get("aggregator")
    judge = judge_costs(members, [record.get("judge")] if isinstance(record, dict) else [])
    if judge:
        details["judge"] = judge  # what the judges inside cost, summed: the run's trace counts it once
    return result.model_copy(update={"evaluator_results": children, "details": details})


def _weighted_average(config: CompositeConfig, children: Sequence[EvaluatorResult]) -> EvaluatorResult:
    """AgentV's weighted average over the members that produced a score; a member that failed a
    hard requirement (a required rubric item) fails the composite too."""
    weights = config.aggregator.weights
    scored = [child for child in children if child.status == "processed"]
    total = math.fsum(child.weight for child in scored)
    score = math.fsum((child.score or 0.0) * child.weight for child in scored) / total if total > 0 else 0.0
    hard = [child.name for child in scored if is_hard_failure(child)]
    reasoning = "; ".join(f"{child.name}: {child.reasoning}" for child in children if child.reasoning)
    if hard:
        reasoning = f"member {', '.join(hard)} failed a hard requirement" + (f"; {reasoning}" if reasoning else "")
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=min(1.0, max(0.0, score)),
        weight=config.weight,
        hits=[f"[{child.name}] {hit}" for child in children for hit in child.hits],
        misses=[f"[{child.name}] {miss}" for child in children for miss in child.misses],
        reasoning=reasoning,
        details={"aggregator": {"type": "weighted_average", **({"weights": weights} if weights else {})}},
        passed=False if hard else None,
        verdict="fail" if hard else None,
    )


def _threshold(config: CompositeConfig, children: Sequence[EvaluatorResult]) -> EvaluatorResult:
    """AgentV's threshold aggregator: score = members that pass / members that produced a score,
    the composite passing (`passed`) when that reaches the threshold. The first hit or miss says
    `N/M evaluators passed (threshold: T)`; the members' follow, prefixed `[member] `. The verdict
    is the score's, as every evaluator's: only the pass mark of the composite is the threshold."""
    threshold = config.aggregator.threshold
    assert threshold is not None  # the model requires it for threshold
    scored = [child for child in children if child.status == "processed"]
    passing = sum(1 for child in scored if child.verdict == "pass")
    score = passing / len(scored) if scored else 0.0
    met = at_least(score, threshold)
    summary = f"{passing}/{len(scored)} evaluators passed (threshold: {js_number(threshold)})"
    hits = [f"[{child.name}] {hit}" for child in scored for hit in child.hits]
    misses = [f"[{child.name}] {miss}" for child in scored for miss in child.misses]
    reasoning = "; ".join(f"{child.name}: {child.reasoning}" for child in children if child.reasoning)
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=score,
        weight=config.weight,
        hits=[summary, *hits] if met else hits,
        misses=misses if met else [summary, *misses],
        reasoning=f"{summary}; {reasoning}" if reasoning else summary,
        details={"aggregator": {"type": "threshold", "threshold": threshold}},
        passed=met,
    )


def agentv_score(result: EvaluatorResult) -> dict[str, Any]:
    """A member's result as AgentV gave it to aggregators (camelCase keys, AgentV's verdict
    words), plus agentv's `status` (`processed` or `skipped`: a skipped member has score null)."""
    data: dict[str, Any] = {
        "score": result.score,
        "verdict": AGENTV_VERDICTS.get(result.verdict, result.verdict),
        "hits": list(result.hits),
        "misses": list(result.misses),
        "expectedAspectCount": max(len(result.hits) + len(result.misses), 1),
        "status": result.status,
    }
    if result.reasoning:
        data["reasoning"] = result.reasoning
    if result.evaluator_results:
        data["evaluatorResults"] = [
            {"name": child.name, "type": child.type, "weight": child.weight, **agentv_score(child)}
            for child in result.evaluator_results
        ]
    if result.details:
        data["details"] = result.details
    return data


def _results_json(members: Sequence[EvaluatorResult], indent: int | None) -> tuple[str | None, str | None]:
    """{member: agentv_score} as JSON text, or (None, why) when a member's details cannot be JSON."""
    try:
        text = json.dumps(
            {member.name: agentv_score(member) for member in members},
            ensure_ascii=False,
            allow_nan=False,
            indent=indent,
            default=str,
        )
    except ValueError as exc:
        return None, f"the members' results cannot be written as JSON ({exc})"
    return text, None


def _error(config: CompositeConfig, message: str, details: dict[str, Any] | None = None) -> EvaluatorResult:
    return error_result(
        name=config.display_name,
        type=config.type,
        weight=config.weight,
        message=f"composite '{config.display_name}': {message}",
        details=details,
    )


def _code_aggregator(
    config: CompositeConfig, members: Sequence[EvaluatorResult], context: EvalContext
) -> EvaluatorResult:
    """Run the aggregator command like a code judge (timeout, output cap, the run's process
    registry, the judge environment) and read its stdout by the code-judge contract; a `verdict`
    of `fail` (AgentV's safety-gate pattern) fails the composite whatever the score."""
    aggregator = config.aggregator
    assert aggregator.path is not None  # the model requires it for code_judge
    cwd = working_dir(context.dataset_dir, aggregator.cwd)
    info: dict[str, Any] = {"type": "code_judge", "script": aggregator.path, "cwd": str(cwd)}
    results, problem = _results_json(members, indent=2)
    if results is None:
        return _error(config, f"code_judge aggregator: {problem}", {"aggregator": info})
    payload = '{"results": ' + results + "}"
    process = run_process(
        script_argv(aggregator.path),
        timeout=aggregator.timeout_seconds,
        stdin=payload.encode("utf-8"),
        cwd=cwd,
        env=judge_env(),
        registry=context.processes,
    )
    # The aggregator is judged exactly as a code judge named 'aggregator' would be.
    as_judge = CodeJudgeConfig.model_validate(
        {
            "type": "code_judge",
            "name": "aggregator",
            "script": aggregator.path,
            "timeout_seconds": aggregator.timeout_seconds,
        }
    )
    judged = judge_result(as_judge, process)
    if judged.status == "error":
        return _error(config, judged.reasoning, {"aggregator": info})
    if judged.status == "skipped":
        return skipped_result(
            name=config.display_name,
            type=config.type,
            weight=config.weight,
            reasoning=judged.reasoning,
            details={**judged.details, "aggregator": info},
        )
    printed = loads(process.stdout.decode("utf-8").strip(), allow_nan=True)  # one JSON object: judged above
    verdict = printed.get("verdict") if isinstance(printed, dict) else None
    if verdict is not None and verdict not in AGGREGATOR_VERDICTS:
        shown = json.dumps(verdict)[:60]
        return _error(
            config,
            f"code_judge 'aggregator': verdict must be pass, borderline or fail, got {shown}",
            {"aggregator": info},
        )
    gated = verdict == "fail" and judged.verdict != "fail"
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=judged.score or 0.0,
        weight=config.weight,
        hits=judged.hits,
        misses=judged.misses,
        reasoning=judged.reasoning,
        details={**judged.details, "aggregator": info},
        passed=False if gated else judged.passed,
        verdict="fail" if gated else None,
    )


def _aggregator_template(aggregator: CompositeAggregator, context: EvalContext) -> tuple[str, str | None]:
    """The llm_judge aggregator's template: inline or read at load time (a config built in code:
    read now, as llm_judge reads its own), else AgentV's default."""
    if aggregator.template is not None:
        return aggregator.template, None
    if aggregator.prompt_file is not None:
        text, problem = read_prompt_template(
            aggregator.prompt_file, context.dataset_dir, check=aggregator_template_problem
        )
        return text or "", problem
    return DEFAULT_AGGREGATOR_PROMPT, None


def _llm_aggregator(
    config: CompositeConfig, members: Sequence[EvaluatorResult], context: EvalContext
) -> EvaluatorResult:
    """Ask the judge target as llm_judge does (same system prompt and reply schema, 3 attempts,
    no images: the judge reads results, not the case's pictures); its reply is the result."""
    aggregator = config.aggregator
    as_judge = config.aggregator_judge()
    info: dict[str, Any] = {"type": "llm_judge"}
    template, problem = _aggregator_template(aggregator, context)
    results, json_problem = _results_json(members, indent=2)
    problem = problem or json_problem
    if problem or results is None:
        return _error(config, f"llm_judge aggregator: {problem}", {"aggregator": info})
    # Case variables first, then the results: text inside a member's result is never a variable.
    rendered = render_template(template, template_values(context))
    prompt = TEMPLATE_VARIABLE_RE.sub(lambda m: results if m.group(1) == RESULTS_VARIABLE else m.group(0), rendered)
    client, problem = judge_client(as_judge, dataclasses.replace(context, images=()))
    if client is None:
        return _error(config, f"llm_judge aggregator: {problem}", {"aggregator": info})
    schema = score_schema()
    system = system_prompt(schema, score_instructions(as_judge), False)
    exchange = Exchange(client, [ChatMessage("system", [system]), ChatMessage("user", [prompt])])
    value, problem = converse(exchange, lambda v: schema_problem(v, schema))
    info["judge"] = exchange.metadata()
    if problem:
        return _error(config, f"llm_judge aggregator: {problem}", {"aggregator": info})
    return processed_result(
        name=config.display_name,
        type=config.type,
        score=float(value["score"]),
        weight=config.weight,
        hits=value.get("hits") or [],
        misses=value.get("misses") or [],
        reasoning=value.get("reasoning") or "",
        details={**(value.get("details") or {}), "aggregator": info},
    )
