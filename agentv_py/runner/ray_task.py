"""What runs in a Ray task of `--executor ray` (runner/ray_executor.py submits them): a batch of
cases run as the local executor runs them, their rows streamed back to the driver, and what the
task needs besides its cases (`TaskSpec`, shipped to the cluster once).
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from agentv_py.errors import AgentvError, ConfigError
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import TargetConfig
from agentv_py.prepared import LoadedDataset, PreparedCase
from agentv_py.runner.cache import CacheSettings
from agentv_py.runner.engine import RunOptions
from agentv_py.runner.run import Run, TargetCatalog

_WAIT_SECONDS = 0.1
FLUSH_SECONDS = 0.05  # a task sends the rows finished within this of its first unsent one together
CANCEL_GRACE_SECONDS = 5.0  # an interrupted task's run stops its commands within this, or is killed


@dataclass(frozen=True)
class TaskSpec:
    """What every task needs besides its cases: shipped to the cluster once (`ray.put`)."""

    dataset: LoadedDataset  # without its cases
    target: TargetConfig
    options: RunOptions
    judges: Mapping[str, TargetConfig]
    default_judge: str | None
    secrets: Sequence[str]
    cache: CacheSettings | None
    catalog: TargetCatalog | None  # resolved by the driver (`Resolved`): the same targets as a local run


@dataclass(frozen=True)
class Resolved:
    """A proxy catalog's `resolve`, answered from what the driver resolved before the run (the
    targets file and its `${{ VAR }}` values are the driver's, not the cluster's): a target, or
    why not, the same sentence a local run gives."""

    found: Mapping[str, tuple[TargetConfig, list[str]] | str]

    def __call__(self, name: str) -> tuple[TargetConfig, list[str]]:
        got = self.found.get(name, f"unknown target '{name}'")
        if isinstance(got, str):
            raise AgentvError(got)
        return got


def resolve_all(catalog: TargetCatalog) -> Resolved:
    """Every target of `catalog` resolved now, in the driver: what a Ray task can carry."""
    found: dict[str, tuple[TargetConfig, list[str]] | str] = {}
    for name in catalog.names:
        try:
            found[name] = catalog.resolve(name)
        except AgentvError as exc:
            found[name] = "; ".join(map(str, exc.problems)) if isinstance(exc, ConfigError) else exc.message
    return Resolved(found)


def run_batch(spec: TaskSpec, cases: list[PreparedCase]) -> Iterator[tuple[list[ResultRow], list[str]]]:
    """A Ray task (a streaming generator): a few cases run as the local executor runs them, in
    one Run of one worker (its set-up paid once for the batch). Rows are yielded as they finish,
    together with what the run had to say since the last yield (its notices): the rows that
    finish within FLUSH_SECONDS of the first one not yet sent go as one object (each object
    costs the task and the driver about a millisecond of CPU; a case slower than FLUSH_SECONDS
    has its row sent alone, at once). Cancelled (Ray raises KeyboardInterrupt here), it stops
    the run: every process its commands started is killed."""
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
        held: list[ResultRow] = []
        due = 0.0  # when the held rows go, more finished or not

        def package() -> tuple[list[ResultRow], list[str]]:
            nonlocal held, said
            rows, notices, held, said = held, run.notices[said:], [], len(run.notices)
            return rows, notices

        try:
            while True:
                # polled: Ray's cancel (a KeyboardInterrupt) lands between two waits
                wait = min(_WAIT_SECONDS, due - time.monotonic()) if held else _WAIT_SECONDS
                try:
                    item = done.get(timeout=wait) if wait > 0 else done.get_nowait()
                except queue.Empty:
                    if held and time.monotonic() >= due:
                        yield package()
                    continue
                if isinstance(item, ResultRow):
                    if not held:
                        due = time.monotonic() + FLUSH_SECONDS
                    held.append(item)
                    if time.monotonic() < due:
                        continue
                if held:
                    yield package()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
        except KeyboardInterrupt:
            run.stop()
            raise
        finally:
            thread.join(timeout=CANCEL_GRACE_SECONDS)
