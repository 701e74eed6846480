"""`heft`: Heterogeneous Earliest Finish Time (Topcuoglu et al., 2002) on expected runtimes.

Order: the largest upward rank first, rank_u(t) = mean expected runtime of t over the nodes
+ max over children of rank_u (no communication costs: the scheduler sees no transfer sizes).
With the mean of runtime / cpu_speed a fixed multiple of the runtime, this is the b-level order.
Node: the earliest finish time, EFT = earliest start + runtime / cpu_speed, where the earliest
start on a busy node is when enough of what runs there is expected to end. When a node that
is busy now would finish the pod first, the pod waits for it, and the pods of the same spec
ranked after it wait too (they are retried when resources free up); on ties the first node in
cluster order wins.
"""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.node_arrays import Bools, NodeArrays, resource_row
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.schedulers.node_choice import Choice, NodeChoice
from dagpilot.schedulers.node_timeline import NodeTimeline
from dagpilot.schedulers.ordering import KeyOrder
from dagpilot.schedulers.pod_queue import SortKey

NAME = "heft"


def upward_rank_first(pod: PodRef) -> SortKey:
    return (-pod.job.b_levels[pod.task.id],)


class EarliestFinish(NodeChoice):
    def __init__(self, cluster: Cluster) -> None:
        self._speeds = np.array([node.cpu_speed for node in cluster.nodes], dtype=np.float64)
        self._timeline = NodeTimeline(len(cluster.nodes))

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        now = view.now_s
        finish = now + pod.runtime_s / self._speeds
        index = int(np.argmin(np.where(feasible, finish, np.inf)))
        request = resource_row(pod.requests)
        # Only a node that is faster than the best free one can win by waiting.
        waiting = np.flatnonzero(allowed & nodes.ready & ~feasible & (finish < finish[index])
                                 & (nodes.allocatable >= request).all(axis=1))
        for busy in waiting:
            start = self._timeline.earliest_start(int(busy), request, nodes, now)
            if start + pod.runtime_s / self._speeds[busy] < finish[index]:
                return None
        return index, float(-finish[index])

    def placed(self, pod: PodRef, index: int, nodes: NodeArrays, view: ClusterView) -> None:
        self._timeline.reconcile(index, nodes.allocated[index])
        end = view.now_s + pod.runtime_s / self._speeds[index]
        self._timeline.book(index, end, resource_row(pod.requests))


def _choice(cluster: Cluster, rng: np.random.Generator) -> EarliestFinish:
    del rng
    return EarliestFinish(cluster)


def build() -> ListScheduler:
    return ListScheduler(NAME, lambda: KeyOrder(upward_rank_first), _choice)
