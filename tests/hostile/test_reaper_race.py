"""The reaper never takes a command that is just starting for an ended command's leftover, even
when the kernel hands it a pid (and so a session id) an ended command had a moment ago.

A race, so the test is probabilistic: without the spawn gate it failed about one run in three.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agentv_py.process.spawn import run_process


def test_many_short_concurrent_commands_are_never_killed_by_the_reaper():
    def one(_: int) -> int | None:
        return run_process(["sh", "-c", "exit 0"], timeout=30).returncode

    with ThreadPoolExecutor(max_workers=6) as pool:
        codes = list(pool.map(one, range(3000)))
    assert codes.count(0) == len(codes), sorted({c for c in codes if c != 0}, key=str)
