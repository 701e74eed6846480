"""`random`: a pending pod drawn uniformly among those that fit somewhere, on a feasible node
drawn uniformly; every draw from the run's Generator."""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.schedulers.node_choice import RandomFit
from dagpilot.schedulers.ordering import RandomOrder

NAME = "random"


def _choice(cluster: Cluster, rng: np.random.Generator) -> RandomFit:
    del cluster
    return RandomFit(rng)


def build() -> ListScheduler:
    return ListScheduler(NAME, RandomOrder, _choice)
