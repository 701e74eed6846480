"""When a bound pod starts running: after its start-up delay (image pull, container start), taken
on one of its node's start-up slots.

A kubelet with a slow container runtime starts pods one after another: on the CWS cluster each
node started about one pod every 3 s however long its queue was (docs/SIMULATOR.md, overheads).
With `slots = k > 0` each node has k slots; a bound pod takes the slot that frees first (in
binding order) and holds it for its delay, so a burst of pods bound to one node starts in
sequence. With `slots = 0` start-ups never wait for each other.
"""

from __future__ import annotations

from dagpilot.sim.engine import StartupDelays


class StartupSlots:
    """The start-up slots of every node of a run: when each slot is next free."""

    __slots__ = ("_delays", "_free", "_slots")

    def __init__(self, delays: StartupDelays, nodes: int, slots: int) -> None:
        if slots < 0:
            raise ValueError(f"start-up slots per node must be >= 0, got {slots}")
        self._delays = delays
        self._slots = slots
        self._free = [[0.0] * slots for _ in range(nodes)]

    def start_time(self, node_index: int, now_s: float) -> float:
        """When a pod bound to the node now starts running; reserves its slot until then."""
        delay = self._delays.draw()
        if not self._slots:
            return now_s + delay
        free = self._free[node_index]
        slot = min(range(self._slots), key=free.__getitem__)
        start_s = max(now_s, free[slot]) + delay
        free[slot] = start_s
        return start_s

    def clear(self, node_index: int) -> None:
        """The node lost its pods (it went NotReady) or starts afresh: every slot is free."""
        self._free[node_index] = [0.0] * self._slots
