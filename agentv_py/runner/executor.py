"""What runs a spec's cases (`Executor`: the local thread pool `Run`, Ray's `RayRun`, and
`InlineRun` here), as the pipeline sees it: entered, asked to `execute(on_row)` once, left.

`InlineRun` scores each case in turn on the calling thread: for a target that answers at once and
evaluators that wait on nothing (re-scoring stored answers with no code or LLM judge), threads
would only contend for the interpreter (measured). Its rows are made and masked as `Run` makes
them (`engine.run_unit`, `redaction.redact_row`). Every executor stops the same way: Ctrl-C, or
SIGTERM taken as Ctrl-C (`sigterm_interrupts`), is `Interrupted` with the rows handed over kept."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType, TracebackType
from typing import Protocol

from agentv_py.models.results import ResultRow
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.process.redact import Redactor
from agentv_py.runner.engine import RunOptions, run_unit
from agentv_py.runner.outcome import TargetRunner
from agentv_py.runner.redaction import redact_row


class Interrupted(Exception):
    """The run was stopped (Ctrl-C, SIGTERM, or `Run.stop()` from elsewhere) before every case
    had its row; the rows handed over are on disk."""


class Executor(Protocol):
    """Runs the cases it was built with: `execute` hands each row to `on_row` on the calling
    thread as its case finishes; Ctrl-C or SIGTERM is `Interrupted` (the rows handed over stay);
    leaving the `with` block stops whatever it started."""

    notices: list[str]

    def execute(self, on_row: Callable[[ResultRow], None]) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class InlineRun:
    """Every case scored in turn on the calling thread with `runner` as its target (no judges:
    nothing to wait on, nothing to kill)."""

    def __init__(
        self,
        dataset: LoadedDataset,
        cases: Sequence[PreparedCase],
        runner: TargetRunner,
        *,
        options: RunOptions,
        secrets: Sequence[str] = (),
    ) -> None:
        self.notices: list[str] = []
        self.dataset = dataset
        self.cases = cases
        self.runner = runner
        self.options = options
        self.redact = Redactor(list(secrets))

    def execute(self, on_row: Callable[[ResultRow], None]) -> None:
        """Ctrl-C or SIGTERM: Interrupted, after the last whole row."""
        with sigterm_interrupts():
            try:
                for prepared in self.cases:
                    for row in run_unit(prepared, self.dataset, self.runner, self.options):
                        on_row(redact_row(self.redact, row))
            except KeyboardInterrupt:
                raise Interrupted() from None

    def __enter__(self) -> InlineRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        return None


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM stops the work like Ctrl-C (KeyboardInterrupt), so the same
    clean-up runs for both; the previous handler comes back afterwards. Only on the main thread:
    elsewhere signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        yield
    finally:  # None: the old handler was not installed from Python; the default is restored
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
