"""A run owns its lifecycle: whatever stops it, every process it started is killed, promptly."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest

from agentv_py.loading import load_dataset
from agentv_py.models.targets import CliTarget
from agentv_py.runner.engine import RunOptions
from agentv_py.runner.executor import Interrupted
from agentv_py.runner.outcome import TargetOutcome
from agentv_py.runner.run import Run
from tests.conftest import wait_dead


def _slow_and_fast(ws, pids: Path, slow: int = 3):
    """Slow cases record their pid and sleep; the fast case answers once every slow one runs."""
    ok = 'echo \'{"a": 1, "b": 2}\''
    wait = f"while [ $(ls {pids} | wc -l) -lt {slow} ]; do sleep 0.02; done; {ok}"
    sleeper = f"echo $$ > {pids}/$$; sleep 60"
    path = ws.cases_dataset(
        [(f"slow-{i}", sleeper, {"a": 1}) for i in range(slow)] + [("fast", wait, {"a": 1, "b": 2})]
    )
    return load_dataset(path)


def _target() -> CliTarget:
    return CliTarget(name="t", provider="cli", command_template="sh {FILES}")


class WriteFailed(OSError):
    pass


@pytest.mark.parametrize(
    "failure",
    [WriteFailed(28, "No space left on device"), BrokenPipeError(32, "Broken pipe"), RuntimeError("bug in on_row")],
    ids=["write-error", "closed-pipe", "internal-error"],
)
def test_an_exception_from_on_row_stops_the_run_and_kills_every_process(ws, tmp_path, failure):
    pids = tmp_path / "pids"
    pids.mkdir()
    dataset = _slow_and_fast(ws, pids)
    started = time.monotonic()

    def on_row(row):
        raise failure

    with pytest.raises(type(failure)), Run(dataset, dataset.cases, _target(), options=RunOptions(workers=4)) as run:
        run.execute(on_row)
    assert time.monotonic() - started < 20  # not the targets' 60 s sleeps
    recorded = [int(p.read_text()) for p in pids.iterdir()]
    assert len(recorded) == 3
    assert all(wait_dead(pid) for pid in recorded)
    assert run.processes.running() == [] and run.processes.closed
    assert not run.work_dir.exists()
    assert not any(t.is_alive() for t in run._threads)


def test_keyboard_interrupt_becomes_interrupted_with_processes_killed(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    dataset = _slow_and_fast(ws, pids)
    seen = []

    def on_row(row):
        seen.append(row.eval_id)
        raise KeyboardInterrupt

    with pytest.raises(Interrupted), Run(dataset, dataset.cases, _target(), options=RunOptions(workers=4)) as run:
        run.execute(on_row)
    assert seen == ["fast"]
    assert all(wait_dead(int(p.read_text())) for p in pids.iterdir())


def test_a_run_stopped_before_it_starts_runs_nothing_and_says_so(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    dataset = _slow_and_fast(ws, pids, slow=1)
    rows = []
    with pytest.raises(Interrupted), Run(dataset, dataset.cases, _target(), options=RunOptions(workers=2)) as run:
        run.stop()
        run.execute(rows.append)
    assert rows == [] and list(pids.iterdir()) == []


class Stuck:
    """A target that never answers and cannot be killed (an HTTP call, say)."""

    name = "stuck"
    vision = False

    def __init__(self) -> None:
        self.release = threading.Event()

    def invoke(self, case, attempt):
        self.release.wait(30)
        return TargetOutcome(None, "released")

    def complete(self, messages):
        raise AssertionError("not a judge")


def test_stopping_joins_every_worker_against_one_shared_deadline(ws):
    path = ws.cases_dataset([(f"c{i}", {"a": 1}, {"a": 1}) for i in range(3)])
    dataset = load_dataset(path)
    stuck = Stuck()
    with Run(dataset, dataset.cases, _target(), options=RunOptions(workers=3)) as run:
        run.runner = stuck
        threading.Timer(0.3, run.stop, kwargs={"timeout": 1.0}).start()
        started = time.monotonic()
        with pytest.raises(Interrupted):
            run.execute(lambda row: None)
        run.close()  # a second stop: the same deadline, not a new one
        elapsed = time.monotonic() - started
    stuck.release.set()
    # One deadline of 1 s for three stuck workers and two stop() calls: not 3 x 1 s, not 2 x 1 s.
    assert elapsed < 1.9, elapsed


def test_a_stop_from_another_thread_is_an_interruption_not_a_finished_run(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    dataset = _slow_and_fast(ws, pids)
    rows = []
    with Run(dataset, dataset.cases, _target(), options=RunOptions(workers=4)) as run:

        def stop_after_the_first_row(row):
            rows.append(row.eval_id)
            threading.Thread(target=run.stop).start()

        with pytest.raises(Interrupted):
            run.execute(stop_after_the_first_row)
    assert rows == ["fast"]
    assert all(wait_dead(int(p.read_text())) for p in pids.iterdir())


def test_an_exception_that_kills_a_worker_is_raised_by_execute(ws, monkeypatch):
    path = ws.cases_dataset([(f"c{i}", {"a": 1}, {"a": 1}) for i in range(3)])
    dataset = load_dataset(path)

    def broken(*args, **kwargs):
        raise SystemExit("a bug that escaped run_unit")

    monkeypatch.setattr("agentv_py.runner.run.run_unit", broken)
    with pytest.raises(SystemExit, match="escaped"), Run(dataset, dataset.cases, _target()) as run:
        run.execute(lambda row: None)


def test_sigterm_handler_is_restored_after_the_run(ws):
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    dataset = load_dataset(path)

    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with Run(dataset, dataset.cases, CliTarget(name="t", provider="cli", command_template="cat {FILES}")) as run:
            run.execute(lambda row: None)
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_finished_run_leaves_nothing_behind(ws):
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    dataset = load_dataset(path)
    rows = []
    with Run(dataset, dataset.cases, CliTarget(name="t", provider="cli", command_template="cat {FILES}")) as run:
        run.execute(rows.append)
    assert [r.score for r in rows] == [1.0]
    assert run.processes.running() == [] and not run.work_dir.exists()
