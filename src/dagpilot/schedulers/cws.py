"""The Common Workflow Scheduler's strategies (CommonWorkflowScheduler/KubernetesScheduler,
`PrioritizeAssignScheduler`): a prioritisation sorts the unscheduled tasks, then a node
assignment places them in that order, skipping those that fit nowhere.

Prioritisations (`scheduler/prioritize/`; Java's sort is stable, so ties keep submission order):
  fifo      submission order                     rank      larger rank first, then submission
  rank_min  larger rank, then smaller input      rank_max  larger rank, then larger input
  max       larger input first                   min       smaller input first
  random    a fresh shuffle every round (here: a uniform draw among the pods that fit)
Rank: dag_rank.process_ranks; input size: the task's read bytes.
Node assignments (`scheduler/nodeassign/`): fair (FairAssign), random (RandomNodeAssign),
roundrobin (RoundRobinAssign); see node_choice.py.

Names here are `cws-<prioritisation>-<assignment>` with `_` written `-` and roundrobin as `rr`
(`cws-rank-min-rr`); `cws_strategy` also takes the trace's names (`rank_min_roundrobin`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dagpilot.core.errors import SpecError
from dagpilot.core.types import Cluster
from dagpilot.core.view import PodRef
from dagpilot.schedulers.dag_rank import RankTable
from dagpilot.schedulers.list_scheduler import ChoiceFactory, ListScheduler
from dagpilot.schedulers.node_choice import FairAssign, NodeChoice, RandomFit, RoundRobinAssign
from dagpilot.schedulers.ordering import KeyOrder, Order, RandomOrder, creation
from dagpilot.schedulers.pod_queue import SortKey

ORIGINAL = "original"  # the trace's name for Nextflow's own executor on kube-scheduler


def _input(pod: PodRef) -> float:
    return float(pod.task.read_bytes)


def _ranked(tie: Callable[[PodRef], SortKey]) -> Callable[[], Order]:
    def make() -> Order:
        table = RankTable()
        return KeyOrder(lambda pod: (-table.rank(pod.job, pod.task.id), *tie(pod)))
    return make


PRIORITISATIONS: dict[str, Callable[[], Order]] = {
    "fifo": lambda: KeyOrder(creation),
    "rank": _ranked(creation),
    "rank_min": _ranked(lambda pod: (_input(pod),)),
    "rank_max": _ranked(lambda pod: (-_input(pod),)),
    "max": lambda: KeyOrder(lambda pod: (-_input(pod),)),
    "min": lambda: KeyOrder(lambda pod: (_input(pod),)),
    "random": RandomOrder,
}


def _fair(cluster: Cluster, rng: np.random.Generator) -> NodeChoice:
    return FairAssign()


def _random(cluster: Cluster, rng: np.random.Generator) -> NodeChoice:
    return RandomFit(rng)


def _round_robin(cluster: Cluster, rng: np.random.Generator) -> NodeChoice:
    return RoundRobinAssign()


ASSIGNMENTS: dict[str, tuple[str, ChoiceFactory]] = {
    "fair": ("fair", _fair),
    "random": ("random", _random),
    "roundrobin": ("rr", _round_robin),
}
"""Trace name -> (short name used in scheduler names, node choice factory)."""


def scheduler_name(prioritisation: str, assignment: str) -> str:
    return f"cws-{prioritisation.replace('_', '-')}-{ASSIGNMENTS[assignment][0]}"


def _builder(prioritisation: str, assignment: str) -> Callable[[], ListScheduler]:
    def build() -> ListScheduler:
        return ListScheduler(scheduler_name(prioritisation, assignment),
                             PRIORITISATIONS[prioritisation], ASSIGNMENTS[assignment][1])
    return build


SCHEDULERS: dict[str, Callable[[], ListScheduler]] = {
    scheduler_name(p, a): _builder(p, a) for p in PRIORITISATIONS for a in ASSIGNMENTS
}

_TRACE_NAMES = {f"{p}_{a}": scheduler_name(p, a) for p in PRIORITISATIONS for a in ASSIGNMENTS}


def cws_strategy(name: str) -> str:
    """The scheduler name for a CWS strategy as the trace writes it (`rank_min_roundrobin`),
    or as named here (`cws-rank-min-rr`); the trace's `original` is `kube-default`."""
    if name == ORIGINAL:
        return "kube-default"
    if name in SCHEDULERS:
        return name
    if name in _TRACE_NAMES:
        return _TRACE_NAMES[name]
    raise SpecError(name, f"unknown CWS strategy; known: {ORIGINAL}, "
                          f"{', '.join(sorted(_TRACE_NAMES))}")
