"""NodeTimeline: what a scheduler placed on each node and when it expects it to end.

The view tells how much is bound to a node, not what or until when, so a scheduler that plans
ahead keeps its own book: each placement with its expected end. When a node holds less than
the book says, the entries expected to end first are taken as the ones that ended.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dagpilot.decide.node_arrays import Floats, NodeArrays

SLACK = 1e-6


@dataclass(frozen=True, slots=True)
class Booked:
    end_s: float
    request: Floats  # cpu, memory, GPUs


class NodeTimeline:
    def __init__(self, nodes: int) -> None:
        self._booked: list[list[Booked]] = [[] for _ in range(nodes)]

    def book(self, index: int, end_s: float, request: Floats) -> None:
        self._booked[index].append(Booked(end_s, request))

    def reconcile(self, index: int, allocated: Floats) -> None:
        """Drop the earliest-ending entries while the book holds more than the node does."""
        booked = sorted(self._booked[index], key=lambda entry: entry.end_s)
        held = sum((entry.request for entry in booked), np.zeros(3))
        while booked and (held > allocated + SLACK * np.maximum(allocated, 1.0)).any():
            held = held - booked.pop(0).request
        self._booked[index] = booked

    def earliest_start(self, index: int, request: Floats, nodes: NodeArrays,
                       now_s: float) -> float:
        """When the node is expected to have room for `request`: now, or when enough of what it
        runs has ended (entries past their expected end are taken to end now); inf if never."""
        self.reconcile(index, nodes.allocated[index])
        free = nodes.free[index].copy()
        if (free >= request - SLACK).all():
            return now_s
        for entry in self._booked[index]:  # sorted by end by reconcile
            free += entry.request
            if (free >= request - SLACK).all():
                return max(entry.end_s, now_s)
        return float("inf")
