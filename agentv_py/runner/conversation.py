"""A multi-turn conversation case, run as AgentV v4.42 ran one (`runConversationMode`): for each
turn the user's message joins the conversation, the target answers the conversation so far
(the system messages and the last `window_size` exchanges), the answer joins it and the turn's
evaluators score it; then the case's own evaluators score the whole transcript. The case's score
is the mean (or min, max) of the turn scores and the conversation's.

A turn the target fails (after the run's retries) makes the case a target error, as any case
whose target fails, with the turns before it kept in the row (AgentV scored that turn 0 and went
on). With `on_turn_failure: stop` a turn scored under the pass mark skips the turns after it,
each scoring 0. The row is one row per case: `evaluator_results` holds a `turn-N`
result per turn (its evaluators' results nested) and `conversation`; `candidate_answer` is the
last answer, `output_messages` the whole conversation."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from agentv_py.chat import sum_usage
from agentv_py.models.conversation import TRANSCRIPT_TYPE, TURN_TYPE, aggregate, transcript, windowed
from agentv_py.models.messages import Message
from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.prepared import LoadedDataset, PreparedCase, PreparedTurn
from agentv_py.process.spawn import ProcessRegistry
from agentv_py.runner.case_row import (
    Judging,
    RowMaker,
    RunOptions,
    add_judge_costs,
    answer,
    answer_dir,
    is_number,
    outcome_trace,
    pass_mark,
    score_case,
)
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.scoring.case import CaseVerdict, is_hard_failure, verdict_for


def run_conversation(
    prepared: PreparedCase,
    dataset: LoadedDataset,
    runner: TargetRunner,
    options: RunOptions,
    *,
    judging: Judging,
    processes: ProcessRegistry | None,
    stopped: Callable[[], bool],
) -> ResultRow:
    """The row of a conversation case (`prepared.case.conversation` is set)."""
    conversation = prepared.case.conversation
    assert conversation is not None
    started = time.monotonic()
    mark = pass_mark(dataset)
    history: list[Message] = list(prepared.case.input_messages)
    results: list[EvaluatorResult] = []
    spent = _Spent()
    halted = False
    replayed: list[str] | None = None  # `agentv rescore`: the stored conversation's answers, in order
    origin: ResultRow | None = None  # ... and the row they come from
    if getattr(runner, "replays", False):
        stored = runner.invoke(prepared, 1)
        origin = stored.origin
        if origin is None:
            return RowMaker(prepared, dataset.name, runner.name, outcome_trace(stored), 0, 0.0, options.run_id).row(
                "error", 0.0, "fail", misses=[stored.error or ""], reasoning=stored.error or "", error=stored.error
            )
        if origin.status == "error":
            return origin.model_copy(update={"run_id": options.run_id})
        replayed = [m.get("content") for m in stored.output_messages or [] if _is_answer(m)]

    def score(case: PreparedCase, evaluators: list[Any], outcome: TargetOutcome, attempts: int) -> ResultRow:
        return score_case(
            case,
            evaluators,
            outcome,
            dataset=dataset,
            target=runner.name,
            attempts=attempts,
            duration_ms=outcome.duration_ms,
            judging=judging,
            processes=processes,
            run_id=options.run_id,
            answer_dir=answer_dir(runner),
        )

    for number, (turn, plan) in enumerate(zip(conversation.turns, prepared.turns, strict=True), 1):
        name = f"turn-{number}"
        if halted or stopped():
            why = "skipped: an earlier turn failed (on_turn_failure: stop)" if halted else "skipped: the run stopped"
            results.append(_turn(name, "processed", 0.0, "fail", misses=[why], why=why))
            continue
        history.append(Message(role="user", content=turn.user_text))
        sent = windowed(history, conversation.window_size)
        asked = _variant(prepared, f"{prepared.case.id}/{name}", sent, turn.user_text, expected=plan.expected)
        if replayed is None:
            outcome, attempts = answer(asked, runner, options, stopped)
        elif number <= len(replayed):
            outcome, attempts = TargetOutcome(replayed[number - 1]), 0
        else:
            outcome, attempts = TargetOutcome(None, "no stored answer (the stored conversation ended before it)"), 0
        spent.add(outcome, attempts)
        if outcome.answer is None:  # the case is a target error, with what the turns before it gave
            error = f"{name}: {outcome.error or 'target failed'}"
            failed = TargetOutcome(None, error, output_messages=_dumped(history), duration_ms=spent.duration_ms)
            trace = outcome_trace(failed)
            made = RowMaker(prepared, dataset.name, runner.name, trace, spent.attempts, _since(started), options.run_id)
            return made.row(
                "error",
                0.0,
                "fail",
                misses=[error],
                reasoning=error,
                error=error,
                output_messages=failed.output_messages,
                evaluator_results=results,
            )
        history.append(Message(role="assistant", content=outcome.answer))
        result = _scored_turn(name, plan, asked, history, conversation.window_size, outcome, attempts, score, mark)
        results.append(result)
        halted = conversation.on_turn_failure == "stop" and (result.verdict != "pass" or result.failed_hard)
    if prepared.evaluators:
        whole = transcript(history)
        judged = _variant(prepared, prepared.case.id, history, whole, expected=None, conversation=True)
        row = score(judged, prepared.evaluators, TargetOutcome(whole), 0)
        results.append(_from_row(TRANSCRIPT_TYPE, row, mark))
    for result in results:  # how the case's score was made, said where each turn's is (`agentv explain`)
        if result.type == TURN_TYPE:
            result.details["aggregation"] = conversation.aggregation
    verdict = _verdict(results, conversation.aggregation, mark)
    last = next((m.content for m in reversed(history) if m.role == "assistant"), None)
    final = TargetOutcome(
        last if isinstance(last, str) else None,
        output_messages=_dumped(history),
        trace=spent.trace(),
        duration_ms=_since(started),
    )
    if origin is None:
        made = RowMaker(
            prepared, dataset.name, runner.name, outcome_trace(final), spent.attempts, final.duration_ms, options.run_id
        )
    else:  # re-scored: what the run measured of its target stands
        trace = origin.trace.model_copy(update={"judge_token_usage": None, "judge_duration_ms": None})
        made = RowMaker(
            prepared, dataset.name, origin.target, trace, origin.attempts, origin.duration_ms, options.run_id
        )
    add_judge_costs(made.trace, [inner for result in results for inner in result.evaluator_results])
    return made.scored(results, verdict, final)


def _is_answer(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") == "assistant" and isinstance(message.get("content"), str)


def _dumped(history: list[Message]) -> list[Any]:
    return [m.model_dump(mode="json", exclude_none=True) for m in history]


def _since(started: float) -> float:
    return (time.monotonic() - started) * 1000


def _variant(
    prepared: PreparedCase,
    case_id: str,
    messages: list[Message],
    question: str,
    *,
    expected: Any = None,
    conversation: bool = False,
) -> PreparedCase:
    """The case as one call sees it: these messages, this question (the turn's text for the
    target, the transcript for the evaluators), the turn's expected answer; files and images
    stay those of the case's own input messages, which open the conversation."""
    case = prepared.case.model_copy(update={"id": case_id, "input_messages": messages, "conversation": None})
    if conversation:
        case = case.model_copy(update={"expected_messages": []})
    return dataclasses.replace(prepared, case=case, question=question, expected=expected, turns=[])


def _scored_turn(
    name: str,
    plan: PreparedTurn,
    asked: PreparedCase,
    history: list[Message],
    window_size: int | None,
    outcome: TargetOutcome,
    attempts: int,
    score: Callable[[PreparedCase, list[Any], TargetOutcome, int], ResultRow],
    mark: float,
) -> EvaluatorResult:
    """The turn's result: its evaluators on its answer, with the conversation so far (windowed)
    as the question they see; a turn without evaluators scores 1."""
    if not plan.evaluators:
        return _turn(name, "processed", 1.0, "pass", why="no evaluators for this turn: it scores 1")
    seen = windowed(history, window_size)
    judged = dataclasses.replace(asked, question=transcript(seen), expected=plan.expected)
    judged = dataclasses.replace(judged, case=judged.case.model_copy(update={"input_messages": seen}))
    return _from_row(TURN_TYPE, score(judged, plan.evaluators, outcome, attempts), mark, name=name)


def _from_row(kind: str, row: ResultRow, mark: float, *, name: str | None = None) -> EvaluatorResult:
    """A turn's (or the transcript's) row as one result, its evaluators' results nested in it."""
    result = EvaluatorResult(
        name=name or kind,
        type=kind,
        status="processed" if row.status == "ok" else "error",
        score=row.score,
        passed=row.verdict == "pass",
        verdict=row.verdict,
        hits=row.hits,
        misses=row.misses,
        reasoning=row.reasoning,
        evaluator_results=row.evaluator_results,
    )
    if any(is_hard_failure(r, mark) for r in row.evaluator_results):
        result.mark_failed_hard()
    return result


def _turn(
    name: str, status: Any, score: float, verdict: Any, *, misses: list[str] | None = None, why: str = ""
) -> EvaluatorResult:
    return EvaluatorResult(
        name=name,
        type=TURN_TYPE,
        status=status,
        score=score,
        passed=verdict == "pass",
        verdict=verdict,
        misses=misses or [],
        reasoning=why,
    )


def _verdict(results: list[EvaluatorResult], how: Any, mark: float) -> CaseVerdict:
    """The case's score: the turn scores and the conversation's, aggregated (`aggregate`); it
    fails when any of them failed hard (a required item, a critical field, an own pass mark)."""
    score = aggregate([r.score or 0.0 for r in results], how)
    failed_hard = any(r.failed_hard for r in results)
    return CaseVerdict(score, "fail" if failed_hard else verdict_for(score, mark), True)


@dataclasses.dataclass
class _Spent:
    """What the target calls of a conversation cost, summed over its turns."""

    attempts: int = 0
    duration_ms: float = 0.0
    cost_usd: float | None = None
    tokens: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, outcome: TargetOutcome, attempts: int) -> None:
        self.attempts += attempts
        self.duration_ms += outcome.duration_ms
        cost = outcome.trace.get("cost_usd")
        if is_number(cost) and cost >= 0:
            self.cost_usd = (self.cost_usd or 0.0) + float(cost)
        usage = outcome.trace.get("token_usage")
        if isinstance(usage, dict):
            self.tokens = sum_usage([self.tokens, usage])

    def trace(self) -> dict[str, Any]:
        spent: dict[str, Any] = {"duration_ms": round(self.duration_ms, 3)}
        if self.cost_usd is not None:
            spent["cost_usd"] = self.cost_usd
        if self.tokens:
            spent["token_usage"] = self.tokens
        return spent
