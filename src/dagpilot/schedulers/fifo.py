"""`fifo`: the oldest pending pod that fits somewhere goes to the first node (in cluster order)
where it fits. Work-conserving: a pod that fits nowhere does not hold back younger ones."""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.schedulers.node_choice import FirstFit
from dagpilot.schedulers.ordering import KeyOrder, creation

NAME = "fifo"


def _choice(cluster: Cluster, rng: np.random.Generator) -> FirstFit:
    del cluster, rng
    return FirstFit()


def build() -> ListScheduler:
    return ListScheduler(NAME, lambda: KeyOrder(creation), _choice)
