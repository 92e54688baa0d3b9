"""Target runners: produce the answer for one case (SPEC §2). The cli, mock and model runners
and `make_runner`; worker targets are in `worker_target`, what they share in `local_target`,
their outcome in `outcome`, the checks before a run in `target_checks`."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import threading
from pathlib import Path
from typing import Any

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.errors import TargetError
from agentv_py.models.foreign_targets import OpaqueTarget, not_runnable_message
from agentv_py.models.model_targets import AnthropicTarget, AzureTarget, GeminiTarget
from agentv_py.models.targets import (
    CliTarget,
    MockTarget,
    ModelTarget,
    PythonTarget,
    TargetConfig,
)
from agentv_py.prepared import PreparedCase
from agentv_py.process.command import (
    UnsafeTemplate,
    render_command,
    render_files,
)
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, ProcessRegistry, ProcResult, run_process
from agentv_py.runner.anthropic import AnthropicClient
from agentv_py.runner.azure import AzureClient
from agentv_py.runner.chat_messages import case_messages
from agentv_py.runner.gemini import GeminiClient
from agentv_py.runner.llm import ModelClient, OpenAIClient
from agentv_py.runner.local_target import (
    MISSING_OUTPUT,
    LocalTarget,
    command_line_problem,
    missing_output_hint,
    read_output_file,
    written_beside,
)
from agentv_py.runner.outcome import (
    CliCall,
    TargetOutcome,
    TargetRunner,
    decode_output,
    describe_failure,
    unwrap_answer,
)
from agentv_py.runner.worker_target import WarmWorkers, WorkerRunner
from agentv_py.scoring.jsontext import dumps


class CliRunner(LocalTarget):
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

    def _output_path(self, label: str, attempt: int, suffix: str) -> str:
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
        outcome.stderr = call.stderr
        return outcome

    def _prompt_file(self, values: dict[str, list[str]], label: str, attempt: int) -> str | None:
        """{PROMPT_FILE} (AgentV v4.42's): {PROMPT}'s text written to a file of the run's scratch
        directory, removed after the call; None when the command does not use it."""
        if "{PROMPT_FILE}" not in self.config.command_template:
            return None
        path = self._output_path(label, attempt, ".prompt.txt")
        Path(path).write_text("\n".join(values.get("PROMPT", [""])), encoding="utf-8")
        values["PROMPT_FILE"] = [path]
        return path

    def call(
        self,
        values: dict[str, list[str]],
        label: str,
        attempt: int,
        *,
        output_cap: int | None = None,
        suffix: str | None = None,
    ) -> CliCall:
        """Run the command once with these placeholder values: the answer's text ({OUTPUT_FILE}, or
        stdout when the template has none), or a one-line error. `output_cap` (default: the
        runner's) bounds what is read; `suffix` ends the {OUTPUT_FILE} name (default the target's
        `output_suffix`; `.jsonl` for a batch)."""
        cap = self.output_cap if output_cap is None else output_cap
        ending = self.config.output_suffix if suffix is None else suffix
        output_path = self._output_path(label, attempt, ending) if self._uses_output_file else None
        if output_path:
            values["OUTPUT_FILE"] = [output_path]
        prompt_path = self._prompt_file(values, label, attempt)
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
        text, error = self._answer_text(result, output_path, timeout, cap, ending)
        for written in (output_path, prompt_path):
            if written:
                with contextlib.suppress(OSError):
                    os.unlink(written)
        return CliCall(
            text,
            error,
            # A program that cannot start, or a shell reporting one it cannot find or run (127, 126).
            retryable=not (result.cannot_start or (command.shell and result.returncode in (126, 127))),
            duration_ms=result.duration * 1000,
            stderr=self.redact(said) if (said := result.stderr_text()) is not None else None,
        )

    def _answer_text(
        self, result: ProcResult, output_path: str | None, timeout: float, cap: int, ending: str
    ) -> tuple[str | None, str | None]:
        """The answer's text, or (None, why not; a missing {OUTPUT_FILE} names what the call wrote
        beside it under another ending than `ending`, and those files are removed)."""
        failure = describe_failure(result, timeout, cap, self.redact)
        if failure:
            return None, f"target '{self.name}' failed: {failure}"
        if output_path:
            raw_file, problem = read_output_file(output_path, cap)
            if raw_file is None:
                if problem == MISSING_OUTPUT:
                    tail = result.stderr_tail()
                    strays = written_beside(output_path, ending)  # looked for only when it is missing
                    beside = missing_output_hint(output_path, strays) if strays else ""
                    for stray in strays:
                        with contextlib.suppress(OSError):
                            os.unlink(stray)
                    return None, f"target '{self.name}' exited 0 but {problem}{beside}" + (
                        f": {self.redact(tail)}" if tail else ""
                    )
                return None, f"target '{self.name}' {problem}"
            raw = raw_file
            what = "the output file"
        else:
            raw, what = result.stdout, "stdout"
        text, error = decode_output(raw, f"target '{self.name}' answer ({what})")
        if error or text is None:
            return None, error
        if not text.strip():
            return None, f"target '{self.name}' returned an empty answer ({what})"
        return text, None


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
        self._secrets = secrets
        self._at: dict[float, ModelRunner] = {}  # `with_temperature`'s, made once each
        self._at_lock = threading.Lock()

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        return self.client.complete(messages)

    def with_temperature(self, temperature: float) -> ModelRunner:
        """This judge at `temperature` in place of its config's (an llm_judge's `temperature`):
        a runner of the same target with that temperature, made once per temperature."""
        if temperature == self.client.config.temperature:
            return self
        with self._at_lock:
            runner = self._at.get(temperature)
            if runner is None:
                config = self.client.config.model_copy(update={"temperature": temperature})
                runner = self._at[temperature] = ModelRunner(config, self._secrets)
            return runner

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


def make_runner(
    config: TargetConfig,
    *,
    dataset_dir: Path,
    work_dir: Path,
    secrets: list[str],
    processes: ProcessRegistry | None = None,
    warm: WarmWorkers | None = None,
) -> TargetRunner:
    """The runner for a target; every runner also answers chat messages, so any target can judge.
    Commands it starts are tracked in `processes` (the run's registry); a worker target adopts
    the workers its start check started (`warm`)."""
    if isinstance(config, PythonTarget) or (isinstance(config, CliTarget) and config.mode == "worker"):
        return WorkerRunner(
            config, dataset_dir=dataset_dir, work_dir=work_dir, secrets=secrets, processes=processes, warm=warm
        )
    if isinstance(config, CliTarget):
        return CliRunner(config, dataset_dir=dataset_dir, work_dir=work_dir, secrets=secrets, processes=processes)
    if isinstance(config, MockTarget):
        return MockRunner(config)
    if isinstance(config, OpaqueTarget):  # refused by `plan_eval` before a run starts; never run
        raise TargetError(not_runnable_message(config))
    return ModelRunner(config, secrets)  # openai, azure, anthropic, gemini
