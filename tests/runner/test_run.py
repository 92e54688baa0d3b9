"""A run owns its lifecycle: whatever stops it, every process it started is killed, promptly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentv_py.loading import load_dataset
from agentv_py.models.targets import CliTarget
from agentv_py.runner.engine import RunOptions
from agentv_py.runner.run import Interrupted, Run
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


def test_a_closed_registry_starts_nothing_and_stop_joins_on_one_deadline(ws, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    dataset = _slow_and_fast(ws, pids, slow=1)
    run = Run(dataset, dataset.cases, _target(), options=RunOptions(workers=2))
    run.stop()
    rows = []
    run.execute(rows.append)  # stopped before it started: nothing runs, nothing hangs
    run.close()
    assert rows == [] and list(pids.iterdir()) == []


def test_a_finished_run_leaves_nothing_behind(ws):
    path = ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    dataset = load_dataset(path)
    rows = []
    with Run(dataset, dataset.cases, CliTarget(name="t", provider="cli", command_template="cat {FILES}")) as run:
        run.execute(rows.append)
    assert [r.score for r in rows] == [1.0]
    assert run.processes.running() == [] and not run.work_dir.exists()
