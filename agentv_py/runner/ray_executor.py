"""`--executor ray`: each case (its target call and its scoring) is a Ray task.

The driver (this process) submits the cases, a bounded number at a time, and writes every row
itself as its task finishes, so rows stream to the results file exactly as with the local thread
pool. A task runs the case the way the local executor runs it: a one-case `Run` in the Ray worker
(the same retries, timeouts, process reaping, redaction and scoring), which never raises; a task
whose worker dies, or that Ray cannot run, becomes that case's error row. Ctrl-C cancels every
outstanding task and leaves the results file valid. Ray is imported only here, only when asked
for (`pip install 'agentv-py[ray]'`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import queue
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, cast

from agentv_py.errors import AgentvError, ConfigError
from agentv_py.extras import extra_problem
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import CliTarget, PythonTarget, TargetConfig
from agentv_py.prepared import LoadedDataset, PreparedCase, PreparedCases
from agentv_py.process.redact import Redactor
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.engine import RunOptions, score_case
from agentv_py.runner.executor import Interrupted, sigterm_interrupts
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.runner.ray_driver import init_options, keeps_the_sigterm_handler, ray_messages
from agentv_py.runner.redaction import redact_row, sent_keys
from agentv_py.runner.run import Run, TargetCatalog
from agentv_py.runner.worker_target import WarmWorkers

CONNECT_SECONDS = 10.0  # how long an unreachable --ray-address may take to say so
_WAIT_SECONDS = 0.1
BATCH_CASES = 32  # at most this many cases per Ray task
CANCEL_GRACE_SECONDS = 5.0  # an interrupted task's run stops its commands within this, or is killed


@dataclass(frozen=True)
class _Spec:
    """What every task needs besides its case: shipped to the cluster once (`ray.put`)."""

    dataset: LoadedDataset  # without its cases
    target: TargetConfig
    options: RunOptions
    judges: Mapping[str, TargetConfig]
    default_judge: str | None
    secrets: Sequence[str]
    cache: CacheSettings | None
    catalog: TargetCatalog | None  # resolved by the driver (`_Resolved`): the same targets as a local run


@dataclass(frozen=True)
class _Resolved:
    """A proxy catalog's `resolve`, answered from what the driver resolved before the run (the
    targets file and its `${{ VAR }}` values are the driver's, not the cluster's): a target, or
    why not, the same sentence a local run gives."""

    found: Mapping[str, tuple[TargetConfig, list[str]] | str]

    def __call__(self, name: str) -> tuple[TargetConfig, list[str]]:
        got = self.found.get(name, f"unknown target '{name}'")
        if isinstance(got, str):
            raise AgentvError(got)
        return got


def resolve_all(catalog: TargetCatalog) -> _Resolved:
    """Every target of `catalog` resolved now, in the driver: what a Ray task can carry."""
    found: dict[str, tuple[TargetConfig, list[str]] | str] = {}
    for name in catalog.names:
        try:
            found[name] = catalog.resolve(name)
        except AgentvError as exc:
            found[name] = "; ".join(map(str, exc.problems)) if isinstance(exc, ConfigError) else exc.message
    return _Resolved(found)


def _run_batch(spec: _Spec, cases: list[PreparedCase]) -> Iterator[tuple[ResultRow, list[str]]]:
    """A Ray task (a streaming generator): a few cases run as the local executor runs them, in
    one Run of one worker (its set-up paid once for the batch), each row yielded as it finishes,
    with what the run had to say since the last (its notices). Cancelled (Ray raises
    KeyboardInterrupt here), it stops the run: every process its commands started is killed."""
    done: queue.Queue[ResultRow | BaseException | None] = queue.Queue()
    with Run(
        spec.dataset,
        cases,
        spec.target,
        options=dataclasses.replace(spec.options, workers=1),
        judges=spec.judges,
        default_judge=spec.default_judge,
        secrets=spec.secrets,
        catalog=spec.catalog,
        cache=spec.cache,
    ) as run:

        def work() -> None:
            try:
                run.execute(done.put)
            except BaseException as exc:  # noqa: BLE001 - handed to the task's thread, raised there
                done.put(exc)
            finally:
                done.put(None)

        thread = threading.Thread(target=work, name="agentv-ray-batch", daemon=True)
        thread.start()
        said = 0
        try:
            while True:
                try:  # polled: Ray's cancel (a KeyboardInterrupt) lands between two waits
                    item = done.get(timeout=_WAIT_SECONDS)
                except queue.Empty:
                    continue
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                notices, said = run.notices[said:], len(run.notices)
                yield item, notices
        except KeyboardInterrupt:
            run.stop()
            raise
        finally:
            thread.join(timeout=CANCEL_GRACE_SECONDS)


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
        resolved = resolve_all(catalog) if catalog is not None else _Resolved({})
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
        self._spec = _Spec(stub, target, self.options, dict(judges or {}), default_judge, list(secrets), cache, catalog)
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
        task = ray.remote(_run_batch).options(max_retries=0, num_returns="streaming", **resources)
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
        pending: dict[Any, dict[str, PreparedCase]] = {}  # a task's stream -> its cases still without a row
        try:
            more = True
            while more or pending:
                while more and len(pending) < limit:
                    batch = list(itertools.islice(waiting, size))
                    if not batch:
                        more = False
                        break
                    pending[task.remote(spec, batch)] = {prepared.case.id: prepared for prepared in batch}
                if not pending:
                    break
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=_WAIT_SECONDS)
                for stream in ready:
                    self._next_row(stream, pending, on_row)
        except KeyboardInterrupt:
            self._cancel(list(pending))
            raise Interrupted() from None

    def _next_row(
        self, stream: Any, pending: dict[Any, dict[str, PreparedCase]], on_row: Callable[[ResultRow], None]
    ) -> None:
        """The next row of a task's stream to `on_row`; at its end, an error row for each case the
        task did not give one (it failed, or its worker died)."""
        ray = self._ray
        left = pending[stream]
        failure: Exception
        try:
            row, notices = ray.get(next(stream))
        except StopIteration:  # the end: every case had its row, unless the task stopped early
            failure = RuntimeError("the task ended before every case had its row")
        except ray.exceptions.RayError as exc:
            failure = exc
        else:
            left.pop(row.eval_id, None)
            for notice in notices:
                self._notice(notice)
            on_row(row)
            return
        del pending[stream]
        for prepared in left.values():
            on_row(self._lost(prepared, failure))

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

    def _lost(self, prepared: PreparedCase, exc: Exception) -> ResultRow:
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
        )
        return redact_row(self.redact, row)
