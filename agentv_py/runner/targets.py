"""Target runners: produce the answer for one case (SPEC §2)."""

from __future__ import annotations

import atexit
import errno
import itertools
import json
import os
import re
import stat
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.errors import TargetError
from agentv_py.locate import working_dir
from agentv_py.models.model_targets import AnthropicTarget, AzureTarget, GeminiTarget
from agentv_py.models.targets import (
    CliTarget,
    MockTarget,
    ModelTarget,
    OpaqueTarget,
    PythonTarget,
    TargetConfig,
    not_runnable_message,
)
from agentv_py.prepared import PreparedCase
from agentv_py.process.command import (
    UnsafeTemplate,
    render_command,
    render_files,
    template_program,
    unsafe_placeholder,
)
from agentv_py.process.programs import program_problem
from agentv_py.process.redact import Redactor
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, ProcessRegistry, ProcResult, run_process
from agentv_py.runner.anthropic import AnthropicClient
from agentv_py.runner.azure import AzureClient
from agentv_py.runner.gemini import GeminiClient
from agentv_py.runner.llm import ModelClient, OpenAIClient, case_messages
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.jsontext import dumps, loads

# Keys that may sit beside `text` in an AgentV answer envelope. An object with other keys is an
# answer in its own right (an extractor may well emit a `text` field) and is not unwrapped.
ENVELOPE_KEYS = frozenset({"text", "output_messages", "token_usage", "cost_usd", "duration_ms", "metadata", "raw"})


@dataclass
class TargetOutcome:
    """What one target call produced: an answer, or a one-line error."""

    answer: str | None
    error: str | None = None
    parsed: Any = NOT_JSON  # the answer already parsed as JSON, when it was
    output_messages: list[Any] | None = None  # the target's own message list, when it gave one
    trace: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    retryable: bool = True  # False: trying again cannot help (the program is missing, not executable)


@dataclass
class CliCall:
    """One run of a cli target's command: the answer's text, or a one-line error."""

    text: str | None
    error: str | None = None
    retryable: bool = True  # False: the program cannot start; trying again cannot help
    duration_ms: float = 0.0


class TargetRunner(Protocol):
    name: str
    vision: bool

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome: ...

    def complete(self, messages: list[ChatMessage]) -> ChatReply: ...


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [i.get("value") or i.get("text") for i in content if isinstance(i, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(texts)  # type: ignore[arg-type]
    return dumps(content)


def unwrap_answer(text: str) -> TargetOutcome:
    """The outcome for a raw target answer: its text, the text parsed as JSON when it is, and
    what an AgentV envelope carried.

    An envelope (an `output_messages` list, or a `text` field with only envelope keys beside it)
    is unwrapped; its `token_usage`, `cost_usd` and `duration_ms` go to the trace.
    """
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return TargetOutcome(text)
    try:
        data = loads(stripped)
    except ValueError:
        return TargetOutcome(text)
    if not isinstance(data, dict):
        return TargetOutcome(text, parsed=data)
    trace = {k: data[k] for k in ("token_usage", "cost_usd", "duration_ms") if k in data}
    messages = data.get("output_messages")
    if isinstance(messages, list) and messages:
        assistant = [m for m in messages if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
        dicts = assistant or [m for m in messages if isinstance(m, dict)]
        content = dicts[-1].get("content") if dicts else None
        if isinstance(content, (dict, list)):
            return TargetOutcome(dumps(content), parsed=content, trace=trace, output_messages=messages)
        answer = _message_text(content) if content is not None else ""
        return TargetOutcome(answer, trace=trace, output_messages=messages)
    if isinstance(data.get("text"), str) and data.keys() <= ENVELOPE_KEYS:
        return TargetOutcome(data["text"], trace=trace)
    return TargetOutcome(text, parsed=data)


def _decode(raw: bytes, what: str) -> tuple[str | None, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"{what} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"


def describe_failure(result: ProcResult, timeout: float, cap: int, redact: Redactor) -> str | None:
    """One-line reason a process run failed, or None when it succeeded."""
    tail = result.stderr_tail()
    suffix = f": {redact(tail)}" if tail else ""
    abnormal = result.abnormal_end(timeout, cap)
    if abnormal:
        return redact(abnormal) + (suffix if result.timed_out else "")
    if result.returncode != 0:
        return f"{result.killed_by_signal() or f'exit code {result.returncode}'}{suffix}"
    return None


class _LocalTarget:
    """What every target run as local processes has: its name, working directory, environment,
    secrets to mask, output cap and scratch directory."""

    def __init__(
        self,
        config: CliTarget | PythonTarget,
        dataset_dir: Path,
        work_dir: Path,
        secrets: list[str] | None,
        output_cap: int,
    ) -> None:
        self.name = config.name
        self.vision = config.vision
        self.cwd = str(working_dir(dataset_dir, config.cwd))
        self.work_dir = work_dir
        self.redact = Redactor(secrets or [])
        self.output_cap = output_cap
        self.env = target_env(config)


class CliRunner(_LocalTarget):
    """Runs `command_template` once per case."""

    def __init__(
        self,
        config: CliTarget,
        *,
        dataset_dir: Path,
        work_dir: Path,
        secrets: list[str] | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        processes: ProcessRegistry | None = None,
    ) -> None:
        super().__init__(config, dataset_dir, work_dir, secrets, output_cap)
        self.config = config
        self.processes = processes  # the run's registry: stopping the run kills our commands
        self._uses_output_file = "{OUTPUT_FILE}" in config.command_template
        self._counter = itertools.count()

    def _output_path(self, label: str, attempt: int, suffix: str = ".out") -> str:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[:80]
        return str(self.work_dir / f"{safe}.{attempt}.{next(self._counter)}{suffix}")

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        try:
            values = self.case_values(case, attempt, [image.path() for image in case.images])
        except (OSError, ValueError) as exc:
            return TargetOutcome(None, f"target '{self.name}' failed: {exc}", retryable=False)
        return self._run(values, case.case.id, attempt)

    def case_values(
        self, case: PreparedCase, attempt: int, images: list[str], files: list[str] | None = None
    ) -> dict[str, list[str]]:
        """The placeholder values of a case's command, with these image paths (and file paths:
        default, the case's); {OUTPUT_FILE} is set per call. OSError or ValueError: the case's
        guideline files, used by the template, cannot be read."""
        fmt = self.config.files_format
        values = {
            "PROMPT": [case.question],
            # guideline files first, as AgentV's file_paths
            "FILES": render_files(case.file_paths if files is None else files, fmt),
            "IMAGES": render_files(images, fmt),
            "EVAL_ID": [case.case.id],
            "ATTEMPT": [str(attempt - 1)],  # AgentV counted attempts from 0
        }
        if "{GUIDELINES}" in self.config.command_template:  # read only when used
            values["GUIDELINES"] = [case.guidelines()]
        return values

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        """As a judge: the messages' text as {PROMPT}, their images as {IMAGES}, the answer as the reply."""
        images = [image.path() for message in messages for image in message.images]
        values = {
            "PROMPT": ["\n\n".join(m.text for m in messages if m.text)],
            "FILES": [],
            "IMAGES": render_files(images, self.config.files_format),
            "EVAL_ID": ["judge"],
            "GUIDELINES": [""],
            "ATTEMPT": ["0"],
        }
        outcome = self._run(values, "judge", 1)
        return ChatReply(outcome.answer, outcome.error, duration_ms=outcome.duration_ms)

    def _run(self, values: dict[str, list[str]], label: str, attempt: int) -> TargetOutcome:
        call = self.call(values, label, attempt)
        outcome = unwrap_answer(call.text) if call.text is not None else TargetOutcome(None, call.error)
        outcome.retryable = call.retryable
        outcome.duration_ms = call.duration_ms
        return outcome

    def call(
        self,
        values: dict[str, list[str]],
        label: str,
        attempt: int,
        *,
        output_cap: int | None = None,
        suffix: str = ".out",
    ) -> CliCall:
        """Run the command once with these placeholder values: the answer's text ({OUTPUT_FILE}, or
        stdout when the template has none), or a one-line error. `output_cap` (default: the
        runner's) bounds what is read; `suffix` ends the {OUTPUT_FILE} name (`.jsonl` for a batch)."""
        cap = self.output_cap if output_cap is None else output_cap
        output_path = self._output_path(label, attempt, suffix) if self._uses_output_file else None
        if output_path:
            values["OUTPUT_FILE"] = [output_path]
        try:
            command = render_command(self.config.command_template, values)
        except UnsafeTemplate as exc:  # refused before the run (`target_problem`); never run it
            return CliCall(None, f"target '{self.name}': {exc}", retryable=False)
        too_long = command_line_problem(command.argv, self.env, values)
        if too_long:
            return CliCall(None, f"target '{self.name}' cannot start: {too_long}", retryable=False)
        timeout = self.config.timeout_seconds
        result = run_process(
            command.argv,
            timeout=timeout,
            cwd=self.cwd,
            env=self.env,
            output_cap=cap,
            capture_stdout=output_path is None,  # with {OUTPUT_FILE} the answer is the file
            registry=self.processes,
        )
        text, error = self._answer_text(result, output_path, timeout, cap)
        if output_path:
            try:
                os.unlink(output_path)
            except OSError:
                pass
        return CliCall(
            text,
            error,
            # A program that cannot start, or a shell reporting one it cannot find or run (127, 126).
            retryable=not (result.cannot_start or (command.shell and result.returncode in (126, 127))),
            duration_ms=result.duration * 1000,
        )

    def _answer_text(
        self, result: ProcResult, output_path: str | None, timeout: float, cap: int
    ) -> tuple[str | None, str | None]:
        """The answer's text, or (None, why not)."""
        failure = describe_failure(result, timeout, cap, self.redact)
        if failure:
            return None, f"target '{self.name}' failed: {failure}"
        if output_path:
            raw_file, problem = read_output_file(output_path, cap)
            if raw_file is None:
                if problem == MISSING_OUTPUT:
                    tail = result.stderr_tail()
                    return None, f"target '{self.name}' exited 0 but {problem}" + (
                        f": {self.redact(tail)}" if tail else ""
                    )
                return None, f"target '{self.name}' {problem}"
            raw = raw_file
            what = "the output file"
        else:
            raw, what = result.stdout, "stdout"
        text, error = _decode(raw, f"target '{self.name}' answer ({what})")
        if error or text is None:
            return None, error
        if not text.strip():
            return None, f"target '{self.name}' returned an empty answer ({what})"
        return text, None


MISSING_OUTPUT = "did not write {OUTPUT_FILE}"


def read_output_file(path: str, cap: int) -> tuple[bytes | None, str | None]:
    """An {OUTPUT_FILE}'s bytes, or (None, what went wrong: MISSING_OUTPUT, or how it was
    written wrongly). Never follows a symlink, never blocks on a FIFO: only a regular file of at
    most `cap` bytes is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None, MISSING_OUTPUT
    except OSError as exc:
        kind = "a symlink" if exc.errno == errno.ELOOP else "a socket" if exc.errno == errno.ENXIO else None
        if kind:
            return None, f"wrote {{OUTPUT_FILE}} as {kind}, not a regular file"
        return None, f"wrote an unreadable {{OUTPUT_FILE}}: {exc.strerror}"
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a directory"
                if stat.S_ISDIR(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "a device"
            )
            return None, f"wrote {{OUTPUT_FILE}} as {kind}, not a regular file"
        with open(fd, "rb", closefd=False) as handle:
            raw = handle.read(cap + 1)
    finally:
        os.close(fd)
    if len(raw) > cap:
        return None, f"wrote more than the {cap // (1024 * 1024)} MB cap"
    return raw, None


class MockRunner:
    """A fixed answer, or the case's ground truth (`echo_expected`)."""

    def __init__(self, config: MockTarget) -> None:
        self.name = config.name
        self.vision = config.vision
        self.config = config

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        """As a judge: the fixed `response` (objects as JSON)."""
        value = self.config.response
        if value is None:
            return ChatReply(None, f"mock judge '{self.name}' has no 'response' to reply with")
        return ChatReply(value if isinstance(value, str) else dumps(value), model="mock")

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        value = case.expected if self.config.echo_expected else self.config.response
        if isinstance(value, str):
            return TargetOutcome(value)
        if value is None:
            return TargetOutcome(None, f"target '{self.name}' has no expected answer to echo for this case")
        return TargetOutcome(dumps(value), parsed=value)


class ModelRunner:
    """A model provider's target (openai, azure, anthropic, gemini) as the eval target: the case's
    messages in, the reply's text out; as a judge, `complete`."""

    def __init__(self, config: ModelTarget, secrets: list[str]) -> None:
        self.name = config.name
        self.vision = config.vision
        self.client = model_client(config, secrets)

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        return self.client.complete(messages)

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        try:
            messages = case_messages(case)
        except (OSError, ValueError) as exc:
            return TargetOutcome(None, f"target '{self.name}' failed: {exc}")
        reply = self.client.complete(messages)
        trace: dict[str, Any] = {"duration_ms": round(reply.duration_ms, 3)}
        if reply.usage:
            trace["token_usage"] = reply.usage
        if reply.text is None:
            outcome = TargetOutcome(None, f"target '{self.name}' failed: {reply.error}", trace=trace)
        else:
            outcome = unwrap_answer(reply.text)
            outcome.trace = {**outcome.trace, **trace, "model": reply.model, "http_attempts": reply.attempts}
        outcome.duration_ms = reply.duration_ms
        return outcome


OpenAIRunner = ModelRunner  # its name from when openai was the only model provider


def model_client(config: ModelTarget, secrets: list[str] | None = None) -> ModelClient:
    """The client of a model provider's target; its SDK is imported on the first call."""
    if isinstance(config, AzureTarget):
        return AzureClient(config, secrets)
    if isinstance(config, AnthropicTarget):
        return AnthropicClient(config, secrets)
    if isinstance(config, GeminiTarget):
        return GeminiClient(config, secrets)
    return OpenAIClient(config, secrets)


DRY_RUN_TARGET = MockTarget(name="dry-run", provider="mock", echo_expected=True)


def make_runner(
    config: TargetConfig,
    *,
    dataset_dir: Path,
    work_dir: Path,
    secrets: list[str],
    processes: ProcessRegistry | None = None,
) -> TargetRunner:
    """The runner for a target; every runner also answers chat messages, so any target can judge.
    Commands it starts are tracked in `processes` (the run's registry)."""
    if isinstance(config, PythonTarget) or (isinstance(config, CliTarget) and config.mode == "worker"):
        return WorkerRunner(config, dataset_dir=dataset_dir, work_dir=work_dir, secrets=secrets, processes=processes)
    if isinstance(config, CliTarget):
        return CliRunner(config, dataset_dir=dataset_dir, work_dir=work_dir, secrets=secrets, processes=processes)
    if isinstance(config, MockTarget):
        return MockRunner(config)
    if isinstance(config, OpaqueTarget):  # refused by `plan_eval` before a run starts; never run
        raise TargetError(not_runnable_message(config))
    return ModelRunner(config, secrets)  # openai, azure, anthropic, gemini


# Linux refuses one argument of MAX_ARG_STRLEN (32 pages) bytes or more, its NUL included.
MAX_ARG_BYTES: int | None = 32 * 4096 - 1 if sys.platform.startswith("linux") else None


def command_line_problem(argv: list[str], env: Mapping[str, str] | None, values: dict[str, list[str]]) -> str | None:
    """Why the operating system would refuse this command line (E2BIG), said before trying: an
    argument over MAX_ARG_BYTES, or arguments and environment (`env`; None: agentv's own) over
    ARG_MAX. The message names the largest placeholder value and what to do instead."""
    sizes = [len(os.fsencode(arg)) for arg in argv]
    environ = os.environ if env is None else env
    env_bytes = sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in environ.items())
    total = sum(size + 1 for size in sizes) + env_bytes + 8 * (len(argv) + len(environ) + 2)
    arg_max = os.sysconf("SC_ARG_MAX")
    if MAX_ARG_BYTES is not None and max(sizes, default=0) > MAX_ARG_BYTES:
        over = f"an argument can hold at most {MAX_ARG_BYTES} bytes (Linux MAX_ARG_STRLEN)"
    elif total > arg_max:
        over = f"the arguments and environment come to {total} bytes, over the {arg_max} the system allows (ARG_MAX)"
    else:
        return None
    name, words = max(values.items(), key=lambda item: sum(len(w.encode()) for w in item[1]))
    size = sum(len(w.encode()) for w in words)
    instead = "pass long text in a file ({FILES})"
    if name == "GUIDELINES":
        instead = "read the guideline files from {FILES} instead"
    return f"{{{name}}} is {size} bytes and {over}: {instead}"


def target_env(config: CliTarget | PythonTarget) -> dict[str, str] | None:
    """The environment of a cli target's commands (cases and healthcheck alike): agentv's own
    plus the target's `env:` (None: inherit agentv's unchanged)."""
    return {**os.environ, **config.env} if config.env else None


def target_problem(config: TargetConfig, dataset_dir: Path) -> str | None:
    """Why a cli target's command cannot start (None when it can, or cannot be told beforehand):
    its working directory must exist and the program its `command_template` starts
    (`template_program`) must be an executable file (a path, relative to that directory) or be
    found on the target's PATH. A template run by a shell is checked by its first word only, when
    that is a plain command; the shell finds the others when it runs. A placeholder that stands
    where agentv cannot quote its value (`unsafe_placeholder`: inside `$(…)`, a here-document,
    ...) is a problem too."""
    if not isinstance(config, CliTarget):
        return None
    unsafe = unsafe_placeholder(config.command_template)
    if unsafe:
        return f"target '{config.name}': {UnsafeTemplate(*unsafe)}"
    cwd = working_dir(dataset_dir, config.cwd)
    if not cwd.is_dir():
        return f"target '{config.name}' cannot start: its cwd is not a directory: {cwd}"
    program = template_program(config.command_template)
    problem = program_problem(program, cwd, target_env(config)) if program else None
    return f"target '{config.name}' cannot start: {problem}" if problem else None


def check_targets(configs: Iterable[TargetConfig], dataset_dir: Path, secrets: Iterable[str]) -> None:
    """Raise TargetError (nothing is run) when the eval target or a judge target cannot start
    (`target_problem`). The message and hint quote the command, its program and its cwd, which
    may hold `${{ VAR }}` values: `secrets` are masked in both."""
    checked = {config.name: config for config in configs}
    problems = [(config, problem) for config in checked.values() if (problem := target_problem(config, dataset_dir))]
    if not problems:
        return
    redact = Redactor(secrets)
    config, _ = problems[0]
    hint = None
    if len(problems) == 1 and isinstance(config, CliTarget):
        hint = redact(f"the target runs `{config.command_template}` in {working_dir(dataset_dir, config.cwd)}")
    raise TargetError(redact("\n".join(problem for _, problem in problems)), hint=hint)


def run_healthcheck(config: TargetConfig, dataset_dir: Path, secrets: list[str], slots: int = 1) -> None:
    """Run the target's healthcheck once, with the target's `env:`; raise TargetError (nothing is
    run) when it fails. The message and hint (its output, command and cwd) have `secrets` masked.
    A worker target first starts its `slots` workers (`worker_start_problem`)."""
    problem = worker_start_problem(config, dataset_dir, secrets, slots)
    if problem is not None:
        raise TargetError(problem, hint="docs/workers.md: a worker first writes its handshake line")
    if not isinstance(config, CliTarget) or config.healthcheck is None:
        return
    check = config.healthcheck
    redact = Redactor(secrets)
    if check.type == "http":
        assert check.url is not None
        failure = http_healthcheck_failure(check.url, check.timeout_seconds)
        if failure:
            raise TargetError(redact(f"healthcheck of target '{config.name}' failed: GET {check.url} {failure}"))
        return
    assert check.command_template is not None
    cwd = str(working_dir(dataset_dir, check.cwd))
    command = render_command(check.command_template, {})
    result = run_process(command.argv, timeout=check.timeout_seconds, cwd=cwd, env=target_env(config))
    failure = describe_failure(result, check.timeout_seconds, DEFAULT_OUTPUT_CAP, redact)
    if failure:
        raise TargetError(
            redact(f"healthcheck of target '{config.name}' failed: {failure}"),
            hint=redact(f"the healthcheck runs `{check.command_template}` in {cwd}"),
        )


def http_healthcheck_failure(url: str, timeout: float) -> str | None:
    """Why a GET of `url` did not answer 2xx within `timeout` seconds (None: it did). Redirects
    are followed; the body is not read."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, method="GET", headers={"User-Agent": "agentv-healthcheck"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        status = exc.code
        exc.close()
    except TimeoutError:
        return f"timed out after {timeout:g}s"
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            return f"timed out after {timeout:g}s"
        detail = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
        return f"could not connect: {detail}"
    except (OSError, ValueError) as exc:
        return f"could not connect: {exc}"
    return None if 200 <= status < 300 else f"returned {status}"


def worker_argv(config: CliTarget | PythonTarget, dataset_dir: Path) -> list[str]:
    """The command that starts one worker: a `mode: worker` target's command, or for `provider:
    python` agentv's own interpreter serving the callable (`python -m agentv_py.worker`)."""
    if isinstance(config, CliTarget):
        return render_command(config.command_template, {}).argv
    paths = [str(working_dir(dataset_dir, path)) for path in config.path]
    return [
        sys.executable,
        "-m",
        "agentv_py.worker",
        "--callable",
        config.callable,
        *(arg for path in paths for arg in ("--path", path)),
    ]


# Workers started by the start check (`worker_start_problem`), kept for the run's pool to adopt
# so their start (a model's import) is not paid twice; stopped at exit if no run adopts them.
_WARM: dict[tuple[str, ...], list[Any]] = {}
_WARM_LOCK = threading.Lock()


def _stop_warm() -> None:
    with _WARM_LOCK:
        workers = [worker for started in _WARM.values() for worker in started]
        _WARM.clear()
    for worker in workers:
        worker.stop()


atexit.register(_stop_warm)


def worker_start_problem(config: TargetConfig, dataset_dir: Path, secrets: list[str], slots: int = 1) -> str | None:
    """Start `slots` workers of a worker target at once and wait for their handshakes (their
    imports done): why one cannot start (a missing callable, an import that raises), said before
    any case runs; None when they started (they are kept for the run's pool, so no import is paid
    twice) or the target has no workers."""
    if not (isinstance(config, PythonTarget) or (isinstance(config, CliTarget) and config.mode == "worker")):
        return None
    from concurrent.futures import ThreadPoolExecutor

    from agentv_py.process.worker import Worker

    cwd = str(working_dir(dataset_dir, config.cwd))
    argv = worker_argv(config, dataset_dir)
    workers = [
        Worker(argv, cwd=cwd, env=target_env(config), registry=None, line_cap=DEFAULT_OUTPUT_CAP)
        for _ in range(max(1, slots))
    ]
    with ThreadPoolExecutor(len(workers)) as starting:
        errors = list(starting.map(lambda worker: worker.start(config.timeout_seconds), workers))
    failed = next((error for error in errors if error is not None), None)
    if failed is not None:
        for worker in workers:
            worker.stop()
        return Redactor(secrets)(f"target '{config.name}' worker could not start: {failed}")
    with _WARM_LOCK:
        previous = _WARM.pop((config.name, cwd, *argv), [])
        _WARM[(config.name, cwd, *argv)] = workers
    for worker in previous:
        worker.stop()
    return None


class WorkerRunner(_LocalTarget):
    """A cli target with `mode: worker`, or a `provider: python` target: long-lived workers (one
    per run slot, started on first use) asked once per case over JSON Lines (`process.worker`,
    docs/workers.md)."""

    def __init__(
        self,
        config: CliTarget | PythonTarget,
        *,
        dataset_dir: Path,
        work_dir: Path,
        secrets: list[str] | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        processes: ProcessRegistry | None = None,
        argv: list[str] | None = None,
    ) -> None:
        from agentv_py.process.worker import Worker, WorkerPool

        super().__init__(config, dataset_dir, work_dir, secrets, output_cap)
        self.config = config
        self._argv = argv if argv is not None else worker_argv(config, dataset_dir)
        self.argv = self._argv  # what starts a worker (its program, a callable's --path): for cache keys
        self._counter = itertools.count()

        def make() -> Worker:
            return Worker(self._argv, cwd=self.cwd, env=self.env, registry=processes, line_cap=output_cap)

        self.pool = WorkerPool(make, start_timeout=config.timeout_seconds)
        with _WARM_LOCK:  # the workers the start check started, if any: adopted, not started again
            warm = _WARM.pop((config.name, self.cwd, *self._argv), [])
        for worker in warm:
            self.pool.adopt(worker, processes)

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        try:
            images = [image.path() for image in case.images]
        except (OSError, ValueError) as exc:
            return TargetOutcome(None, f"target '{self.name}' failed: {exc}", retryable=False)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", case.case.id)[:80]
        number = next(self._counter)
        output_file = str(self.work_dir / f"{safe}.{attempt}.{number}.out")
        request = {
            "v": 1,
            "id": f"{number}",
            "case_id": case.case.id,
            "prompt": case.question,
            "files": list(case.file_paths),
            "images": images,
            "attempt": attempt - 1,  # as {ATTEMPT}: AgentV counted from 0
            "output_file": output_file,
        }
        return self._ask(request, output_file)

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        """As a judge: the messages' text as the prompt, their images as images."""
        number = next(self._counter)
        request: dict[str, Any] = {
            "v": 1,
            "id": f"{number}",
            "case_id": "judge",
            "prompt": "\n\n".join(m.text for m in messages if m.text),
            "files": [],
            "images": [image.path() for message in messages for image in message.images],
            "attempt": 0,
            "output_file": str(self.work_dir / f"judge.{number}.out"),
        }
        outcome = self._ask(request, str(request["output_file"]))
        return ChatReply(outcome.answer, outcome.error, duration_ms=outcome.duration_ms)

    def _ask(self, request: dict[str, Any], output_file: str) -> TargetOutcome:
        worker, error = self.pool.acquire()
        if worker is None:
            why = self.redact(error or "")
            return TargetOutcome(None, f"target '{self.name}' failed: worker could not start: {why}")
        try:
            reply = worker.request(request, self.config.timeout_seconds)
        finally:
            self.pool.release(worker)
        if reply.data is None:
            return TargetOutcome(None, f"target '{self.name}' failed: {self.redact(reply.error or '')}")
        if "error" in reply.data and "answer" not in reply.data:
            tail = reply.stderr.strip().splitlines()[-1] if reply.stderr.strip() else ""
            said = " ".join(str(reply.data.get("error")).split())[:300]  # one line, bounded
            return TargetOutcome(
                None, f"target '{self.name}' failed: {self.redact(said)}" + (f" ({self.redact(tail)})" if tail else "")
            )
        if reply.data.get("output_file") is True and "answer" not in reply.data:
            raw, problem = read_output_file(output_file, self.output_cap)
            try:
                os.unlink(output_file)
            except OSError:
                pass
            if raw is None:
                return TargetOutcome(None, f"target '{self.name}' {problem}")
            text, error = _decode(raw, f"target '{self.name}' answer (the output file)")
            if text is None:
                return TargetOutcome(None, error)
        elif "answer" in reply.data:
            answer = reply.data["answer"]
            # the standard library writes what the worker said, NaN and Infinity included (orjson
            # would write null): the row records it, and scoring reads it as any target's text
            text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        else:
            return TargetOutcome(
                None, f"target '{self.name}' failed: the worker's reply has no 'answer' (nor 'error', 'output_file')"
            )
        if not text.strip():
            return TargetOutcome(None, f"target '{self.name}' returned an empty answer")
        outcome = unwrap_answer(text)
        outcome.duration_ms = reply.duration_ms
        return outcome

    def close(self) -> None:
        self.pool.close()
