"""The event kernel: a clock and a heap of timed callbacks, in the spirit of SimPy's core but without
generators (a callback is cheaper than a resumed generator, and the simulator's processes are small state
machines). Ties run in the order they were scheduled.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any


class Kernel:
    """Simulated time `now` (s) and the pending events."""

    __slots__ = ("_heap", "_seq", "now")

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, Callable[..., None], Any]] = []
        self._seq = 0

    def at(self, time: float, callback: Callable[..., None], arg: Any = None) -> None:
        """Run `callback(time, arg)` at `time` (not before now)."""
        self._seq += 1
        heapq.heappush(self._heap, (max(time, self.now), self._seq, callback, arg))

    def run(self, until: float = float("inf")) -> None:
        """Process events in time order until none is left or the next one is after `until`."""
        heap = self._heap
        pop = heapq.heappop
        while heap:
            if heap[0][0] > until:
                break
            time, _, callback, arg = pop(heap)
            self.now = time
            callback(time, arg)

    @property
    def pending(self) -> int:
        return len(self._heap)
