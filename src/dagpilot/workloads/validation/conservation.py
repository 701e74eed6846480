"""Resource conservation: at no instant may the requests held on a node exceed its allocatable.

A sweep over the start and end events of the tasks placed on one node. Releases at an instant
count before acquisitions at that instant, so back-to-back tasks (one ends when the next starts)
do not overlap. Consecutive overloaded instants form one episode, reported once with its peak.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagpilot.core.types import Resources
from dagpilot.workloads.validation.numbers import seconds

RESOURCES = ("cpu", "memory", "gpus")
# Float sums of fractional CPUs drift by far less than this; a real overload is far above it.
_RELATIVE_TOLERANCE = 1e-6
_GIB = 2**30


@dataclass(frozen=True, slots=True)
class Usage:
    """A task holding `requests` on a node from `start_s` to `end_s`, named for the report."""

    start_s: float
    end_s: float
    requests: Resources
    task: str = ""
    record: str = ""


@dataclass(frozen=True, slots=True)
class Overload:
    """A maximal interval in which the requests of `resource` on `node` exceed its allocatable."""

    node: str
    resource: str  # one of RESOURCES
    start_s: float
    end_s: float
    peak: float
    allocatable: float
    opened_by: Usage  # the task whose start began the episode

    def describe(self) -> str:
        amount, capacity = _amounts(self.resource, self.peak, self.allocatable)
        length = seconds(self.end_s - self.start_s)
        return (f"{self.node} at t={seconds(self.start_s)} s for {length} s: "
                f"{amount} requested > {capacity} allocatable "
                f"(peak; opened by task {self.opened_by.task!r})")


def overloads(node: str, allocatable: Resources, usages: Sequence[Usage]) -> list[Overload]:
    """Every overload episode of each resource on one node, in time order.

    Usages with a missing time or an end before their start are ignored: the caller reports
    them as broken records, and they say nothing reliable about what the node held.
    """
    valid = [u for u in usages
             if math.isfinite(u.start_s) and math.isfinite(u.end_s) and u.end_s >= u.start_s]
    if not valid:
        return []
    found: list[Overload] = []
    for resource in RESOURCES:
        limit = float(getattr(allocatable, resource))
        amounts = np.array([float(getattr(u.requests, resource)) for u in valid])
        found.extend(_episodes(node, resource, limit, valid, amounts))
    return sorted(found, key=lambda o: (o.start_s, RESOURCES.index(o.resource)))


def _episodes(node: str, resource: str, limit: float, usages: Sequence[Usage],
              amounts: np.ndarray) -> list[Overload]:
    count = len(usages)
    times = np.concatenate([[u.start_s for u in usages], [u.end_s for u in usages]])
    deltas = np.concatenate([amounts, -amounts])
    owners = np.concatenate([np.arange(count), np.arange(count)])
    order = np.lexsort((deltas, times))  # by time; at one instant releases (negative) first
    times, deltas, owners = times[order], deltas[order], owners[order]
    level = np.cumsum(deltas)
    # The level that holds after an instant is the one after its last event.
    last_of_instant = np.flatnonzero(np.append(times[1:] != times[:-1], True))
    instants, held = times[last_of_instant], level[last_of_instant]
    over = held > limit + _RELATIVE_TOLERANCE * max(1.0, abs(limit))
    edges = np.diff(np.concatenate([[0], over.astype(np.int8), [0]]))
    found: list[Overload] = []
    for first, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        end = float(instants[stop]) if stop < len(instants) else math.inf
        # The last event of the opening instant is an acquisition: releases sort first there.
        opener = usages[int(owners[last_of_instant[first]])]
        found.append(Overload(node, resource, float(instants[first]), end,
                              float(held[first:stop].max()), limit, opener))
    return found


def _amounts(resource: str, peak: float, capacity: float) -> tuple[str, str]:
    if resource == "memory":
        return f"{peak / _GIB:.1f} GiB memory", f"{capacity / _GIB:.1f} GiB"
    if resource == "gpus":
        return f"{peak:g} GPUs", f"{capacity:g}"
    return f"{peak:.1f} CPUs", f"{capacity:.1f}"
