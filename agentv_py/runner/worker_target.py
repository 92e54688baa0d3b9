"""Worker targets (`mode: worker`, `provider: python`): long-lived processes asked once per
case over JSON lines (docs/workers.md)."""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import threading
import weakref
from pathlib import Path
from typing import Any

from agentv_py.chat import ChatMessage, ChatReply
from agentv_py.evaluators.judge_payload import judge_env
from agentv_py.locate import working_dir
from agentv_py.models.targets import (
    CliTarget,
    PythonTarget,
    TargetConfig,
)
from agentv_py.prepared import PreparedCase
from agentv_py.process.command import (
    render_command,
)
from agentv_py.process.redact import Redactor
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, ProcessRegistry
from agentv_py.runner.local_target import LocalTarget, read_output_file
from agentv_py.runner.outcome import TargetOutcome, decode_output, unwrap_answer


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


def worker_env(config: CliTarget | PythonTarget) -> dict[str, str]:
    """The environment workers start in: agentv's own as if its virtual environment were
    activated — its interpreter's directory first on PATH (so `python3 worker.py` is agentv's
    Python) and `agentv_py` on PYTHONPATH (so `agentv_py.worker` imports under any Python), as for
    code judges (`judge_payload.judge_env`) — plus the target's `env:`."""
    return {**judge_env(), **config.env}


def _stop_all(workers: list[Any]) -> None:
    stopping = list(workers)
    workers.clear()  # none left to take
    for worker in stopping:
        worker.stop()


class WarmWorkers:
    """The workers the start check started (`start_workers`), handed to the run so its pool adopts
    them (`take`) and their start (a model's import) is not paid twice. Those no pool takes are
    stopped when the handle is closed, collected, or at exit: no module keeps them."""

    def __init__(self, key: tuple[str, ...], workers: list[Any]) -> None:
        self._key = key
        self._workers = workers
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _stop_all, workers)

    def take(self, key: tuple[str, ...]) -> list[Any]:
        """The workers started for the target of `key` (name, cwd, argv), once."""
        with self._lock:
            if key != self._key:
                return []
            taken = list(self._workers)
            self._workers.clear()
        return taken

    def close(self) -> None:
        with self._lock:
            self._finalizer()


def start_workers(
    config: TargetConfig, dataset_dir: Path, secrets: list[str], slots: int = 1
) -> WarmWorkers | str | None:
    """Start `slots` workers of a worker target at once and wait for their handshakes (their
    imports done): why one cannot start (a missing callable, an import that raises), said before
    any case runs; else the started workers, for the run to adopt (None: the target has none)."""
    if not (isinstance(config, PythonTarget) or (isinstance(config, CliTarget) and config.mode == "worker")):
        return None
    from concurrent.futures import ThreadPoolExecutor

    from agentv_py.process.worker import Worker

    cwd = str(working_dir(dataset_dir, config.cwd))
    argv = worker_argv(config, dataset_dir)
    workers = [
        Worker(argv, cwd=cwd, env=worker_env(config), registry=None, line_cap=DEFAULT_OUTPUT_CAP)
        for _ in range(max(1, slots))
    ]
    with ThreadPoolExecutor(len(workers)) as starting:
        errors = list(starting.map(lambda worker: worker.start(config.timeout_seconds), workers))
    failed = next((error for error in errors if error is not None), None)
    if failed is not None:
        for worker in workers:
            worker.stop()
        return Redactor(secrets)(f"target '{config.name}' worker could not start: {failed}")
    return WarmWorkers((config.name, cwd, *argv), workers)


class WorkerRunner(LocalTarget):
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
        warm: WarmWorkers | None = None,
    ) -> None:
        from agentv_py.process.worker import Worker, WorkerPool

        super().__init__(config, dataset_dir, work_dir, secrets, output_cap)
        self.config = config
        self.env = worker_env(config)
        self._argv = argv if argv is not None else worker_argv(config, dataset_dir)
        self.argv = self._argv  # what starts a worker (its program, a callable's --path): for cache keys
        self._counter = itertools.count()

        def make() -> Worker:
            return Worker(self._argv, cwd=self.cwd, env=self.env, registry=processes, line_cap=output_cap)

        self.pool = WorkerPool(make, start_timeout=config.timeout_seconds)
        # the workers the start check started, if any: adopted, not started again
        for worker in warm.take((config.name, self.cwd, *self._argv)) if warm is not None else []:
            self.pool.adopt(worker, processes)

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        try:
            images = [image.path() for image in case.images]
        except (OSError, ValueError) as exc:
            return TargetOutcome(None, f"target '{self.name}' failed: {exc}", retryable=False)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", case.case.id)[:80]
        number = next(self._counter)
        output_file = str(self.work_dir / f"{safe}.{attempt}.{number}{self.config.output_suffix}")
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
            "output_file": str(self.work_dir / f"judge.{number}{self.config.output_suffix}"),
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
            text, error = decode_output(raw, f"target '{self.name}' answer (the output file)")
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
