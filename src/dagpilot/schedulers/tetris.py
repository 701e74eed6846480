"""`tetris`: multi-resource packing combined with shortest remaining work (Grandl et al.,
"Multi-resource packing for cluster schedulers", SIGCOMM 2014).

For each pending pod and each node where it fits, the alignment score is the dot product of
the pod's demand and the node's free resources, both as shares of the node's allocatable:
  a = sum over r in (cpu, memory, GPUs where the node has any)
      of (request_r / alloc_r) * (free_r / alloc_r).
The remaining-work term p is the pod's job's unfinished work (core-seconds), smaller better.
The pair with the largest a - eps * p is placed, eps = mean(a) / mean(p) over the candidate
pods (the paper's weighted sum with its knob m = 1), the older pod first on ties.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import filters
from dagpilot.decide.node_arrays import ClusterStatics, Floats, NodeArrays, resource_row
from dagpilot.decide.signature import placement_key
from dagpilot.schedulers.freed_watch import FreedWatch
from dagpilot.schedulers.list_scheduler import most_free
from dagpilot.schedulers.ordering import KeyOrder, creation
from dagpilot.schedulers.pending_sync import PendingSync
from dagpilot.schedulers.pod_queue import GroupedQueue, PodGroup
from dagpilot.schedulers.remaining_work import RemainingWork

NAME = "tetris"


def by_job_and_spec(pod: PodRef) -> Hashable:
    return (pod.job.id, placement_key(pod.task))


def alignment(request: Floats, nodes: NodeArrays) -> Floats:
    capacity = nodes.allocatable
    inverse = np.divide(1.0, capacity, out=np.zeros_like(capacity), where=capacity > 0)
    aligned: Floats = ((request * inverse) * (nodes.free * inverse)).sum(axis=1)
    return aligned


class Tetris:
    name = NAME

    def __init__(self) -> None:
        self.reset(Cluster("", ()), np.random.default_rng(0))

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        del cluster, rng  # no ties are broken at random
        self._queue = GroupedQueue(KeyOrder(creation, by_job_and_spec))
        self._sync = PendingSync()
        self._freed = FreedWatch()
        self._feasibility = Feasibility(filters())
        self._remaining = RemainingWork()
        self._statics: ClusterStatics | None = None

    def decide(self, view: ClusterView) -> Placement | None:
        nodes = NodeArrays.from_view(view, self._statics)
        self._statics = nodes.statics
        if self._freed.saw_freed(nodes):
            self._queue.unblock(most_free(nodes), view.now_s)
        joined, rebuild = self._sync.changes(view.pending)
        if rebuild:
            self._queue.clear()
        for pod in joined:
            self._queue.add(pod)
        candidates = self._candidates(nodes, view)
        if not candidates:
            return None
        aligned = np.array([a for _, _, a in candidates])
        work = np.array([self._remaining.of(g.head.job, view) for g, _, _ in candidates])
        mean_work = float(work.mean())
        eps = float(aligned.mean()) / mean_work if mean_work > 0 else 0.0
        combined = aligned - eps * work
        best = max(range(len(candidates)),
                   key=lambda i: (combined[i], tuple(-x for x in candidates[i][0].head_key)))
        group, index, score = candidates[best][0], candidates[best][1], float(combined[best])
        pod = self._queue.take(group)
        self._sync.taken(pod)
        return Placement(pod, nodes.specs[index].name, score=score)

    def _candidates(self, nodes: NodeArrays,
                    view: ClusterView) -> list[tuple[PodGroup, int, float]]:
        """(group, its best node, that node's alignment) for each open group that fits."""
        best_by_spec: dict[Hashable, tuple[int, float] | None] = {}
        candidates = []
        for group in self._queue.open_groups():
            pod = group.head
            spec_key = placement_key(pod.task)
            if spec_key not in best_by_spec:
                best_by_spec[spec_key] = self._best_node(pod, nodes)
            found = best_by_spec[spec_key]
            if found is None:
                self._queue.block(group, view.now_s)
            else:
                candidates.append((group, *found))
        return candidates

    def _best_node(self, pod: PodRef, nodes: NodeArrays) -> tuple[int, float] | None:
        feasible = self._feasibility.mask(pod.task, nodes)
        if not np.count_nonzero(feasible):
            return None
        scores = np.where(feasible, alignment(resource_row(pod.requests), nodes), -np.inf)
        index = int(np.argmax(scores))
        return index, float(scores[index])


def build() -> Tetris:
    return Tetris()
