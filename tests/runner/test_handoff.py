"""The workers-to-writer hand-off of a run: every item arrives once, in order per producer; a
full hand-off holds producers back; a stop ends every wait and drops what comes after."""

from __future__ import annotations

import threading

from agentv_py.runner.handoff import Handoff


def test_items_from_many_threads_arrive_once_each_in_order_per_thread() -> None:
    stop = threading.Event()
    handoff: Handoff[tuple[int, int] | None] = Handoff(4, stop.is_set, 0.05)

    def produce(who: int) -> None:
        for n in range(500):
            handoff.put((who, n))
        handoff.put(None)

    threads = [threading.Thread(target=produce, args=(who,)) for who in range(4)]
    for thread in threads:
        thread.start()
    got: list[tuple[int, int]] = []
    finished = 0
    while finished < 4:
        for item in handoff.take():
            if item is None:
                finished += 1
            else:
                got.append(item)
    for thread in threads:
        thread.join()
    assert sorted(got) == [(who, n) for who in range(4) for n in range(500)]
    for who in range(4):
        assert [n for w, n in got if w == who] == list(range(500))


def test_a_full_handoff_holds_the_producer_until_items_are_taken() -> None:
    stop = threading.Event()
    handoff: Handoff[int] = Handoff(2, stop.is_set, 0.05)
    handoff.put(1)
    handoff.put(2)
    third = threading.Thread(target=handoff.put, args=(3,))
    third.start()
    third.join(0.3)
    assert third.is_alive()  # waiting: two items are already waiting to be taken
    assert handoff.take() == [1, 2]
    third.join(5)
    assert not third.is_alive()
    assert handoff.take() == [3]


def test_a_stop_ends_a_waiting_producer_and_drops_later_items() -> None:
    stop = threading.Event()
    handoff: Handoff[int] = Handoff(1, stop.is_set, 0.05)
    handoff.put(1)
    blocked = threading.Thread(target=handoff.put, args=(2,))
    blocked.start()
    stop.set()
    blocked.join(5)
    assert not blocked.is_alive()
    handoff.put(3)
    assert handoff.take() == [1]


def test_take_returns_nothing_after_its_wait_when_no_item_comes() -> None:
    handoff: Handoff[int] = Handoff(1, lambda: False, 0.01)
    assert handoff.take() == []
