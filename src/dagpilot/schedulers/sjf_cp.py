"""`sjf-cp`: critical path first. The pending pod whose task has the longest remaining critical
path (its b-level: its own expected runtime plus the longest chain of expected runtimes after
it) goes first, older pods first on ties, to the best-fitting node (node_choice.BestFit)."""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.core.view import PodRef
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.schedulers.node_choice import BestFit
from dagpilot.schedulers.ordering import KeyOrder
from dagpilot.schedulers.pod_queue import SortKey

NAME = "sjf-cp"


def longest_path_first(pod: PodRef) -> SortKey:
    return (-pod.job.b_levels[pod.task.id],)


def _choice(cluster: Cluster, rng: np.random.Generator) -> BestFit:
    del cluster, rng
    return BestFit()


def build() -> ListScheduler:
    return ListScheduler(NAME, lambda: KeyOrder(longest_path_first), _choice)
