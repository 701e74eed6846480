"""ListScheduler: a queue order plus a node choice rule, over the shared filters.

Each decision takes the first pod in the order whose group fits somewhere and asks the node
choice rule for a node; a group that fits nowhere (or whose pod is held back) is blocked until
resources are freed, and the next pod is tried, as kube-scheduler does with unschedulable pods.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.node_arrays import Bools, ClusterStatics, NodeArrays
from dagpilot.decide.node_log import NodeLog
from dagpilot.schedulers.node_choice import NodeChoice
from dagpilot.schedulers.ordering import Order
from dagpilot.schedulers.pending_sync import PendingSync
from dagpilot.schedulers.pod_queue import Amounts, GroupedQueue, PodGroup

logger = logging.getLogger(__name__)


def most_free(nodes: NodeArrays) -> Amounts:
    """The largest free cpu, memory and GPUs of any node (each on its own)."""
    return nodes.most_free()


ChoiceFactory = Callable[[Cluster, np.random.Generator], NodeChoice]
Candidate = tuple[PodGroup, int, Bools]
"""(group, position of the pod in the group, feasible nodes)."""


class ListScheduler:
    def __init__(self, name: str, make_order: Callable[[], Order], make_choice: ChoiceFactory,
                 filter_names: tuple[str, ...] = DEFAULT_FILTERS) -> None:
        self.name = name
        self._make_order = make_order
        self._make_choice = make_choice
        self._feasibility = Feasibility(filters(filter_names))
        self.reset(Cluster("", ()), np.random.default_rng(0))

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        self._rng = rng
        self._order = self._make_order()
        self._choice = self._make_choice(cluster, rng)
        self._queue = GroupedQueue(self._order)
        self._sync = PendingSync()
        self._log = NodeLog()
        self._feasibility = Feasibility(self._feasibility.filters)
        self._statics: ClusterStatics | None = None

    def resync(self) -> None:
        """Forget the pending list followed so far: the next decision queues the view's pods
        afresh (for a caller whose pending pods also leave by others' placements)."""
        self._queue.clear()
        self._sync = PendingSync()

    def decide(self, view: ClusterView) -> Placement | None:
        nodes = NodeArrays.from_view(view, self._statics)
        self._statics = nodes.statics
        if self._log.observe(nodes, view):
            self._queue.unblock(most_free(nodes), view.now_s)
        self._follow(view)
        while (candidate := self._next(nodes, view)) is not None:
            group, position, feasible = candidate
            pod = group.entries[position][1]
            assert group.static_mask is not None
            choice = self._choice.choose(pod, feasible, group.static_mask, nodes, view)
            if choice is None:
                self._queue.block(group, view.now_s)
                continue
            index, score = choice
            self._queue.take(group, position)
            self._sync.taken(pod)
            self._choice.placed(pod, index, nodes, view)
            return Placement(pod, nodes.specs[index].name, score=score)
        return None

    def _follow(self, view: ClusterView) -> None:
        joined, rebuild = self._sync.changes(view.pending)
        if rebuild:
            self._queue.clear()
        for pod in joined:
            self._queue.add(pod)

    def _feasible(self, group: PodGroup, pod: PodRef, nodes: NodeArrays) -> Bools:
        if group.static_mask is None:
            group.static_mask = self._feasibility.static_mask(pod.task, nodes)
        return self._feasibility.live(pod.task, nodes, group.static_mask, group.feasible)

    def _fits(self, group: PodGroup, nodes: NodeArrays, most: Amounts | None) -> Bools | None:
        """The nodes where the group's pods fit now; None if none. `most` (most_free), when
        given, rules out groups that ask for more than any node has free, without a mask."""
        if most is None or group.could_fit(most):
            feasible = self._feasible(group, group.head, nodes)
            if group.feasible.count:
                return feasible
        return None

    def _next(self, nodes: NodeArrays, view: ClusterView) -> Candidate | None:
        if self._order.random:
            return self._draw(nodes, view)
        most: Amounts | None = None  # computed once the first group fails: usually it fits
        while (group := self._queue.best()) is not None:
            feasible = self._fits(group, nodes, most)
            if feasible is not None:
                return group, 0, feasible
            self._block(group, view)
            most = most or most_free(nodes)
        return None

    def _draw(self, nodes: NodeArrays, view: ClusterView) -> Candidate | None:
        """A pod drawn uniformly among the pods whose group fits somewhere."""
        most = most_free(nodes)
        fitting: list[tuple[PodGroup, Bools]] = []
        for group in self._queue.open_groups():
            feasible = self._fits(group, nodes, most)
            if feasible is not None:
                fitting.append((group, feasible))
            else:
                self._block(group, view)
        if not fitting:
            return None
        draw = int(self._rng.integers(sum(len(group) for group, _ in fitting)))
        for group, feasible in fitting:
            if draw < len(group):
                return group, draw, feasible
            draw -= len(group)
        raise AssertionError("the draw is below the number of fitting pods")

    def _block(self, group: PodGroup, view: ClusterView) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            pod = group.head
            logger.debug("%s: %s fits on no node: %s", self.name, pod.name,
                         self._feasibility.rejections(pod.task, view))
        self._queue.block(group, view.now_s)
