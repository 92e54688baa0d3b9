"""A Ray task's body (`run_batch`), run here without Ray: every case of the batch has its row, sent
as soon as it finishes or together with the rows finished within FLUSH_SECONDS of it."""

from __future__ import annotations

import pytest

from agentv_py.loading import load_dataset
from agentv_py.models.targets import CliTarget
from agentv_py.runner import ray_task
from agentv_py.runner.engine import RunOptions
from agentv_py.runner.ray_task import TaskSpec, run_batch

CASES = [(f"c{i}", {"a": i, "b": "x"}, {"a": i, "b": "x"}) for i in range(4)]


@pytest.mark.parametrize(
    "flush, sizes",
    [
        (0.0, [1, 1, 1, 1]),  # no holding: each row goes alone, as it finishes
        (600.0, [4]),  # holding longer than the batch runs: the rows go together, at its end
    ],
    ids=["each-row-at-once", "held-until-the-end"],
)
def test_every_case_of_the_batch_has_one_row(ws, monkeypatch, flush, sizes):
    monkeypatch.setattr(ray_task, "FLUSH_SECONDS", flush)
    dataset = load_dataset(ws.cases_dataset(CASES))
    target = CliTarget(name="t", provider="cli", command_template="cat {FILES}")
    spec = TaskSpec(dataset, target, RunOptions(), {}, None, [], None, None)
    sent = list(run_batch(spec, list(dataset.cases)))
    assert [len(rows) for rows, _ in sent] == sizes
    assert [row.eval_id for rows, _ in sent for row in rows] == ["c0", "c1", "c2", "c3"]  # one worker: in order
    assert all(row.status == "ok" and row.score == 1.0 for rows, _ in sent for row in rows)
    assert [notices for _, notices in sent] == [[] for _ in sizes]
