"""NodeAffinity score (kube-scheduler `node_affinity.go`): the raw score sums the weights of the
pod's preferred node-affinity terms that the node matches; NormalizeScore is
DefaultNormalizeScore, so the best-matching feasible node gets 100."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dagpilot.core.types import NodeSpec, Task
from dagpilot.decide.filters.node_affinity import term_matches
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.scores.normalize import default_normalize


def preferred_weight(task: Task, spec: NodeSpec) -> int:
    if task.affinity is None or not task.affinity.preferred:
        return 0
    node_labels = dict(spec.labels)
    return sum(weight for weight, term in task.affinity.preferred
               if weight and term_matches(term, node_labels))


class NodeAffinityScore:
    name: ClassVar[str] = "NodeAffinity"
    static: ClassVar[bool] = True

    def scores(self, task: Task, nodes: NodeArrays) -> Floats:
        return np.array([float(preferred_weight(task, s)) for s in nodes.specs])

    def normalize(self, raw: Floats) -> Floats:
        return default_normalize(raw, reverse=False)
