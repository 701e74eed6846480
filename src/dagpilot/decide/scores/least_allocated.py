"""NodeResourcesFit, scoring strategy LeastAllocated (kube-scheduler `least_allocated.go`).

Per resource r in (cpu, memory), weights 1:  score_r = (capacity_r - requested_r) * 100 / capacity_r
in integer division, 0 when requested exceeds capacity, resources with zero capacity skipped;
node score = sum(score_r * weight_r) / sum(weight_r), integer division. `requested` is the bound
pods' requests plus the incoming pod's, a missing pod request counting at 100m / 200 MiB.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dagpilot.core.types import Task
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.node_log import Row
from dagpilot.decide.scores import resource_amounts
from dagpilot.decide.scores.base import MAX_NODE_SCORE, RowScorer, floor_div, identity


class LeastAllocated:
    name: ClassVar[str] = "NodeResourcesLeastAllocated"
    static: ClassVar[bool] = False
    normalize = staticmethod(identity)

    def scores(self, task: Task, nodes: NodeArrays) -> Floats:
        """Scores for every node; meaningful on the nodes where the pod fits."""
        capacity = nodes.capacity_milli
        request = resource_amounts.pod_request(task.requests, True)
        wanted = nodes.requested_milli() + request
        if nodes.statics.capacity_positive:  # the usual case, in few array operations
            per_resource = np.floor_divide((capacity - wanted) * MAX_NODE_SCORE, capacity)
            if not (task.requests.cpu and task.requests.memory):
                # A default request (100m, 200 MiB) can exceed what a feasible node has left.
                np.maximum(per_resource, 0.0, out=per_resource)
            return floor_div(per_resource[:, 0] + per_resource[:, 1], 2.0)
        counted = capacity > 0
        safe = np.where(counted, capacity, 1.0)
        per_resource = np.maximum(floor_div((safe - wanted) * MAX_NODE_SCORE, safe), 0.0)
        per_resource[~counted] = 0.0
        weights = counted.sum(axis=1)
        return np.where(weights > 0, floor_div(per_resource.sum(axis=1), np.maximum(weights, 1)),
                        0.0)

    def row_scorer(self, task: Task) -> RowScorer:
        """`scores` for one node with positive CPU and memory capacity, in the same
        floating-point operations, so the same number."""
        request_cpu, request_memory = resource_amounts.pod_request_pair(task.requests, True)
        clip = not (task.requests.cpu and task.requests.memory)

        def score(allocated: Row, capacity: tuple[float, float]) -> float:
            cpu_cap, memory_cap = capacity
            cpu = ((cpu_cap - (round(allocated[0] * 1000.0) + request_cpu)) * MAX_NODE_SCORE
                   ) // cpu_cap
            memory = ((memory_cap - (round(allocated[1]) + request_memory)) * MAX_NODE_SCORE
                      ) // memory_cap
            if clip:
                cpu, memory = max(cpu, 0.0), max(memory, 0.0)
            return (cpu + memory) // 2.0

        return score
