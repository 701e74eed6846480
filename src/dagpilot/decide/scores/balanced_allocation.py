"""NodeResourcesBalancedAllocation (kube-scheduler `balanced_allocation.go`, v1.23+ formula).

fraction_r = requested_r / capacity_r over (cpu, memory), capped at 1 (never reached on a node
where the pod fits, the only nodes scored), resources with zero capacity skipped; with two
fractions std = |f_cpu - f_mem| / 2 (the population standard deviation), with one std = 0;
score = int((1 - std) * 100), truncated. `requested` is the bound pods' requests plus the
incoming pod's actual request (no 100m / 200 MiB defaults here).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from dagpilot.core.types import Task
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.node_log import Row
from dagpilot.decide.scores import resource_amounts
from dagpilot.decide.scores.base import MAX_NODE_SCORE, RowScorer, identity


class BalancedAllocation:
    name: ClassVar[str] = "NodeResourcesBalancedAllocation"
    static: ClassVar[bool] = False
    normalize = staticmethod(identity)

    def scores(self, task: Task, nodes: NodeArrays) -> Floats:
        """Scores for every node; meaningful on the nodes where the pod fits."""
        capacity = nodes.capacity_milli
        wanted = nodes.requested_milli() + resource_amounts.pod_request(task.requests, False)
        if nodes.statics.capacity_positive:
            # Where the pod fits no fraction passes 1, so the cap is left out; Go's order of
            # floating-point operations is kept, so truncation gives the same integers.
            fractions = wanted / capacity
            std = np.abs((fractions[:, 0] - fractions[:, 1]) / 2)
        else:
            both = (capacity > 0).all(axis=1)
            fractions = np.minimum(wanted / np.where(capacity > 0, capacity, 1.0), 1.0)
            std = np.where(both, np.abs((fractions[:, 0] - fractions[:, 1]) / 2), 0.0)
        truncated: Floats = np.floor((1 - std) * MAX_NODE_SCORE)
        return truncated

    def row_scorer(self, task: Task) -> RowScorer:
        """`scores` for one node with positive CPU and memory capacity, in the same
        floating-point operations, so the same number."""
        request_cpu, request_memory = resource_amounts.pod_request_pair(task.requests, False)

        def score(allocated: Row, capacity: tuple[float, float]) -> float:
            std = abs(((round(allocated[0] * 1000.0) + request_cpu) / capacity[0]
                       - (round(allocated[1]) + request_memory) / capacity[1]) / 2)
            return float(math.floor((1 - std) * MAX_NODE_SCORE))

        return score
