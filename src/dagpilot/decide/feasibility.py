"""Feasibility: runs a set of filters over all nodes at once, caching the static part."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from dagpilot.core.status import Status
from dagpilot.core.types import NodeSpec, Task
from dagpilot.core.view import ClusterView, NodeState
from dagpilot.decide.filters import Filter
from dagpilot.decide.node_arrays import Bools, NodeArrays
from dagpilot.decide.signature import constraint_key


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
