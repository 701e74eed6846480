"""ClusterSnapshot: the reference ClusterView, an immutable picture built from plain data.

Every change (`bound`, `released`, `with_node`, `with_signals`, `with_spec`, `with_inventory`,
`created`, `finished_task`, `at`) returns a new snapshot and leaves the old one as it was, so a
test can hold two moments side by side. It keeps every rule of `core.view`'s contract and is
what tests build views from by hand; the conformance suite (`tests/core/view_conformance.py`)
holds the simulator's and the live views to the same rules.

Built with `logged=True`, a snapshot keeps a change log that its derived snapshots carry on,
so `changed_nodes` lists the nodes each change touched (the way the simulator's log does);
without one it answers None and readers compare arrays. `ChangingView` shows a snapshot
through one object that stays the same while it changes, as the simulator's and the live
views do. The network is flat: 0.5 ms between
any two nodes. A change that breaks the contract (a pod bound twice or where it does not fit,
a node removed under its pods) is a bug of the caller: ValueError.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, NodeSpec, Resources
from dagpilot.core.view import NodeSignals, PodRef, signal_columns

EMPTY = Resources()
NO_SIGNALS = NodeSignals()
RTT_MS = 0.5  # between two distinct nodes; 0 from a node to itself
STATE_FIELDS = frozenset({"allocated", "free_gpus", "ready", "pods"})  # what the log follows


@dataclass(frozen=True, slots=True, init=False)
class NodeSnapshot:
    """One node's NodeState. `free_gpus` defaults to the node's GPUs after the first
    `allocated.gpus` (the ones a device plugin hands out first are taken)."""

    spec: NodeSpec
    allocated: Resources
    free_gpus: tuple[int, ...]
    ready: bool
    pods: int
    signals: NodeSignals

    def __init__(self, spec: NodeSpec, allocated: Resources = EMPTY,
                 free_gpus: tuple[int, ...] | None = None, *, ready: bool = True,
                 pods: int = 0, signals: NodeSignals = NO_SIGNALS) -> None:
        if free_gpus is None:
            free_gpus = tuple(range(min(allocated.gpus, len(spec.gpus)), len(spec.gpus)))
        for name, value in (("spec", spec), ("allocated", allocated), ("free_gpus", free_gpus),
                            ("ready", ready), ("pods", pods), ("signals", signals)):
            object.__setattr__(self, name, value)


@dataclass(frozen=True, slots=True)
class Binding:
    """A pod bound to a node, with the GPUs it holds there."""

    pod: PodRef
    node: str
    gpus: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClusterSnapshot:
    """A ClusterView of plain data; `log` is None for a snapshot without a change log, else the
    node indices changed since token `log_start` (where the current `cluster` began)."""

    now_s: float
    cluster: Cluster
    nodes: tuple[NodeSnapshot, ...]
    pending: tuple[PodRef, ...] = ()
    finished: tuple[tuple[str, frozenset[str]], ...] = ()
    bindings: tuple[Binding, ...] = ()
    log: tuple[int, ...] | None = None
    log_start: int = 0

    def __post_init__(self) -> None:
        specs = self.cluster.nodes
        if len(self.nodes) != len(specs) or any(
                state.spec.name != spec.name for state, spec in zip(self.nodes, specs,
                                                                    strict=True)):
            raise ValueError("a snapshot's nodes must be its cluster's nodes, in their order")

    @classmethod
    def of(cls, cluster: Cluster, pending: Sequence[PodRef] = (), now_s: float = 0.0, *,
           logged: bool = False) -> ClusterSnapshot:
        """Idle, Ready nodes and `pending` (oldest first)."""
        return cls(now_s, cluster, tuple(NodeSnapshot(spec) for spec in cluster.nodes),
                   tuple(pending), log=() if logged else None)

    # --- ClusterView ---------------------------------------------------------------------

    def job_nodes(self, job_id: str) -> Sequence[str]:
        return tuple(dict.fromkeys(b.node for b in self.bindings if b.pod.job.id == job_id))

    def rtt_ms(self, node_a: str, node_b: str) -> float:
        return 0.0 if node_a == node_b else RTT_MS

    def finished_tasks(self, job_id: str) -> frozenset[str]:
        return dict(self.finished).get(job_id, frozenset())

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self._resources

    def ready_mask(self) -> np.ndarray:
        return self._ready

    def signal_arrays(self) -> np.ndarray:
        return self._signals

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        if self.log is None:
            return 0, None
        now = self.log_start + len(self.log)
        if not self.log_start <= since <= now:
            return now, None
        return now, self.log[since - self.log_start:]

    # The arrays, computed once per snapshot (it never changes) and read-only.

    @cached_property
    def _resources(self) -> tuple[np.ndarray, np.ndarray]:
        allocatable = _read_only(np.array([_row(n.spec.allocatable) for n in self.nodes],
                                          dtype=np.float64).reshape(-1, 3))
        allocated = _read_only(np.array([_row(n.allocated) for n in self.nodes],
                                        dtype=np.float64).reshape(-1, 3))
        return allocatable, allocated

    @cached_property
    def _ready(self) -> np.ndarray:
        return _read_only(np.array([n.ready for n in self.nodes], dtype=np.bool_))

    @cached_property
    def _signals(self) -> np.ndarray:
        return _read_only(signal_columns([n.signals for n in self.nodes]))

    # --- changes: each returns a new snapshot ----------------------------------------------

    def index(self, name: str) -> int:
        for row, node in enumerate(self.nodes):
            if node.spec.name == name:
                return row
        raise ValueError(f"no node {name!r} in the snapshot")

    def with_node(self, name: str, **state: object) -> ClusterSnapshot:
        """The node's state fields (allocated, free_gpus, ready, pods, signals) replaced; a
        spec goes through `with_spec`, which makes a new cluster."""
        if "spec" in state:
            raise ValueError("a node's spec changes through with_spec (a new Cluster)")
        row = self.index(name)
        node = dataclasses.replace(self.nodes[row], **state)  # type: ignore[arg-type]
        nodes = (*self.nodes[:row], node, *self.nodes[row + 1:])
        logged = STATE_FIELDS.intersection(state)
        return dataclasses.replace(self, nodes=nodes, log=self._logged([row] if logged else []))

    def with_signals(self, signals: Sequence[NodeSignals]) -> ClusterSnapshot:
        """A scrape: every node's signals, in node order (not in the change log)."""
        if len(signals) != len(self.nodes):
            raise ValueError("a scrape gives every node its signals")
        nodes = tuple(dataclasses.replace(n, signals=s)
                      for n, s in zip(self.nodes, signals, strict=True))
        return dataclasses.replace(self, nodes=nodes)

    def bound(self, placement: Placement) -> ClusterSnapshot:
        """The snapshot after binding the placement's pod: its requests allocated, its GPUs
        (those named, or the first free ones) taken, its load noted since the last sample."""
        pod = placement.pod
        if pod not in self.pending:
            raise ValueError(f"{pod.name} is not pending")
        row = self.index(placement.node)
        node = self.nodes[row]
        if not node.ready:
            raise ValueError(f"{placement.node} is not ready")
        if not pod.requests.fits_in(node.spec.allocatable - node.allocated):
            raise ValueError(f"{pod.name} does not fit on {placement.node}")
        wanted = pod.requests.gpus
        gpus = (placement.gpus or node.free_gpus[:wanted]) if node.spec.gpus else ()
        if node.spec.gpus and (len(set(gpus)) != wanted or not set(gpus) <= set(node.free_gpus)):
            raise ValueError(f"GPUs {gpus} are not {wanted} distinct free GPUs of "
                             f"{placement.node} (free: {node.free_gpus})")
        signals = dataclasses.replace(
            node.signals, placed_since_sample=node.signals.placed_since_sample + pod.requests)
        changed = dataclasses.replace(
            node, allocated=node.allocated + pod.requests, pods=node.pods + 1, signals=signals,
            free_gpus=tuple(i for i in node.free_gpus if i not in gpus))
        return dataclasses.replace(
            self, nodes=(*self.nodes[:row], changed, *self.nodes[row + 1:]),
            pending=tuple(p for p in self.pending if p is not pod),
            bindings=(*self.bindings, Binding(pod, placement.node, tuple(gpus))),
            log=self._logged([row]))

    def released(self, pod: PodRef) -> ClusterSnapshot:
        """The snapshot after a bound pod ended: its requests and GPUs free again."""
        binding = next((b for b in self.bindings if b.pod is pod), None)
        if binding is None:
            raise ValueError(f"{pod.name} is not bound")
        row = self.index(binding.node)
        node = self.nodes[row]
        changed = dataclasses.replace(node, allocated=node.allocated - pod.requests,
                                      pods=node.pods - 1,
                                      free_gpus=tuple(sorted(node.free_gpus + binding.gpus)))
        return dataclasses.replace(
            self, nodes=(*self.nodes[:row], changed, *self.nodes[row + 1:]),
            bindings=tuple(b for b in self.bindings if b is not binding),
            log=self._logged([row]))

    def created(self, pods: Iterable[PodRef]) -> ClusterSnapshot:
        """New pending pods, after the older ones."""
        return dataclasses.replace(self, pending=(*self.pending, *pods))

    def finished_task(self, job_id: str, task_id: str) -> ClusterSnapshot:
        done = dict(self.finished)
        done[job_id] = done.get(job_id, frozenset()) | {task_id}
        return dataclasses.replace(self, finished=tuple(done.items()))

    def at(self, now_s: float) -> ClusterSnapshot:
        if now_s < self.now_s:
            raise ValueError(f"a view's clock never goes back ({now_s} < {self.now_s})")
        return dataclasses.replace(self, now_s=now_s)

    def with_spec(self, spec: NodeSpec) -> ClusterSnapshot:
        """The node named `spec.name` with a new spec (a cordon, taint, label, capacity): a new
        Cluster, and tokens from before it no longer replay."""
        row = self.index(spec.name)
        return self.with_inventory((*self.cluster.nodes[:row], spec,
                                    *self.cluster.nodes[row + 1:]))

    def with_inventory(self, specs: Sequence[NodeSpec]) -> ClusterSnapshot:
        """A new node inventory (nodes added, removed, changed): a new Cluster. Nodes kept by
        name keep their state; a node with pods bound cannot go."""
        kept = {n.spec.name: n for n in self.nodes}
        names = {spec.name for spec in specs}
        for binding in self.bindings:
            if binding.node not in names:
                raise ValueError(f"node {binding.node!r} still runs {binding.pod.name}")
        nodes = tuple(dataclasses.replace(kept[spec.name], spec=spec) if spec.name in kept
                      else NodeSnapshot(spec) for spec in specs)
        log_start = self.log_start + len(self.log) + 1 if self.log is not None else 0
        return dataclasses.replace(self, cluster=Cluster(self.cluster.name, tuple(specs)),
                                   nodes=nodes, log=None if self.log is None else (),
                                   log_start=log_start)

    def _logged(self, rows: Sequence[int]) -> tuple[int, ...] | None:
        return None if self.log is None else (*self.log, *rows)


def _row(amounts: Resources) -> tuple[float, float, float]:
    return amounts.cpu, float(amounts.memory), float(amounts.gpus)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class ChangingView:
    """One view object whose picture changes in place, as the simulator's and the live views
    do (readers that key caches on the view object see the same one): `change` replaces the
    snapshot it shows with the snapshot after a change."""

    __slots__ = ("snapshot",)

    def __init__(self, snapshot: ClusterSnapshot) -> None:
        self.snapshot = snapshot

    def change(self, step: Callable[[ClusterSnapshot], ClusterSnapshot]) -> None:
        self.snapshot = step(self.snapshot)

    @property
    def now_s(self) -> float:
        return self.snapshot.now_s

    @property
    def cluster(self) -> Cluster:
        return self.snapshot.cluster

    @property
    def nodes(self) -> Sequence[NodeSnapshot]:
        return self.snapshot.nodes

    @property
    def pending(self) -> Sequence[PodRef]:
        return self.snapshot.pending

    def job_nodes(self, job_id: str) -> Sequence[str]:
        return self.snapshot.job_nodes(job_id)

    def rtt_ms(self, node_a: str, node_b: str) -> float:
        return self.snapshot.rtt_ms(node_a, node_b)

    def finished_tasks(self, job_id: str) -> frozenset[str]:
        return self.snapshot.finished_tasks(job_id)

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.snapshot.resource_arrays()

    def ready_mask(self) -> np.ndarray:
        return self.snapshot.ready_mask()

    def signal_arrays(self) -> np.ndarray:
        return self.snapshot.signal_arrays()

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        return self.snapshot.changed_nodes(since)
