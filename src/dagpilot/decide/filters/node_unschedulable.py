"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate
`node.kubernetes.io/unschedulable:NoSchedule`, as in kube-scheduler's plugin."""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

from dagpilot.core.types import NodeSpec, Taint, TaintEffect, Task
from dagpilot.decide.filters.base import SpecFilter

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", TaintEffect.NO_SCHEDULE)


class NodeUnschedulable(SpecFilter):
    name: ClassVar[str] = "NodeUnschedulable"

    def key(self, task: Task) -> Hashable:
        return task.tolerations

    def reasons(self, task: Task, spec: NodeSpec) -> tuple[str, ...]:
        if not spec.unschedulable:
            return ()
        if any(t.tolerates(UNSCHEDULABLE_TAINT) for t in task.tolerations):
            return ()
        return ("node(s) were unschedulable",)
