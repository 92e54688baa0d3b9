"""`--executor ray`: the cases (their target calls and their scoring) run in Ray tasks, a batch each.

The driver (this process) submits the batches, a bounded number at a time, and writes every row
itself as its task sends it, so rows stream to the results file exactly as with the local thread
pool. A task (runner/ray_task.py) runs its cases the way the local executor runs them: a `Run` in
the Ray worker (the same retries, timeouts, process reaping, redaction and scoring), which never
raises, sending its rows as they finish (those finished within FLUSH_SECONDS of each other as one
object); a task whose worker dies, or that Ray cannot run, gives each of its cases without a row
an error row (the cases it had not run, and those whose rows it had not yet sent). Ctrl-C cancels
every outstanding task and leaves the results file valid. Ray is imported only here, only when
asked for (`pip install 'agentv-py[ray]'`).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, cast

from agentv_py.errors import AgentvError
from agentv_py.extras import extra_problem
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import CliTarget, PythonTarget, TargetConfig
from agentv_py.prepared import LoadedDataset, PreparedCase, PreparedCases
from agentv_py.process.redact import Redactor
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.engine import RunOptions, rejudges, score_case
from agentv_py.runner.executor import Interrupted, sigterm_interrupts
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.runner.ray_driver import init_options, keeps_the_sigterm_handler, ray_messages
from agentv_py.runner.ray_task import CANCEL_GRACE_SECONDS, Resolved, TaskSpec, resolve_all, run_batch
from agentv_py.runner.redaction import redact_row, sent_keys
from agentv_py.runner.run import TargetCatalog
from agentv_py.runner.worker_target import WarmWorkers

CONNECT_SECONDS = 10.0  # how long an unreachable --ray-address may take to say so
_WAIT_SECONDS = 0.1
BATCH_CASES = 32  # at most this many cases per Ray task


def ray_problem(target: TargetConfig) -> str | None:
    """Why a target cannot run under `--executor ray` (None when it can)."""
    if isinstance(target, PythonTarget) or (isinstance(target, CliTarget) and target.mode == "worker"):
        return (
            f"target '{target.name}' keeps a long-lived worker (mode: worker, provider: python), which a Ray task "
            "would start for every case; run it with the local executor"
        )
    if isinstance(target, CliTarget) and target.provider_batching:
        return (
            f"target '{target.name}' answers every case in one call (provider_batching): run it with the local executor"
        )
    return None


def check_ray(target: TargetConfig, judges: Mapping[str, TargetConfig] | None = None) -> None:
    """Before anything runs: Ray is installed and the target and the judge targets can run in Ray
    tasks (AgentvError, exit 2)."""
    missing = extra_problem("ray", "--executor ray")
    if missing is not None:
        raise AgentvError(missing)
    problem = ray_problem(target)
    for name, judge in (judges or {}).items():
        if problem is None and name != target.name:
            found = ray_problem(judge)
            problem = f"judge {found}" if found is not None else None
    if problem is not None:
        raise AgentvError(f"--executor ray: {problem}")


def _reachable(address: str) -> None:
    """An explicit cluster address that does not answer is an error at once, not a long hang."""
    if address in ("auto", "local"):
        return
    host_port = address.split("://", 1)[-1].rsplit("/", 1)[0]
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise AgentvError(
            f"--ray-address {address!r} is not HOST:PORT (or ray://HOST:PORT, auto)",
            hint="the address `ray start --head` printed, e.g. 10.0.0.5:6379",
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise AgentvError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}",
            hint="check --ray-address / RAY_ADDRESS, or leave both unset to start a local Ray instance",
        ) from None


_Left = dict[tuple[str, int | None], PreparedCase]  # (id, repeat) -> a run of a case a task has not answered


class RayRun:
    """A run whose cases are Ray tasks; the same interface as `Run` for the session:

    with RayRun(dataset, cases, target, ...) as run:
        run.execute(on_row)
    """

    def __init__(
        self,
        dataset: LoadedDataset,
        cases: Sequence[PreparedCase],
        target: TargetConfig,
        *,
        options: RunOptions | None = None,
        judges: Mapping[str, TargetConfig] | None = None,
        default_judge: str | None = None,
        secrets: Sequence[str] = (),
        catalog: TargetCatalog | None = None,
        on_notice: Callable[[str], None] | None = None,
        cache: CacheSettings | None = None,
        answers: TargetRunner | None = None,
        warm: WarmWorkers | None = None,
    ) -> None:
        """As `Run`'s. `answers` and `warm` are what a task cannot carry (stored answers read from
        a local file, live worker processes): planning never gives them to Ray."""
        if answers is not None or warm is not None:
            raise AgentvError("--executor ray: stored answers and started workers stay on this machine")
        check_ray(target)
        import ray

        self._ray = ray
        self.cases = cases
        self.options = options or RunOptions()
        self.notices: list[str] = []  # what the tasks had to say, each once
        self._on_notice = on_notice
        self.dataset = dataset
        self.target = target
        resolved = resolve_all(catalog) if catalog is not None else Resolved({})
        proxied = [found for found in resolved.found.values() if not isinstance(found, str)]
        if catalog is not None:
            catalog = TargetCatalog(list(catalog.names), resolved)
        self.redact = Redactor(
            [
                *secrets,
                *sent_keys([target, *(judges or {}).values(), *(config for config, _ in proxied)]),
                *(value for _, values in proxied for value in values),
            ]
        )
        stub = LoadedDataset(
            dataset.path,
            dataset.name,
            dataset.model.model_copy(update={"evalcases": []}),
            cast(PreparedCases, []),  # the cases go one per task
            [],
            None,
        )
        self._spec = TaskSpec(
            stub, target, self.options, dict(judges or {}), default_judge, list(secrets), cache, catalog
        )
        self._address = self.options.ray_address or os.environ.get("RAY_ADDRESS") or None
        self._started = False
        self._guards = contextlib.ExitStack()  # closed after ray.shutdown: signal handlers, Ray's messages

    def __enter__(self) -> RayRun:
        ray = self._ray
        # SIGTERM is Ctrl-C from here to the end of the run, ray.init's seconds included (Ray would
        # put its own handler there: exit 15, no manifest)
        self._guards.enter_context(sigterm_interrupts())
        try:
            if not ray.is_initialized():
                if self._address is not None:
                    _reachable(self._address)
                cpus = max(1, min(self.options.workers, os.cpu_count() or 1))
                options = init_options(local=self._address is None, cpus=cpus, verbose=self.options.verbose)
                # what Ray's driver prints to stdout (a dead worker's raylet message): a notice
                # with --verbose, else nothing; stdout is agentv's
                self._guards.enter_context(ray_messages(ray, self._notice if self.options.verbose else None))
                with keeps_the_sigterm_handler(ray):
                    self._started = True
                    ray.init(address=self._address, **options)
                self._guards.enter_context(sigterm_interrupts())  # over what Ray's core put there
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self._started and self._ray.is_initialized():
                self._ray.shutdown()
        finally:
            self._guards.close()

    def execute(self, on_row: Callable[[ResultRow], None]) -> None:
        """Submit the cases (at most `workers` per cluster CPU... bounded by `2 * workers` in flight)
        and hand each row to `on_row` as its task finishes. Ctrl-C: every outstanding task is
        cancelled, Interrupted is raised (the rows handed over are on disk)."""
        ray = self._ray
        resources: dict[str, float] = {}
        for key in ("num_cpus", "num_gpus"):  # the target's (`TargetBase`); an opaque target never runs
            value = getattr(self.target, key, None)
            if value is not None:
                resources[key] = value
        task = ray.remote(run_batch).options(max_retries=0, num_returns="streaming", **resources)
        spec = ray.put(self._spec)
        limit = max(2 * self.options.workers, 2)
        # a few cases per task: the task's set-up (a Run: threads, scratch, reaper) is paid per
        # batch, and each in-flight slot still gets several batches (the last ones even out)
        size = max(1, min(BATCH_CASES, math.ceil(len(self.cases) / (4 * limit))))
        # SIGTERM as Ctrl-C, as a local run takes it: installed after ray.init, whose core put its
        # own handler there (a fatal-signal dump and exit 1)
        with sigterm_interrupts():
            self._submit(task, spec, iter(self.cases), size, limit, on_row)

    def _submit(
        self,
        task: Any,
        spec: Any,
        waiting: Iterator[PreparedCase],
        size: int,
        limit: int,
        on_row: Callable[[ResultRow], None],
    ) -> None:
        """Keep at most `limit` batch tasks in flight, hand each row to `on_row` as its task yields
        it; a task that fails (its worker died) gives each of its cases without a row an error row.
        Ctrl-C (or SIGTERM): every outstanding task is cancelled, Interrupted is raised."""
        ray = self._ray
        pending: dict[Any, _Left] = {}  # a task's stream -> its cases still without a row
        try:
            more = True
            while more or pending:
                while more and len(pending) < limit:
                    batch = list(itertools.islice(waiting, size))
                    if not batch:
                        more = False
                        break
                    pending[task.remote(spec, batch)] = {(case.case.id, case.repeat): case for case in batch}
                if not pending:
                    break
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=_WAIT_SECONDS)
                for stream in ready:
                    self._next_rows(stream, pending, on_row)
        except KeyboardInterrupt:
            self._cancel(list(pending))
            raise Interrupted() from None

    def _next_rows(self, stream: Any, pending: dict[Any, _Left], on_row: Callable[[ResultRow], None]) -> None:
        """The next rows of a task's stream to `on_row`; at its end, an error row for each case the
        task did not give one (it failed, or its worker died)."""
        ray = self._ray
        left = pending[stream]
        failure: Exception
        try:
            rows, notices = ray.get(next(stream))
        except StopIteration:  # the end: every case had its row, unless the task stopped early
            failure = RuntimeError("the task ended before every case had its row")
        except ray.exceptions.RayError as exc:
            failure = exc
        else:
            for notice in notices:
                self._notice(notice)
            for row in rows:
                left.pop((row.eval_id, row.repeat), None)  # a run of a case (its rejudges come together)
                on_row(row)
            return
        del pending[stream]
        for prepared in left.values():
            for rejudge in rejudges(self.options):
                on_row(self._lost(prepared, failure, rejudge))

    def _cancel(self, refs: list[Any]) -> None:
        """Stop the tasks in flight as a local run stops: each task's run is interrupted (Ray
        raises KeyboardInterrupt in it), so it kills every process its commands started, their
        descendants included; a task still running after CANCEL_GRACE_SECONDS is killed with its
        worker (whose direct children Ray kills)."""
        ray = self._ray
        for ref in refs:
            ray.cancel(ref, force=False)
        ends = {ref.completed(): ref for ref in refs}  # a stream is done when its task is, not its next row
        try:
            _, left = ray.wait(list(ends), num_returns=len(ends), timeout=CANCEL_GRACE_SECONDS)
        except KeyboardInterrupt:  # a second Ctrl-C: no more waiting
            left = list(ends)
        for end in left:
            ray.cancel(ends[end], force=True)

    def _notice(self, text: str) -> None:
        text = self.redact(text)
        if text not in self.notices:
            self.notices.append(text)
            if self._on_notice is not None:
                self._on_notice(text)

    def _lost(self, prepared: PreparedCase, exc: Exception, rejudge: int | None) -> ResultRow:
        """The error row of a case whose task did not return (its worker died, Ray failed)."""
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        row = score_case(
            prepared,
            [],
            TargetOutcome(None, f"the Ray task of the case failed: {type(exc).__name__}: {reason}"),
            dataset=self.dataset,
            target=self.target.name,
            attempts=1,
            duration_ms=0.0,
            run_id=self.options.run_id,
            rejudge=rejudge,
        )
        return redact_row(self.redact, row)
