"""NodeReady: a NotReady node takes no new pods.

In Kubernetes the node lifecycle controller taints a NotReady node with
`node.kubernetes.io/not-ready:NoSchedule` and TaintToleration rejects it; here readiness is a
state, not a taint, so this filter plays that part (a pod tolerating the taint passes).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dagpilot.core.status import Status
from dagpilot.core.types import Taint, TaintEffect, Task
from dagpilot.core.view import NodeState
from dagpilot.decide.filters.base import RowTest, passes
from dagpilot.decide.node_arrays import Bools, NodeArrays
from dagpilot.decide.node_log import Row

NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", TaintEffect.NO_SCHEDULE)
NOT_READY = Status.unschedulable("NodeReady",
                                 "node(s) had untolerated taint {node.kubernetes.io/not-ready: }")
"""The status of a NotReady node for a pod that does not tolerate it."""


def tolerates_not_ready(task: Task) -> bool:
    return any(t.tolerates(NOT_READY_TAINT) for t in task.tolerations)


def _is_ready(free: Row, ready: bool) -> bool:
    return ready


class NodeReady:
    name: ClassVar[str] = "NodeReady"
    static: ClassVar[bool] = False

    def check(self, task: Task, node: NodeState) -> Status:
        if node.ready or tolerates_not_ready(task):
            return Status.success()
        return NOT_READY

    def row_test(self, task: Task) -> RowTest:
        return passes if task.tolerations and tolerates_not_ready(task) else _is_ready

    def mask(self, task: Task, nodes: NodeArrays) -> Bools:
        if task.tolerations and tolerates_not_ready(task):
            return np.ones(len(nodes), dtype=np.bool_)
        return nodes.ready
