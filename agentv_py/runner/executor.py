"""What runs a spec's cases (`Executor`: the local thread pool `Run`, Ray's `RayRun`, and
`InlineRun` here), as the pipeline sees it: entered, asked to `execute(on_row)` once, left.

`InlineRun` scores each case in turn on the calling thread: for a target that answers at once and
evaluators that wait on nothing (re-scoring stored answers with no code or LLM judge), threads
would only contend for the interpreter (measured). Its rows are made and masked as `Run` makes
them (`engine.run_case`, `redaction.redact_row`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Protocol

from agentv_py.models.results import ResultRow
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.process.redact import Redactor
from agentv_py.runner.engine import RunOptions, run_case
from agentv_py.runner.outcome import TargetRunner
from agentv_py.runner.redaction import redact_row
from agentv_py.runner.run import Interrupted, sigterm_interrupts


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
                    on_row(redact_row(self.redact, run_case(prepared, self.dataset, self.runner, self.options)))
            except KeyboardInterrupt:
                raise Interrupted() from None

    def __enter__(self) -> InlineRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        return None
