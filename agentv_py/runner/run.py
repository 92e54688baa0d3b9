"""One eval run as an object that owns its lifecycle: worker threads, target and judge runners,
a scratch directory, and a registry of every process it starts.

Whatever stops a run — the last case finishing, Ctrl-C, SIGTERM, an exception from writing a
row, a closed stdout pipe, an internal error — goes through `Run.stop()`: the workers are told
to stop, every process the run started is killed, and the threads are joined against one shared
deadline. Rows already handed over stay written; no partial row is produced.

Every row passes through `Run.redacted` before it is handed over: the run's secrets (`${{ VAR }}`
values and the API keys it sends) are masked in every string of it, so no writer or renderer
downstream can leak one.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from agentv_py.chat import ChatClient
from agentv_py.errors import AgentvError, ConfigError
from agentv_py.evaluators.target_proxy import ProxyTargets
from agentv_py.models.results import ResultRow, build_row_models
from agentv_py.models.targets import CliTarget, MockTarget, TargetConfig
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.process.redact import Redactor
from agentv_py.process.spawn import ProcessRegistry
from agentv_py.process.urls import FetchError, is_url
from agentv_py.runner.batch import BatchResult, batch_note, failure_notice, run_batch
from agentv_py.runner.cache import Cache, CachedChat, CachedTarget, CacheSettings
from agentv_py.runner.cache_store import CacheStore
from agentv_py.runner.engine import MAX_WORKERS, Judging, RunOptions, rejudges, run_unit, score_case
from agentv_py.runner.executor import Interrupted, sigterm_interrupts
from agentv_py.runner.handoff import Handoff
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.runner.redaction import (
    case_url_secrets,
    redact_row,
    sent_keys,
)
from agentv_py.runner.targets import CliRunner, make_runner
from agentv_py.runner.worker_target import WarmWorkers

if TYPE_CHECKING:
    from agentv_py.process.fetch import RemoteFiles

JOIN_SECONDS = 5.0  # how long stopping waits for all workers together (not per thread)
_POLL_SECONDS = 0.1


@dataclasses.dataclass(frozen=True)
class TargetCatalog:
    """Every target of the targets file, for code judges' target proxies (AgentV let a proxy
    request name any of them). `resolve(name)` gives the target with its `${{ VAR }}` values read
    at that moment and those values (secrets), or raises AgentvError (an unset variable, a target
    agentv does not run). The session builds it from the loader: the runner reads no targets file."""

    names: Sequence[str]
    resolve: Callable[[str], tuple[TargetConfig, list[str]]]


class Run:
    """One run of a dataset's cases against a target. Use it as a context manager:

        with Run(dataset, cases, target) as run:
            run.execute(on_row)

    `execute` hands each row to `on_row` on the calling thread as its case finishes; leaving the
    `with` block (normally or by any exception) stops the run and removes its scratch directory.
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
        """`answers`: what answers the cases instead of a runner built from `target` (rescore's
        stored answers: no program is run); `target` still says which keys the run sends.
        `warm`: the workers the target's start check started, adopted by the run's pool (those
        it does not adopt are stopped when the run closes)."""
        build_row_models()  # here, in one thread: the workers make rows
        self.notices: list[str] = []  # what the run had to say while running (a failed batch)
        self._on_notice = on_notice
        self.cache: Cache | None = None  # the answer cache, when on and usable (runner/cache.py)
        self.dataset = dataset
        self.cases = cases
        self.options = options or RunOptions()
        self.processes = ProcessRegistry()
        self._stop = threading.Event()
        self._deadline: float | None = None  # set by the first stop(): one deadline for all joins
        self._threads: list[threading.Thread] = []
        self._runners: list[TargetRunner] = []  # those with long-lived workers are closed with the run
        self._failure: BaseException | None = None  # what killed a worker, re-raised by execute
        self.work_dir = Path(tempfile.mkdtemp(prefix="agentv-"))
        try:
            # the `${{ VAR }}` values, and every API key the run sends (a literal `api_key` or
            # $OPENAI_API_KEY included): masked in every row and message
            all_secrets = [*secrets, *sent_keys([target, *(judges or {}).values()]), *case_url_secrets(self.cases)]
            self.redact = Redactor(all_secrets)
            self._warm = warm
            runner = answers if answers is not None else self._make_runner(target, all_secrets, warm)
            self.runner: TargetRunner = runner
            clients: dict[str, ChatClient] = {
                name: runner if config is target else self._make_runner(config, all_secrets)
                for name, config in (judges or {}).items()
            }
            # provider_batching: one command answers every case before they run (runner/batch.py)
            self.batching = isinstance(target, CliTarget) and target.provider_batching
            if cache is not None:
                self.cache = self._open_cache(cache)
            if self.cache is not None and cache is not None:
                # a batch answers every case in one call: not cached; a mock costs nothing
                if cache.target and not self.batching and not isinstance(target, MockTarget):
                    self.runner = CachedTarget(runner, target, self.cache)
                    if isinstance(target, CliTarget) and not target.cache_key and not self.cache.programs(runner):
                        self.notice(
                            f"cache: target '{target.name}' names no file of the project agentv can hash (its "
                            "program lies outside the project, or a variable names it): a change to the "
                            "extractor is not noticed; set the target's cache_key and change it with the program"
                        )
                elif cache.target and self.batching:
                    self.notice(f"cache: target '{target.name}' answers every case in one batch: not cached")
                for name, config in (judges or {}).items():
                    if name in cache.judges and not isinstance(config, MockTarget):
                        clients[name] = CachedChat(clients[name], config, self.cache)
        except BaseException:
            if self.cache is not None:
                self.cache.store.close()
            if warm is not None:
                warm.close()
            shutil.rmtree(self.work_dir, ignore_errors=True)
            raise
        self._secrets = all_secrets
        self._secrets_lock = threading.Lock()
        self._catalog = catalog  # given when a code judge has `target:`: its proxy may name any target
        judges_seen = clients if catalog is None else ProxyTargets(clients, catalog.names, self._proxy_target)
        self.judging = Judging(judges_seen, default_judge)
        self._remote: RemoteFiles | None = None  # files given by URL: fetched once per run
        self._remote_lock = threading.Lock()

    def _open_cache(self, settings: CacheSettings) -> Cache | None:
        """The run's cache, or None when it has nothing to cache or its store cannot be used (said
        once, through `notice`: the run goes on without it)."""
        if not settings.target and not settings.judges:
            return None
        store = CacheStore(settings.directory, self.notice, settings.busy_timeout)
        if store.disabled is not None:
            store.close()
            return None
        # an answer holding one of the run's secrets is never written to disk
        return Cache(store, settings.project, lambda value: self.redact.in_json(value), lambda text: self.redact(text))

    def _proxy_target(self, name: str) -> ChatClient | str:
        """A target of the catalog, built when a judge's proxy request first names it, or why
        not (one line). The values it read and the key it sends are masked from then on."""
        assert self._catalog is not None
        try:
            config, values = self._catalog.resolve(name)
            keys = sent_keys([config])
        except AgentvError as exc:
            return "; ".join(map(str, exc.problems)) if isinstance(exc, ConfigError) else exc.message
        with self._secrets_lock:
            self._secrets = [*self._secrets, *values, *keys]
            self.redact = Redactor(self._secrets)  # before any answer of this target reaches a row
            secrets = list(self._secrets)
        try:
            return self._make_runner(config, secrets)
        except AgentvError as exc:
            return exc.message

    def _make_runner(self, config: TargetConfig, secrets: list[str], warm: WarmWorkers | None = None) -> TargetRunner:
        runner = make_runner(
            config,
            dataset_dir=self.dataset.directory,
            work_dir=self.work_dir,
            secrets=secrets,
            processes=self.processes,
            warm=warm,
        )
        self._runners.append(runner)
        return runner

    def execute(self, on_row: Callable[[ResultRow], None]) -> None:
        """Run every case and hand each row to `on_row` (on the calling thread) as it finishes.

        Raises Interrupted on Ctrl-C, SIGTERM, or a `stop()` from elsewhere before every case had
        its row. Any other exception (from `on_row`, or one that killed a worker) propagates;
        either way the run is stopped first (`stop`).
        """
        workers = max(1, min(self.options.workers, MAX_WORKERS, len(self.cases) or 1))
        pending = iter(self.cases)
        lock = threading.Lock()
        # Finished rows (None: a worker is done), taken all at once by this thread each time it
        # wakes; bounded: when the writer falls behind, workers wait instead of piling rows up.
        done: Handoff[ResultRow | None] = Handoff(workers * 2, self._stop.is_set, _POLL_SECONDS)
        hand_over = done.put

        batch: BatchResult | None = None

        def worker() -> None:
            try:
                while not self._stop.is_set():
                    with lock:
                        prepared = next(pending, None)
                    if prepared is None:
                        return
                    try:
                        prepared = self._fetched(prepared)
                    except FetchError as exc:  # the case cannot run: an error row, the run goes on
                        rows = [
                            score_case(
                                prepared,
                                [],
                                TargetOutcome(None, str(exc)),
                                dataset=self.dataset,
                                target=self.runner.name,
                                attempts=0,
                                duration_ms=0.0,
                                run_id=self.options.run_id,
                                rejudge=rejudge,
                            )
                            for rejudge in rejudges(self.options)
                        ]
                    else:
                        case_id = prepared.case.id
                        rows = run_unit(
                            prepared,
                            self.dataset,
                            self.runner,
                            self.options,
                            judging=self.judging,
                            processes=self.processes,
                            stopped=self._stop.is_set,
                            answered=batch.outcomes.get(case_id) if batch else None,
                            batch=batch_note(batch, case_id) if batch else None,
                        )
                    for row in rows:
                        hand_over(self.redacted(row))
            except BaseException as exc:  # noqa: BLE001 - run_case never raises; this is a bug
                self._failure = exc
                self._stop.set()
            finally:
                hand_over(None)

        with sigterm_interrupts():
            try:
                batch = self._batch() if self.batching else None
                self._threads = [
                    threading.Thread(target=worker, name=f"agentv-worker-{i}", daemon=True) for i in range(workers)
                ]
                for thread in self._threads:
                    thread.start()
                finished = 0
                while finished < workers and not self._stop.is_set():  # stopped from elsewhere: done
                    for item in done.take():
                        if item is None:
                            finished += 1
                        else:
                            on_row(item)
                if self._failure is not None:
                    raise self._failure
                if finished < workers:
                    raise Interrupted()
            except Interrupted:
                self.stop()
                raise
            except KeyboardInterrupt:
                self.stop()
                raise Interrupted() from None
            except BaseException:
                self.stop()
                raise

    def _batch(self) -> BatchResult:
        """The batch call of a `provider_batching` target, for every case whose files could be
        fetched (`run_batch`). It runs on a thread of its own that the calling thread waits for,
        so Ctrl-C and `stop()` end the wait at once (the command is killed with the run's other
        processes; Interrupted). A failed batch is said once (`notice`); its cases run alone."""
        assert isinstance(self.runner, CliRunner)
        runner = self.runner
        results: list[BatchResult] = []

        def call() -> None:
            try:
                ready = []
                for prepared in self.cases:
                    try:
                        ready.append(self._fetched(prepared))
                    except FetchError:  # that case's row says so; the batch goes on without it
                        continue
                results.append(run_batch(runner, ready))
            except BaseException as exc:  # noqa: BLE001 - run_batch never raises; this is a bug
                self._failure = exc
                self._stop.set()

        thread = threading.Thread(target=call, name="agentv-batch", daemon=True)
        self._threads = [thread]  # joined by stop()
        thread.start()
        while thread.is_alive() and not self._stop.is_set():
            thread.join(_POLL_SECONDS)
        if self._failure is not None:
            raise self._failure
        if not results:
            raise Interrupted()
        result = results[0]
        if result.failure is not None:
            self.notice(failure_notice(runner.name, result.failure))
        return result

    def notice(self, message: str) -> None:
        """Something the run has to say while it runs, secrets masked: kept in `notices` and
        handed to `on_notice`."""
        message = self.redact(message)
        self.notices.append(message)
        if self._on_notice is not None:
            self._on_notice(message)

    def _fetched(self, prepared: PreparedCase) -> PreparedCase:
        """The case with its URL files replaced by their fetched copies (FetchError if one
        cannot be fetched): targets, judges and `{FILES}` see local files only."""
        if not any(is_url(path) for path in prepared.files):
            return prepared
        remote = self._remote_files()
        files = [remote.local(path) if is_url(path) else path for path in prepared.files]
        return dataclasses.replace(prepared, files=files)

    def _remote_files(self) -> RemoteFiles:
        """The run's fetched files, made when the first case with a URL file runs: only such a
        run imports the network code (http.client, urllib.request, ssl)."""
        with self._remote_lock:
            if self._remote is None:
                from agentv_py.process.fetch import RemoteFiles

                self._remote = RemoteFiles(self.work_dir / "fetched")
            return self._remote

    def redacted(self, row: ResultRow) -> ResultRow:
        """`row` with the run's secrets masked (`redact_row`). Every row passes here before it is
        handed over, so nothing written or shown from a row holds a secret."""
        return redact_row(self.redact, row)

    def stop(self, timeout: float = JOIN_SECONDS) -> None:
        """Stop the run: no new cases, every process it started killed, workers joined against
        one deadline shared by every call (a worker stuck in an HTTP call is left to die with
        the process). Safe from any thread, any number of times."""
        self._stop.set()
        self.processes.close()
        if self._deadline is None:
            self._deadline = time.monotonic() + timeout
        deadline = self._deadline
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        """Stop the run (if it is still going), close its cache and remove its scratch directory."""
        self.stop()
        for runner in self._runners:
            closing = getattr(runner, "close", None)
            if closing is not None:
                closing()  # worker-mode targets: every worker stopped and reaped
        if self.cache is not None:
            self.cache.store.close()
        if self._warm is not None:
            self._warm.close()  # workers the start check started that no pool adopted
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
