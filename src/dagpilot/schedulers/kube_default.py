"""`kube-default`: the default kube-scheduler profile, on requests only.

Queue: PrioritySort (priority, then queue timestamp). Filters: NodeUnschedulable, readiness
(the not-ready taint), NodeResourcesFit, GpuModel (the GPU product selector), TaintToleration,
NodeAffinity. Scores: LeastAllocated x1, BalancedAllocation x1, TaintToleration x3,
NodeAffinity x2, each normalised to 0-100; partial node search on large clusters; a uniform
draw among the top nodes. No usage, no DAG knowledge. See docs/SCHEDULERS.md.
"""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.decide.scores import DEFAULT_WEIGHTS
from dagpilot.decide.scoring import Scoring
from dagpilot.schedulers.framework_choice import FrameworkChoice
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.schedulers.ordering import PrioritySort

NAME = "kube-default"


def _choice(cluster: Cluster, rng: np.random.Generator) -> FrameworkChoice:
    del cluster
    return FrameworkChoice(Scoring.named(DEFAULT_WEIGHTS), rng)


def build() -> ListScheduler:
    return ListScheduler(NAME, PrioritySort, _choice)
