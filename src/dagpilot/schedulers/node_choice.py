"""Node choice rules: given the feasible nodes for a pod, which one. `None` holds the pod back
(it would rather wait for a node that is busy now)."""

from __future__ import annotations

import numpy as np

from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.node_arrays import CPU, Bools, NodeArrays, resource_row

Choice = tuple[int, float]
"""(node index, score)."""


class NodeChoice:
    """Base of the rules; `allowed` is the nodes the static filters allow (busy or not)."""

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        raise NotImplementedError

    def placed(self, pod: PodRef, index: int, nodes: NodeArrays, view: ClusterView) -> None:
        """Told after each placement it chose (stateful rules keep their books here)."""


class FirstFit(NodeChoice):
    """The first feasible node in cluster order."""

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        return int(np.argmax(feasible)), 0.0


class RandomFit(NodeChoice):
    """A feasible node drawn uniformly."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        candidates = np.flatnonzero(feasible)
        return int(candidates[self._rng.integers(len(candidates))]), 0.0


class BestFit(NodeChoice):
    """The feasible node left with the least free capacity: the smallest sum over cpu, memory
    and GPUs (where the node has any) of (free - request) / allocatable. The first on ties."""

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        capacity = nodes.allocatable
        left = (nodes.free - resource_row(pod.requests)) / np.where(capacity > 0, capacity, 1.0)
        leftover = np.where(capacity > 0, left, 0.0).sum(axis=1)
        leftover[~feasible] = np.inf
        index = int(np.argmin(leftover))
        return index, float(-leftover[index])


class FairAssign(NodeChoice):
    """CWS FairAssign: the feasible node with the largest share of its CPU left after placing
    the pod, (free cpu - request) / allocatable cpu; the first on ties (strict comparison)."""

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        capacity = nodes.allocatable[:, CPU]
        share = (nodes.free[:, CPU] - pod.requests.cpu) / np.where(capacity > 0, capacity, 1.0)
        share[~feasible] = -np.inf
        index = int(np.argmax(share))
        return index, float(share[index])


class RoundRobinAssign(NodeChoice):
    """CWS RoundRobinAssign: a cursor over the node list; from the cursor on, the first node
    where the pod fits; the cursor moves past every node tried."""

    def __init__(self) -> None:
        self._cursor = 0

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        order = np.roll(np.arange(len(nodes)), -self._cursor)
        index = int(order[np.argmax(feasible[order])])
        self._cursor = (index + 1) % len(nodes)
        return index, 0.0
