"""Feasibility: runs a set of filters over all nodes at once, caching the static part."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from dagpilot.core.status import Status
from dagpilot.core.types import NodeSpec, Task
from dagpilot.core.view import ClusterView, NodeState
from dagpilot.decide.filters import Filter
from dagpilot.decide.filters.base import RowTest
from dagpilot.decide.node_arrays import Bools, NodeArrays
from dagpilot.decide.node_log import NodeLog
from dagpilot.decide.signature import constraint_key


class LiveMask:
    """A feasibility mask kept current from decision to decision (see `Feasibility.live`)."""

    __slots__ = ("allowed", "count", "log", "mask", "position", "tests")

    def __init__(self) -> None:
        self.mask: Bools | None = None
        self.count = 0  # feasible nodes in `mask`
        self.allowed: list[bool] = []  # the static mask, as Python bools
        self.tests: tuple[RowTest, ...] = ()  # the dynamic filters' row tests for the task
        self.log: NodeLog | None = None
        self.position = -1  # the position of `log` it is current at


class Feasibility:
    """Where a task may go. Static filters (spec only) are evaluated once per constraint key and
    cluster; dynamic ones (free resources, readiness) on every call."""

    def __init__(self, filters: Sequence[Filter]) -> None:
        self.filters = tuple(filters)
        self._static = tuple(f for f in self.filters if f.static)
        self._dynamic = tuple(f for f in self.filters if not f.static)
        self._specs: tuple[NodeSpec, ...] = ()
        self._cache: dict[Hashable, Bools] = {}

    def static_mask(self, task: Task, nodes: NodeArrays) -> Bools:
        """The nodes that the static filters allow; shared, do not modify."""
        if nodes.specs is not self._specs:
            self._specs, self._cache = nodes.specs, {}
        key = constraint_key(task)
        mask = self._cache.get(key)
        if mask is None:
            mask = np.ones(len(nodes), dtype=np.bool_)
            for static in self._static:
                mask &= static.mask(task, nodes)
            mask.flags.writeable = False
            self._cache[key] = mask
        return mask

    def mask(self, task: Task, nodes: NodeArrays, static: Bools | None = None) -> Bools:
        """Nodes that pass every filter now; `static` may pass a mask cached by the caller."""
        result = self.static_mask(task, nodes) if static is None else static
        for dynamic in self._dynamic:
            result = result & dynamic.mask(task, nodes)
        return result

    def live(self, task: Task, nodes: NodeArrays, static: Bools, live: LiveMask) -> Bools:
        """`mask(task, nodes, static)`, brought up to date in `live` by recomputing only the
        nodes that changed since its last use (when `nodes.log` tells them). Shared: do not
        modify; valid until the next call for the same `live`."""
        log, mask = nodes.log, live.mask
        rows = None
        if mask is not None and log is not None and log is live.log:
            rows = log.since(live.position)
        if rows is None or mask is None or log is None:
            mask = self.mask(task, nodes, static)
            if mask is static:
                mask = mask.copy()
            live.mask = mask
            live.count = int(np.count_nonzero(mask))
            live.allowed = static.tolist()
            live.tests = tuple(one.row_test(task) for one in self._dynamic)
        else:
            free, ready, allowed, tests = log.free, log.ready, live.allowed, live.tests
            count = live.count
            for row in rows:
                admitted = allowed[row]
                if admitted:
                    row_free, row_ready = free[row], ready[row]
                    for test in tests:
                        if not test(row_free, row_ready):
                            admitted = False
                            break
                if admitted != mask[row]:
                    mask[row] = admitted
                    count += 1 if admitted else -1
            live.count = count
        live.log = log
        live.position = -1 if log is None else log.end
        return mask

    def statuses(self, task: Task, node: NodeState) -> tuple[Status, ...]:
        """Every failing filter's status for one node; empty when the node is feasible."""
        return tuple(status for f in self.filters if not (status := f.check(task, node)).ok)

    def rejections(self, task: Task, view: ClusterView) -> tuple[tuple[str, str], ...]:
        """(node, reasons) for each node that rejects the task, as Placement.rejected wants."""
        rejected = []
        for node in view.nodes:
            failing = self.statuses(task, node)
            if failing:
                rejected.append((node.spec.name, "; ".join(str(s) for s in failing)))
        return tuple(rejected)
