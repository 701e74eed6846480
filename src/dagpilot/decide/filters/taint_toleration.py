"""TaintToleration: every NoSchedule and NoExecute taint of the node must be tolerated by one of
the pod's tolerations (PreferNoSchedule taints only lower the score). Every untolerated taint
is a reason; kube-scheduler names the first."""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

from dagpilot.core.types import NodeSpec, Taint, TaintEffect, Task, Toleration
from dagpilot.decide.filters.base import SpecFilter

HARD_EFFECTS = (TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE)


def tolerated(taint: Taint, tolerations: tuple[Toleration, ...]) -> bool:
    return any(toleration.tolerates(taint) for toleration in tolerations)


class TaintToleration(SpecFilter):
    name: ClassVar[str] = "TaintToleration"

    def key(self, task: Task) -> Hashable:
        return task.tolerations

    def reasons(self, task: Task, spec: NodeSpec) -> tuple[str, ...]:
        return tuple(f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
                     for taint in spec.taints
                     if taint.effect in HARD_EFFECTS and not tolerated(taint, task.tolerations))
