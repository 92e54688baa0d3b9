"""How a run's workers hand finished rows to the thread that writes them (`Handoff`)."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Handoff(Generic[T]):
    """Items from many threads to one: `put` adds one (waiting while `capacity` are already
    waiting to be taken, so a writer that falls behind holds the producers back instead of
    letting items pile up in memory), `take` returns every item waiting, at once (one wake-up of
    the taker for a burst of items, not one per item). `stopped` ends every wait: a `put` after
    the stop drops its item; each wait lasts at most `poll` seconds before `stopped` is asked."""

    def __init__(self, capacity: int, stopped: Callable[[], bool], poll: float) -> None:
        self._items: collections.deque[T] = collections.deque()
        self._capacity = capacity
        self._stopped = stopped
        self._poll = poll
        guard = threading.Lock()
        self._not_empty, self._not_full = threading.Condition(guard), threading.Condition(guard)

    def put(self, item: T) -> None:
        with self._not_full:
            while len(self._items) >= self._capacity and not self._stopped():
                self._not_full.wait(self._poll)
            if self._stopped():
                return
            self._items.append(item)
            self._not_empty.notify()

    def take(self) -> list[T]:
        """Every item waiting (in the order put), after waiting up to `poll` seconds for one."""
        with self._not_empty:
            if not self._items:
                self._not_empty.wait(self._poll)
            items = list(self._items)
            self._items.clear()
            self._not_full.notify_all()
        return items
