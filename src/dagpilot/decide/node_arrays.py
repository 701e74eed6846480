"""NodeArrays: one decision's picture of every node as arrays, so filters and scores vectorise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import NodeSpec, Resources
from dagpilot.core.view import ClusterView, NodeState

if TYPE_CHECKING:
    from dagpilot.decide.node_log import NodeLog

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
    capacity_rows: tuple[tuple[float, float], ...]  # capacity_milli as Python floats

    @classmethod
    def of(cls, specs: tuple[NodeSpec, ...], allocatable: Floats) -> ClusterStatics:
        capacity: Floats = np.rint(allocatable[:, :2] * _TO_MILLI)
        capacity.flags.writeable = False
        rows = tuple((cpu, memory) for cpu, memory in capacity.tolist())
        return cls(specs, capacity, bool((capacity > 0).all()), rows)


class NodeArrays:
    """Nodes in cluster order: specs, states, and (nodes, 3) arrays of cpu, memory and GPUs.

    Valid for one decision only: the arrays may be views of the cluster state's own buffers.
    `free` and `requested_milli()` are computed when first read. `log`, when the caller keeps
    one, says which nodes changed since earlier decisions (for caches over nodes).
    """

    __slots__ = ("_free", "_most_free", "_requested_milli", "allocatable", "allocated", "log",
                 "ready", "specs", "states", "statics")

    def __init__(self, specs: tuple[NodeSpec, ...], states: Sequence[NodeState],
                 allocatable: Floats, allocated: Floats, *, ready: Bools,
                 statics: ClusterStatics, log: NodeLog | None = None) -> None:
        self.specs = specs
        self.states = states
        self.allocatable = allocatable
        self.allocated = allocated
        self.ready = ready
        self.statics = statics
        self.log = log
        self._free: Floats | None = None
        self._requested_milli: Floats | None = None
        self._most_free: tuple[float, float, float] | None = None

    @classmethod
    def from_view(cls, view: ClusterView, statics: ClusterStatics | None = None) -> NodeArrays:
        """The arrays of a view; pass the previous decision's `statics` to reuse them."""
        allocatable, allocated = view.resource_arrays()
        specs = view.cluster.nodes
        if statics is None or statics.specs is not specs:
            statics = ClusterStatics.of(specs, allocatable)
        return cls(specs, view.nodes, allocatable, allocated, ready=view.ready_mask(),
                   statics=statics)

    @classmethod
    def from_states(cls, states: Sequence[NodeState]) -> NodeArrays:
        """The same arrays built from node states one by one (explanations and tests)."""
        allocatable = np.array([resource_row(s.spec.allocatable) for s in states]).reshape(-1, 3)
        allocated = np.array([resource_row(s.allocated) for s in states]).reshape(-1, 3)
        ready = np.array([s.ready for s in states], dtype=np.bool_)
        specs = tuple(s.spec for s in states)
        return cls(specs, states, allocatable, allocated, ready=ready,
                   statics=ClusterStatics.of(specs, allocatable))

    def __len__(self) -> int:
        return len(self.specs)

    @property
    def free(self) -> Floats:
        """(nodes, 3): allocatable minus allocated."""
        free = self._free
        if free is None:
            free = self._free = self.allocatable - self.allocated
        return free

    def most_free(self) -> tuple[float, float, float]:
        """The largest free cpu, memory and GPUs of any node (each on its own)."""
        most = self._most_free
        if most is None:
            cpu, memory, gpus = self.free.max(axis=0).tolist()
            most = self._most_free = (cpu, memory, gpus)
        return most

    @property
    def capacity_milli(self) -> Floats:
        """(nodes, 2): allocatable milli-CPU and memory bytes, the integers kube-scheduler's
        resource scores work in."""
        return self.statics.capacity_milli

    def requested_milli(self) -> Floats:
        """(nodes, 2): milli-CPU and memory bytes requested by the pods bound to each node."""
        amounts = self._requested_milli
        if amounts is None:
            amounts = self._requested_milli = np.rint(self.allocated[:, :2] * _TO_MILLI)
        return amounts
