"""NodeArrays: one decision's picture of every node as arrays, so filters and scores vectorise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import NodeSpec, Resources
from dagpilot.core.view import ClusterView, NodeState

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

CPU, MEMORY, GPUS = 0, 1, 2
"""Columns of the resource arrays (cores, bytes, GPU count)."""

_TO_MILLI = np.array([1000.0, 1.0])


def resource_row(amounts: Resources) -> Floats:
    return np.array([amounts.cpu, amounts.memory, amounts.gpus], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class ClusterStatics:
    """What stays fixed for a cluster during a run, computed once and reused every decision."""

    specs: tuple[NodeSpec, ...]
    capacity_milli: Floats  # (nodes, 2): allocatable milli-CPU and memory bytes
    capacity_positive: bool  # every node has some CPU and some memory

    @classmethod
    def of(cls, specs: tuple[NodeSpec, ...], allocatable: Floats) -> ClusterStatics:
        capacity: Floats = np.rint(allocatable[:, :2] * _TO_MILLI)
        capacity.flags.writeable = False
        return cls(specs, capacity, bool((capacity > 0).all()))


@dataclass(frozen=True, slots=True)
class NodeArrays:
    """Nodes in cluster order: specs, states, and (nodes, 3) arrays of cpu, memory and GPUs.

    Valid for one decision only: the arrays may be views of the cluster state's own buffers.
    """

    specs: tuple[NodeSpec, ...]
    states: Sequence[NodeState]
    allocatable: Floats
    allocated: Floats
    free: Floats
    ready: Bools
    statics: ClusterStatics
    _memo: dict[str, Floats] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_view(cls, view: ClusterView, statics: ClusterStatics | None = None) -> NodeArrays:
        """The arrays of a view; pass the previous decision's `statics` to reuse them."""
        allocatable, allocated = view.resource_arrays()
        states = view.nodes
        ready = np.array([state.ready for state in states], dtype=np.bool_)
        specs = view.cluster.nodes
        if statics is None or statics.specs is not specs:
            statics = ClusterStatics.of(specs, allocatable)
        return cls(specs, states, allocatable, allocated, allocatable - allocated, ready, statics)

    @classmethod
    def from_states(cls, states: Sequence[NodeState]) -> NodeArrays:
        """The same arrays built from node states one by one (explanations and tests)."""
        allocatable = np.array([resource_row(s.spec.allocatable) for s in states]).reshape(-1, 3)
        allocated = np.array([resource_row(s.allocated) for s in states]).reshape(-1, 3)
        ready = np.array([s.ready for s in states], dtype=np.bool_)
        specs = tuple(s.spec for s in states)
        return cls(specs, states, allocatable, allocated, allocatable - allocated, ready,
                   ClusterStatics.of(specs, allocatable))

    def __len__(self) -> int:
        return len(self.specs)

    @property
    def capacity_milli(self) -> Floats:
        """(nodes, 2): allocatable milli-CPU and memory bytes, the integers kube-scheduler's
        resource scores work in."""
        return self.statics.capacity_milli

    def requested_milli(self) -> Floats:
        """(nodes, 2): milli-CPU and memory bytes requested by the pods bound to each node."""
        amounts = self._memo.get("requested_milli")
        if amounts is None:
            amounts = self._memo["requested_milli"] = np.rint(self.allocated[:, :2] * _TO_MILLI)
        return amounts
