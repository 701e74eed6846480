"""The event kernel: a heap of events ordered by (time, priority, sequence).

Events are plain tuples `(time_s, priority, seq, handler, arg, aux)`; the sequence number is
unique, so two events never compare beyond it and ties fall to the order of scheduling. That
makes a run a pure function of its inputs and seed: one seed, one trajectory, bit for bit.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

Handler = Callable[[Any, int], None]
"""Called with the event's `arg` and `aux` (an integer, e.g. a version for lazy invalidation)."""


class Order:
    """Priorities of events at the same instant: lower runs first.

    Finished work frees capacity first, then node and storage changes, then new load, and the
    metrics scrape last, so a sample sees the state the instant ends in.
    """

    COMPLETE = 0
    NODE_READY = 1
    NODE_FAULT = 2
    STORAGE = 3
    START = 4
    ARRIVAL = 5
    SUBMIT = 6
    SAMPLE = 7


class Kernel:
    """Schedules and runs events; `now_s` is the time of the event being (or last) processed."""

    __slots__ = ("_heap", "_seq", "now_s", "processed")

    def __init__(self, start_s: float = 0.0) -> None:
        self._heap: list[tuple[float, int, int, Handler, Any, int]] = []
        self._seq = 0
        self.now_s = start_s
        self.processed = 0

    def __len__(self) -> int:
        return len(self._heap)

    def schedule(self, time_s: float, priority: int, handler: Handler, arg: Any = None,
                 aux: int = 0) -> None:
        """Run `handler(arg, aux)` at `time_s`; an event in the past is a bug."""
        if time_s < self.now_s:
            raise ValueError(f"event at {time_s} s scheduled in the past (now {self.now_s} s)")
        self._seq += 1
        heapq.heappush(self._heap, (time_s, priority, self._seq, handler, arg, aux))

    def next_time(self) -> float:
        """Time of the next event, or infinity when none is left."""
        return self._heap[0][0] if self._heap else math.inf

    def step(self) -> bool:
        """Process the next event; False when none is left."""
        if not self._heap:
            return False
        time_s, _, _, handler, arg, aux = heapq.heappop(self._heap)
        self.now_s = time_s
        self.processed += 1
        handler(arg, aux)
        return True

    def run_instant(self) -> float:
        """Process every event at the time of the next one (including those scheduled at that
        time meanwhile); returns that time, or infinity when no event is left."""
        heap = self._heap
        if not heap:
            return math.inf
        time_s = heap[0][0]
        self.now_s = time_s
        while heap and heap[0][0] <= time_s:
            _, _, _, handler, arg, aux = heapq.heappop(heap)
            self.processed += 1
            handler(arg, aux)
        return time_s

    def run_until(self, time_s: float) -> int:
        """Process every event at or before `time_s`, including those scheduled meanwhile.

        Returns how many ran. `now_s` ends at the last event's time (not at `time_s`).
        """
        heap = self._heap
        count = 0
        while heap and heap[0][0] <= time_s:
            event_time, _, _, handler, arg, aux = heapq.heappop(heap)
            self.now_s = event_time
            self.processed += 1
            count += 1
            handler(arg, aux)
        return count
