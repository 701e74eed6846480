"""NodeResourcesFit: the pod's requests fit in the node's allocatable minus the requests of the
pods bound there (kube-scheduler's `fitsRequest`): a resource is short only when the pod asks
for some of it and asks for more than is free. Reasons name every short resource."""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar

import numpy as np

from dagpilot.core.status import Code, Status
from dagpilot.core.types import Resources, Task
from dagpilot.core.view import NodeState
from dagpilot.decide.filters.base import RowTest
from dagpilot.decide.node_arrays import Bools, Floats, NodeArrays, resource_row
from dagpilot.decide.node_log import Row

RESOURCE_NAMES = ("cpu", "memory", "nvidia.com/gpu")
CPU_SLACK = 1e-9  # cores are floats; the same slack as Resources.fits_in


@lru_cache(maxsize=4096)
def needs(requests: Resources) -> Floats:
    """Per resource, the least free amount a node needs; -inf where the pod asks for none.
    Shared: do not modify."""
    request = resource_row(requests)
    request[0] -= CPU_SLACK
    need = np.where(request > 0, request, -np.inf)
    need.flags.writeable = False
    return need


@lru_cache(maxsize=4096)
def needs_row(requests: Resources) -> Row:
    """`needs` as Python floats."""
    need = needs(requests).tolist()
    return (need[0], need[1], need[2])


class NodeResourcesFit:
    name: ClassVar[str] = "NodeResourcesFit"
    static: ClassVar[bool] = False

    def check(self, task: Task, node: NodeState) -> Status:
        need = needs(task.requests)
        free = resource_row(node.spec.allocatable) - resource_row(node.allocated)
        short = tuple(f"Insufficient {RESOURCE_NAMES[i]}" for i in range(3) if free[i] < need[i])
        if not short:
            return Status.success()
        # More than the node has at all: no amount of waiting or preemption helps.
        never = bool((resource_row(node.spec.allocatable) < need).any())
        return Status(Code.UNRESOLVABLE if never else Code.UNSCHEDULABLE, short, self.name)

    def mask(self, task: Task, nodes: NodeArrays) -> Bools:
        need = needs(task.requests)
        free = nodes.free
        # Column by column: only the resources asked for, and no reduction along an axis.
        fits: Bools | None = None
        for column in range(3):
            if need[column] != -np.inf:
                column_fits = free[:, column] >= need[column]
                fits = column_fits if fits is None else fits & column_fits
        return np.ones(len(free), dtype=np.bool_) if fits is None else fits

    def row_test(self, task: Task) -> RowTest:
        cpu, memory, gpus = needs_row(task.requests)

        def fits(free: Row, ready: bool) -> bool:
            return free[0] >= cpu and free[1] >= memory and free[2] >= gpus

        return fits
