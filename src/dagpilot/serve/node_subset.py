"""Some of a view's nodes as a ClusterView of their own: what one model of a canary sees.

`Subset` is cut once per (cluster, node set) and lives across decisions: its `cluster` is one
object while the base cluster and the rows stay (so the agent's static caches hold), and the
slices of arrays that never change once handed out (allocatable, signals) are kept by the
identity of the base's array. `SubsetView` is the per-decision view over it, with its own
pending pods. Change tokens are the base view's, mapped to the subset's rows; a token from
before the subset was cut is answered None (cannot tell), as the contract asks when the
cluster changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, NodeState, PodRef
from dagpilot.serve.scheduler_view import PinnedView


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class _Sliced:
    """`array` at `rows` along `axis`, recomputed only when the base hands out another array."""

    def __init__(self, rows: np.ndarray, axis: int) -> None:
        self._rows = rows
        self._axis = axis
        self._source: np.ndarray | None = None
        self._sliced: np.ndarray | None = None

    def of(self, array: np.ndarray) -> np.ndarray:
        if array is not self._source or self._sliced is None:
            sliced = np.take(array, self._rows, axis=self._axis)
            sliced.flags.writeable = False
            self._source, self._sliced = array, sliced
        return self._sliced


class Subset:
    def __init__(self, view: ClusterView, rows: Sequence[int]) -> None:
        self.base = view.cluster
        self.rows = np.asarray(rows, dtype=np.int64)
        self.cluster = Cluster(self.base.name, tuple(self.base.nodes[row] for row in rows))
        self.position = {int(row): index for index, row in enumerate(rows)}
        self.since, _ = view.changed_nodes(-1)  # the base's token now: older ones are refused
        self.allocatable = _Sliced(self.rows, axis=0)  # (nodes, 3)
        self.signals = _Sliced(self.rows, axis=1)  # (signals, nodes)

    def __len__(self) -> int:
        return len(self.rows)

    def current(self, view: ClusterView) -> bool:
        return view.cluster is self.base


class SubsetView(PinnedView):
    """`view` restricted to `subset`'s nodes, with `pending` fixed (time, jobs and distances
    as the base view has them)."""

    def __init__(self, view: ClusterView, subset: Subset, pending: Sequence[PodRef]) -> None:
        super().__init__(view, pending)
        self._subset = subset
        self._nodes: tuple[NodeState, ...] | None = None

    def pin(self, pending: Sequence[PodRef]) -> PinnedView:
        self._nodes = None  # the next decision reads the nodes afresh
        return super().pin(pending)

    @property
    def cluster(self) -> Cluster:
        return self._subset.cluster

    @property
    def nodes(self) -> Sequence[NodeState]:
        if self._nodes is None:
            every = self._view.nodes
            self._nodes = tuple(every[row] for row in self._subset.rows.tolist())
        return self._nodes

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        allocatable, allocated = self._view.resource_arrays()
        return self._subset.allocatable.of(allocatable), _read_only(allocated[self._subset.rows])

    def ready_mask(self) -> np.ndarray:
        return _read_only(self._view.ready_mask()[self._subset.rows])

    def signal_arrays(self) -> np.ndarray:
        return self._subset.signals.of(self._view.signal_arrays())

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        token, rows = self._view.changed_nodes(since)
        if rows is None or since < self._subset.since:
            return token, None
        position = self._subset.position
        return token, [position[row] for row in rows if row in position]
