"""TaintToleration score (kube-scheduler `taint_toleration.go`): the raw score counts the node's
PreferNoSchedule taints that no toleration with effect PreferNoSchedule (or none) tolerates;
NormalizeScore is DefaultNormalizeScore reversed, so fewer such taints score higher."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dagpilot.core.types import NodeSpec, TaintEffect, Task
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.scores.normalize import default_normalize


def intolerable_prefer_no_schedule(task: Task, spec: NodeSpec) -> int:
    return sum(1 for taint in spec.taints
               if taint.effect is TaintEffect.PREFER_NO_SCHEDULE
               and not any(t.tolerates(taint) for t in task.tolerations))


class TaintTolerationScore:
    name: ClassVar[str] = "TaintToleration"
    static: ClassVar[bool] = True

    def scores(self, task: Task, nodes: NodeArrays) -> Floats:
        return np.array([float(intolerable_prefer_no_schedule(task, s)) for s in nodes.specs])

    def normalize(self, raw: Floats) -> Floats:
        return default_normalize(raw, reverse=True)
