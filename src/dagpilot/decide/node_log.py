"""NodeLog: which nodes' allocation or readiness changed from one decision to the next.

A placement changes one node's allocation, so caches over all nodes (a pod group's feasibility
mask, a request's allocation scores) stay valid for every other node. The log compares each
decision's arrays with the previous ones (a few vector operations, whatever the cluster size),
appends the rows that changed, and keeps each node's row as Python floats, so that a cache
brings itself up to date by recomputing only those rows, in plain Python.

A cache remembers the log position (`end`) it was refreshed at and asks `since(position)` for
the rows changed after it; None means "recompute everything": the cache is new, the cluster
changed, or so many rows changed that one vector pass is cheaper.

The rows that changed come from the view's own change log (`ClusterView.changed_nodes`) when it
keeps one; otherwise from comparing the arrays with the previous decision's.
"""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import NodeSpec
from dagpilot.core.view import ClusterView
from dagpilot.decide.node_arrays import Bools, Floats, NodeArrays

SLACK = 1e-9  # an allocation must fall by more than this to count as freed (float residue)
Row = tuple[float, float, float]


class NodeLog:
    __slots__ = ("_allocated", "_changes", "_first", "_ready", "_specs", "_token", "allocatable",
                 "allocated", "free", "ready")

    def __init__(self) -> None:
        self._specs: tuple[NodeSpec, ...] | None = None
        # The previous decision's arrays, as bytes: comparing bytes is the quickest test for
        # "nothing changed", and they stay immutable without a copy.
        self._allocated = b""
        self._ready = b""
        self._changes: list[int] = []  # rows changed, in order; position `_first` is index 0
        self._first = 0
        self._token = -1  # the view's change-log token as of the last observe
        # Each node's row, as Python floats and bools, current as of the last `observe`.
        self.allocatable: list[Row] = []
        self.allocated: list[Row] = []
        self.free: list[Row] = []
        self.ready: list[bool] = []

    @property
    def end(self) -> int:
        """The position after the last change logged."""
        return self._first + len(self._changes)

    def since(self, position: int) -> list[int] | None:
        """Rows changed after `position` (maybe repeated), or None: recompute every row."""
        offset = position - self._first
        if offset < 0:
            return None
        changes = self._changes
        if len(changes) - offset > 16 + len(self.ready) // 8:
            return None
        return changes[offset:]

    def observe(self, nodes: NodeArrays, view: ClusterView) -> bool:
        """Take in a decision's arrays (and become `nodes.log`); returns whether anything was
        freed since the previous call: some node's allocation fell, or a node became Ready.
        Placements only add requests, so a pod that fitted nowhere still fits nowhere
        otherwise."""
        nodes.log = self
        token, changed = view.changed_nodes(self._token)
        self._token = token
        if changed is not None and nodes.specs is self._specs:
            if not changed:
                return False
            self._allocated = self._ready = b""  # the snapshots fall behind the rows
            rows = list(dict.fromkeys(changed)) if len(changed) > 1 else list(changed)
            return self._take(rows, nodes.allocated, nodes.ready)
        allocated, ready = nodes.allocated, nodes.ready
        allocated_bytes, ready_bytes = allocated.tobytes(), ready.tobytes()
        if nodes.specs is not self._specs or len(ready) != len(self.ready):
            self._restart(nodes, allocated_bytes, ready_bytes)
            return True
        if not self._allocated:  # compare with the rows as last taken in
            self._allocated = np.array(self.allocated, dtype=allocated.dtype).tobytes()
            self._ready = np.array(self.ready, dtype=np.bool_).tobytes()
        rows = []
        if allocated_bytes != self._allocated:
            before = np.frombuffer(self._allocated, dtype=allocated.dtype).reshape(allocated.shape)
            rows = (allocated != before).ravel().nonzero()[0].tolist()
            rows = [rows[0] // 3] if len(rows) == 1 else sorted({i // 3 for i in rows})
            self._allocated = allocated_bytes
        if ready_bytes != self._ready:
            was_ready = np.frombuffer(self._ready, dtype=np.bool_)
            flipped = (ready != was_ready).nonzero()[0].tolist()
            rows = sorted(set(rows) | set(flipped))
            self._ready = ready_bytes
        return self._take(rows, allocated, ready) if rows else False

    def _take(self, rows: list[int], allocated: Floats, ready: Bools) -> bool:
        """Bring the rows up to date and log them; whether any of them was freed."""
        freed = False
        for row in rows:
            freed = self._update(row, allocated[row].tolist(), bool(ready[row])) or freed
        if len(self._changes) > 4 * len(self.ready) + 64:
            self._first += len(self._changes)  # too old to replay: the caches recompute
            self._changes = []
        self._changes.extend(rows)
        return freed

    def _update(self, row: int, allocated: list[float], ready: bool) -> bool:
        old = self.allocated[row]
        freed = ((allocated[0] < old[0] - SLACK) or (allocated[1] < old[1] - SLACK)
                 or (allocated[2] < old[2] - SLACK) or (ready and not self.ready[row]))
        capacity = self.allocatable[row]
        self.allocated[row] = (allocated[0], allocated[1], allocated[2])
        self.free[row] = (capacity[0] - allocated[0], capacity[1] - allocated[1],
                          capacity[2] - allocated[2])
        self.ready[row] = ready
        return freed

    def _restart(self, nodes: NodeArrays, allocated: bytes, ready: bytes) -> None:
        self._specs = nodes.specs
        self._allocated, self._ready = allocated, ready
        self._first = self.end + 1  # every cache recomputes
        self._changes = []
        self.allocatable = [(r[0], r[1], r[2]) for r in nodes.allocatable.tolist()]
        self.allocated = [(r[0], r[1], r[2]) for r in nodes.allocated.tolist()]
        self.free = [(r[0], r[1], r[2]) for r in nodes.free.tolist()]
        self.ready = [bool(r) for r in nodes.ready.tolist()]
