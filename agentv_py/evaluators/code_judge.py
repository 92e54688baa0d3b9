"""`code_judge` (SPEC §3.2): a user script, any language, fed JSON on stdin.

The judge's answer is taken exactly as given: a score that is missing, not a number, NaN or
outside [0, 1], stdout that is not one JSON object, an unexpected exit code or a timeout is an
error result (score 0, a miss naming the judge, the problem and the stderr tail), never a guess.
The payload and the reply's reading follow the evaluator's `payload_format`: AgentV's early-2026
code judge (`judge_payload`, `scoring.judge_contract`) or its v4.42 code-grader (`grader_payload`,
`judge_reply`, `scoring.grader_reply`).
"""

from __future__ import annotations

import itertools
import json
import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from agentv_py.chat import ChatClient
from agentv_py.evaluators.base import EvalContext, processed_result, skipped_result
from agentv_py.evaluators.grader_payload import grader_stdin
from agentv_py.evaluators.judge_payload import (
    judge_env,
    payload_text,
)
from agentv_py.evaluators.judge_reply import checked_grader_reply, grader_reply_result, judge_error, one_json_object
from agentv_py.evaluators.target_proxy import PROXY_TOKEN_ENV, PROXY_URL_ENV, TargetProxy
from agentv_py.locate import working_dir
from agentv_py.models.evaluators import CodeJudgeConfig
from agentv_py.models.judges import PromptScript
from agentv_py.models.results import EvaluatorResult
from agentv_py.process.command import script_argv
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, ProcResult, run_process
from agentv_py.scoring.jsontext import loads
from agentv_py.scoring.judge_contract import result_problems


def _proxy_judge(config: CodeJudgeConfig, context: EvalContext) -> tuple[ChatClient | None, str | None]:
    """The judge target a code judge's `target:` proxy calls: (client, None) or (None, why not)."""
    assert config.target is not None
    name = config.target.name or context.default_judge
    if name is None:
        return None, (
            "target: needs a judge target: set target: {name: NAME} on the evaluator, "
            "execution.judge_target in the dataset, or judge_target on the eval target"
        )
    client = context.judges.get(name)
    if client is None:
        return None, f"judge target '{name}' is not available in this run"
    return client, None


def _stdin(config: CodeJudgeConfig, context: EvalContext) -> AbstractContextManager[bytes]:
    """The payload of the judge's `payload_format`, for as long as the judge runs."""
    if config.payload_format == "4.42":
        return grader_stdin(context, config.config)
    return nullcontext(payload_text(context, config.config))


def evaluate_code_judge(config: CodeJudgeConfig, context: EvalContext) -> EvaluatorResult:
    with _stdin(config, context) as stdin:
        return _evaluate(config, context, stdin)


def _evaluate(config: CodeJudgeConfig, context: EvalContext, stdin: bytes) -> EvaluatorResult:
    cwd = working_dir(context.dataset_dir, config.cwd)
    env = judge_env()
    env.pop(PROXY_URL_ENV, None)  # a proxy of an agentv this one runs under is not this judge's
    env.pop(PROXY_TOKEN_ENV, None)

    def run(env: dict[str, str]) -> ProcResult:
        argv = script_argv(config.script)
        return run_process(
            argv, timeout=config.timeout_seconds, stdin=stdin, cwd=cwd, env=env, registry=context.processes
        )

    if config.persistent:
        return _persistent_judge(config, context, str(cwd), stdin, env)
    if config.target is None:
        return judge_result(config, run(env))
    client, problem = _proxy_judge(config, context)
    if client is None:
        return judge_error(config, problem or "no judge target")
    with TargetProxy(client, config.target.max_calls, context.judges) as proxy:
        result = run({**env, **proxy.env()})
    return _with_proxy_usage(config, judge_result(config, result), proxy.usage())


PERSISTENT_ENV = "AGENTV_JUDGE_PERSISTENT"  # set for persistent judges: the SDK's @judge serves in a loop


def _judge_pool(config: CodeJudgeConfig, context: EvalContext, cwd: str, env: dict[str, str]) -> Any:
    """The run's worker pool for this judge (one per script and cwd), made on first use and
    closed with the run (`ProcessRegistry.at_close`). Outside a run (no registry: an evaluator
    called on its own) a pool of its own, which the caller closes after the one request."""
    from agentv_py.process.worker import Worker, WorkerPool

    registry = context.processes
    argv = script_argv(config.script)

    def make() -> Worker:
        return Worker(argv, cwd=cwd, env={**env, PERSISTENT_ENV: "1"}, registry=registry, line_cap=DEFAULT_OUTPUT_CAP)

    if registry is None:
        return WorkerPool(make, start_timeout=config.timeout_seconds)
    key = ("code_judge", cwd, *argv)
    with _POOLS_LOCK:
        pool = registry.shared.get(key)
        if pool is None:
            pool = registry.shared[key] = WorkerPool(make, start_timeout=config.timeout_seconds)
            if not registry.at_close(pool.close):
                pool.close()
    return pool


_POOLS_LOCK = threading.Lock()  # one pool per judge and run, however many cases ask at once


def _persistent_judge(
    config: CodeJudgeConfig, context: EvalContext, cwd: str, payload: bytes, env: dict[str, str]
) -> EvaluatorResult:
    """Ask the judge's long-lived process (docs/workers.md): the payload as one request line,
    the result back in the reply; every failure is this evaluation's error, and a lost judge
    process is replaced for the next one."""
    pool = _judge_pool(config, context, cwd, env)
    try:
        return _ask_judge(config, context, pool, payload)
    finally:
        if context.processes is None:  # outside a run: the pool was this evaluation's alone
            pool.close()


def _ask_judge(config: CodeJudgeConfig, context: EvalContext, pool: Any, payload: bytes) -> EvaluatorResult:
    worker, error = pool.acquire()
    if worker is None:
        return judge_error(config, f"persistent judge could not start: {error}")
    request = {"v": 1, "id": f"{next(_REQUESTS)}", "case_id": context.eval_id, "payload": loads(payload.decode())}
    try:
        reply = worker.request(request, config.timeout_seconds)
    finally:
        pool.release(worker)
    stderr = reply.stderr.encode()
    if reply.data is None:
        return judge_error(config, reply.error or "no reply")
    result = reply.data.get("result")
    if not isinstance(result, dict):
        said = reply.data.get("error")
        why = (
            f"reported: {' '.join(str(said).split())[:300]}"
            if said is not None
            else "replied without a 'result' object"
        )
        return judge_error(config, why, ProcResult(None, b"", stderr, reply.duration_ms / 1000))
    code = reply.data.get("exit", 0)
    code = code if code in (0, 1) else 0
    return _checked(config, result, code, ProcResult(code, b"", stderr, reply.duration_ms / 1000))


_REQUESTS = itertools.count()


PROXY_DETAILS_KEY = "agentv"  # details[agentv][target_proxy]: agentv's record, apart from the judge's own


def _with_proxy_usage(config: CodeJudgeConfig, result: EvaluatorResult, usage: dict[str, Any]) -> EvaluatorResult:
    """The result with the proxy's record under details.agentv.target_proxy; a judge whose own
    details use that reserved key gets an error (its value is never overwritten)."""
    if PROXY_DETAILS_KEY in result.details and result.status != "error":
        return judge_error(
            config,
            f"details.{PROXY_DETAILS_KEY} is reserved for agentv's record of the target proxy; "
            "use another key in the judge's details",
            details={PROXY_DETAILS_KEY: {"target_proxy": usage}},
        )
    details = {**result.details, PROXY_DETAILS_KEY: {"target_proxy": usage}}
    return result.model_copy(update={"details": details})


def judge_result(config: CodeJudgeConfig, result: ProcResult) -> EvaluatorResult:
    """Turn a finished judge process into a result, exactly as the contract of its
    `payload_format` says."""
    if config.payload_format == "4.42":
        return grader_reply_result(config, result)
    abnormal = result.abnormal_end(config.timeout_seconds, DEFAULT_OUTPUT_CAP)
    if abnormal:
        return judge_error(config, abnormal, result if result.timed_out else None)
    code = result.returncode
    if code not in (0, 1):
        what = result.killed_by_signal() or f"exited with code {code}"
        return judge_error(config, f"{what} (0 or 1 with a JSON result expected)", result)
    try:
        stdout = result.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return judge_error(config, f"stdout is not valid UTF-8 (byte offset {exc.start})", result)
    parsed, problem = one_json_object(stdout)
    if problem:
        prefix = "exited with code 1 and " if code == 1 else ""
        return judge_error(config, prefix + problem, result)
    assert parsed is not None
    return _checked(config, parsed, code, result)


def _checked(config: CodeJudgeConfig, data: dict[str, Any], code: int | None, result: ProcResult) -> EvaluatorResult:
    """The judge's parsed result checked against the contract (`scoring.judge_contract`): the
    first problem makes an error result; else its status decides (error, skipped, processed)."""
    if config.payload_format == "4.42":
        return checked_grader_reply(config, data, result)
    problems = result_problems(data, show=json.dumps)
    if problems:
        return judge_error(config, problems[0], result)
    name, weight = config.display_name, config.weight
    status = data.get("status", "processed")
    reasoning = data.get("reasoning", "")
    details = data.get("details", {})
    if status == "error":
        message = reasoning or "the judge reported an error"
        return judge_error(config, f"reported an error: {message}", result)
    if status == "skipped":
        return skipped_result(name=name, type=config.type, weight=weight, reasoning=reasoning, details=details)
    passed = data.get("passed")
    if passed is None and code == 1:
        passed = False  # exit 1 with a valid result: the convention "1 = not passed"
    return processed_result(
        name=name,
        type=config.type,
        score=float(data["score"]),
        weight=weight,
        hits=data.get("hits", []),
        misses=data.get("misses", []),
        reasoning=reasoning,
        details=details,
        passed=passed,
    )


PROMPT_OUTPUT_CAP = 1024 * 1024  # a judge prompt longer than this is a bug in the script


def run_prompt_script(script: PromptScript, context: EvalContext) -> tuple[str | None, str | None]:
    """An llm_judge's `prompt: {script: [...]}` (AgentV's definePromptTemplate): the script reads
    the code-judge payload (its `config` = `prompt.config`) and prints the judge's user prompt.
    (prompt, None) with stdout trimmed, as AgentV did; or (None, why not): the script could not
    start, timed out, exited non-zero, printed more than PROMPT_OUTPUT_CAP, not UTF-8 or nothing,
    with the tail of its stderr."""
    env = judge_env()
    env.pop(PROXY_URL_ENV, None)
    env.pop(PROXY_TOKEN_ENV, None)
    result = run_process(
        script_argv(script.script),
        timeout=script.timeout_seconds,
        stdin=payload_text(context, script.config),
        cwd=working_dir(context.dataset_dir, script.cwd),
        env=env,
        output_cap=PROMPT_OUTPUT_CAP,
        registry=context.processes,
    )
    problem = result.abnormal_end(script.timeout_seconds, PROMPT_OUTPUT_CAP)
    text = ""
    if problem is None and result.returncode != 0:
        problem = result.killed_by_signal() or f"exited with code {result.returncode}"
    if problem is None:
        try:
            text = result.stdout.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            problem = f"stdout is not valid UTF-8 (byte offset {exc.start})"
    if problem is None and not text:
        problem = "printed nothing on stdout (the judge's prompt expected)"
    if problem is None:
        return text, None
    tail = result.stderr_tail()
    return None, f"prompt script {problem}" + (f" (stderr: {tail})" if tail else "")
