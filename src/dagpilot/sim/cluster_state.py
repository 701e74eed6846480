"""The simulated cluster as schedulers see it: the ClusterView protocol of `core.view`.

It holds allocation by requests (exact, in millicores and bytes), readiness, pending pods in
creation order, where each job's pods run, finished tasks, and the nodes' sampled signals.
Placements are checked here: a scheduler that binds a pod where it cannot go has a bug, and
gets a clear error instead of a silently overcommitted node.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.errors import DagpilotError
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, NodeSpec, Taint, TaintEffect
from dagpilot.core.view import PodRef
from dagpilot.sim import physics
from dagpilot.sim.kernel import Kernel
from dagpilot.sim.nodes import ScrapeClock, SimNode, StoragePool, millicores
from dagpilot.sim.pending import PendingPods
from dagpilot.sim.pod import PodRun

# What Kubernetes taints a NotReady node with; a pod tolerating it may still be bound there.
NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", TaintEffect.NO_SCHEDULE)


def _tolerates_not_ready(pod: PodRef) -> bool:
    return any(t.tolerates(NOT_READY_TAINT) for t in pod.task.tolerations)


class InvalidPlacement(DagpilotError):
    """A scheduler returned a placement that cannot be bound."""

    def __init__(self, placement: Placement, why: str) -> None:
        self.placement = placement
        self.why = why
        super().__init__(f"invalid placement of pod {placement.pod.name} (uid "
                         f"{placement.pod.uid}) on node {placement.node!r}: {why}")


class ClusterState:
    """The live ClusterView of one simulated run (mutated by the simulation between decisions)."""

    def __init__(self, cluster: Cluster, kernel: Kernel, params: PhysicsParameters) -> None:
        self._cluster = cluster
        self._kernel = kernel
        self._params = params
        self.pools: dict[str, StoragePool] = {}
        self._clock = ScrapeClock()
        self._nodes = tuple(self._make_node(spec, index)
                            for index, spec in enumerate(cluster.nodes))
        self._by_name = {node.spec.name: node for node in self._nodes}
        self._allocatable = np.array(
            [[n.allocatable.cpu, n.allocatable.memory, n.allocatable.gpus] for n in cluster.nodes],
            dtype=np.float64).reshape(len(cluster.nodes), 3)
        self._allocated = np.zeros_like(self._allocatable)
        self._allocatable.setflags(write=False)
        self._ready = np.ones(len(self._nodes), dtype=bool)
        self._pending: dict[int, PodRef] = {}
        self._pending_view = PendingPods(self._pending)
        # How many pending pods request each amount, to find the smallest request quickly.
        self._pending_amounts: tuple[dict[int, int], dict[int, int], dict[int, int]] = ({}, {}, {})
        self._smallest: tuple[int, int, int] | None = None  # smallest pending cpu_m, memory, GPUs
        self._witness: SimNode | None = None  # a node that had room for the smallest request
        self._millicores: dict[float, int] = {}
        self._placed: dict[int, SimNode] = {}  # nodes bound to since the last scrape
        self._pending_tolerating_not_ready = 0
        self._job_nodes: dict[str, dict[str, int]] = {}
        self._finished: dict[str, set[str]] = {}
        self._finished_view: dict[str, frozenset[str]] = {}
        self.bound_pods = 0
        self.nodes_down = 0
        self.cpu_allocated_m = 0
        self.gpus_allocated = 0
        self.cpu_capacity = float(sum(n.allocatable.cpu for n in cluster.nodes))
        self.gpu_capacity = sum(n.allocatable.gpus for n in cluster.nodes)

    def _make_node(self, spec: NodeSpec, index: int) -> SimNode:
        key = spec.disk.shared_pool or f"local:{spec.name}"
        pool = self.pools.get(key)
        if pool is None:
            pool = StoragePool(key, float(spec.disk.iops),
                               physics.service_ms(spec.disk.kind, self._params),
                               shared=spec.disk.shared_pool is not None)
            self.pools[key] = pool
        node = SimNode(spec, index, pool, physics.memory_capacity(spec, self._params),
                       self._clock)
        pool.nodes.append(node)
        return node

    # --- ClusterView ---------------------------------------------------------------------

    @property
    def now_s(self) -> float:
        return self._kernel.now_s

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    @property
    def nodes(self) -> Sequence[SimNode]:
        return self._nodes

    @property
    def pending(self) -> Sequence[PodRef]:
        return self._pending_view

    def job_nodes(self, job_id: str) -> Sequence[str]:
        return tuple(self._job_nodes.get(job_id, ()))

    def rtt_ms(self, node_a: str, node_b: str) -> float:
        level = physics.distance(self._by_name[node_a].spec, self._by_name[node_b].spec)
        return physics.rtt_ms(level, self._params)

    def finished_tasks(self, job_id: str) -> frozenset[str]:
        view = self._finished_view.get(job_id)
        if view is None:
            view = frozenset(self._finished.get(job_id, ()))
            self._finished_view[job_id] = view
        return view

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self._allocatable, self._allocated

    # --- changes -------------------------------------------------------------------------

    def node(self, name: str) -> SimNode | None:
        return self._by_name.get(name)

    def add_pending(self, ref: PodRef) -> None:
        self._pending[ref.uid] = ref
        self._pending_view.changed()
        amounts = self._amounts(ref)
        for counts, amount in zip(self._pending_amounts, amounts, strict=True):
            counts[amount] = counts.get(amount, 0) + 1
        smallest = self._smallest
        if smallest is not None and (amounts[0] < smallest[0] or amounts[1] < smallest[1]
                                     or amounts[2] < smallest[2]):
            self._smallest = None
        if ref.task.tolerations and _tolerates_not_ready(ref):
            self._pending_tolerating_not_ready += 1

    def remove_pending(self, uid: int) -> PodRef:
        ref = self._pending.pop(uid)
        self._pending_view.changed()
        for counts, amount in zip(self._pending_amounts, self._amounts(ref), strict=True):
            left = counts[amount] - 1
            if left:
                counts[amount] = left
            else:
                del counts[amount]
                self._smallest = None
        if ref.task.tolerations and _tolerates_not_ready(ref):
            self._pending_tolerating_not_ready -= 1
        return ref

    def _amounts(self, ref: PodRef) -> tuple[int, int, int]:
        requests = ref.task.requests
        return self.millicores(requests.cpu), requests.memory, requests.gpus

    def millicores(self, cpu: float) -> int:
        cpu_m = self._millicores.get(cpu)
        if cpu_m is None:
            cpu_m = self._millicores[cpu] = millicores(cpu)
        return cpu_m

    def pending_count(self) -> int:
        return len(self._pending)

    def target(self, placement: Placement) -> tuple[PodRef, SimNode, tuple[int, ...]]:
        """The pending pod, node and GPUs a placement binds; InvalidPlacement when it cannot be
        bound (the pod is not pending, the node is unknown or NotReady and the pod does not
        tolerate that, requests do not fit, the GPUs are not free or of another model)."""
        pod = self._pending.get(placement.pod.uid)
        if pod is None:
            raise InvalidPlacement(placement, "the pod is not pending")
        node = self._by_name.get(placement.node)
        if node is None:
            raise InvalidPlacement(placement, "no such node")
        if not node.ready and not _tolerates_not_ready(pod):
            raise InvalidPlacement(placement, "the node is NotReady")
        requests = pod.requests
        if node.cpu_m + self.millicores(requests.cpu) > node.cpu_cap_m:
            raise InvalidPlacement(placement, f"CPU requests of {requests.cpu:g} cores exceed "
                                   f"the {(node.cpu_cap_m - node.cpu_m) / 1000:g} free")
        if node.memory + requests.memory > node.spec.allocatable.memory:
            raise InvalidPlacement(placement, f"memory requests of {requests.memory} bytes exceed "
                                   f"the {node.spec.allocatable.memory - node.memory} free")
        return pod, node, self._gpus_for(placement, node)

    def _gpus_for(self, placement: Placement, node: SimNode) -> tuple[int, ...]:
        """The GPUs named by the placement, or the first free ones (the device plugin's pick)."""
        wanted = placement.pod.requests.gpus
        if wanted == 0:
            if placement.gpus:
                raise InvalidPlacement(placement, "GPUs named for a pod that requests none")
            return ()
        free = node.free_gpus
        if len(free) < wanted:
            raise InvalidPlacement(placement, f"{wanted} GPUs requested, {len(free)} free")
        gpus = tuple(placement.gpus) if placement.gpus else free[:wanted]
        if len(gpus) != wanted or len(set(gpus)) != wanted or not set(gpus) <= set(free):
            raise InvalidPlacement(placement, f"GPUs {gpus} are not {wanted} distinct free GPUs "
                                   f"of the node (free: {free})")
        model = placement.pod.requests.gpu_model
        if model is not None and any(node.spec.gpus[i].model != model for i in gpus):
            raise InvalidPlacement(placement, f"the pod needs {model} GPUs")
        return gpus

    def bind(self, ref: PodRef, node: SimNode, gpus: tuple[int, ...]) -> int:
        """Allocate the pod's requests on the node; returns its CPU in millicores."""
        self.remove_pending(ref.uid)
        requests = ref.requests
        cpu_m = self.millicores(requests.cpu)
        node.cpu_m += cpu_m
        node.memory += requests.memory
        node.gpus_used += len(gpus)
        for gpu in gpus:
            node.gpu_free[gpu] = False
        node.pods += 1
        node.note_placed(requests)
        self._placed[node.index] = node
        node.allocation_changed()
        self._store_allocation(node)
        self.bound_pods += 1
        self.cpu_allocated_m += cpu_m
        self.gpus_allocated += len(gpus)
        where = self._job_nodes.setdefault(ref.job.id, {})
        where[node.spec.name] = where.get(node.spec.name, 0) + 1
        return cpu_m

    def release(self, pod: PodRun) -> None:
        """Free a bound pod's requests (it finished, or was killed)."""
        node = pod.node
        node.cpu_m -= pod.cpu_m
        node.memory -= pod.ref.requests.memory
        node.gpus_used -= len(pod.gpus)
        for gpu in pod.gpus:
            node.gpu_free[gpu] = True
        node.pods -= 1
        node.allocation_changed()
        self._store_allocation(node)
        self.bound_pods -= 1
        self.cpu_allocated_m -= pod.cpu_m
        self.gpus_allocated -= len(pod.gpus)
        self._witness = node  # freed capacity: a likely home for the next pending pod
        where = self._job_nodes[pod.ref.job.id]
        count = where[node.spec.name] - 1
        if count:
            where[node.spec.name] = count
        else:
            del where[node.spec.name]

    def _store_allocation(self, node: SimNode) -> None:
        index, allocated = node.index, self._allocated
        allocated[index, 0] = node.cpu_m / 1000.0
        allocated[index, 1] = node.memory
        allocated[index, 2] = node.gpus_used

    def task_finished(self, job_id: str, task_id: str) -> None:
        self._finished.setdefault(job_id, set()).add(task_id)
        self._finished_view.pop(job_id, None)

    def set_ready(self, node: SimNode, ready: bool) -> None:
        if node.ready != ready:
            node.ready = ready
            self._ready[node.index] = ready
            self.nodes_down += -1 if ready else 1

    def scrape(self, now_s: float, nodes: Iterable[SimNode], pools: Iterable[StoragePool]) -> None:
        """A metrics scrape at `now_s`: `nodes` and `pools` are those whose load changed since
        the previous one (the others would give the same figures)."""
        self._clock.time_s = now_s
        for node in nodes:
            node.scrape()
        for pool in pools:
            pool.scraped_await_ms = physics.io_await_ms(pool.demand, pool.iops, pool.service_ms)
        for node in self._placed.values():
            node.clear_placed()
        self._placed.clear()

    def could_place_any(self) -> bool:
        """A quick necessary condition for a decision point: some ready node (or any node, when
        a pending pod tolerates NotReady) has room for the smallest pending request in every
        resource. A scheduler could not place anything otherwise, whatever its policy."""
        if not self._pending:
            return False
        smallest = self._smallest
        if smallest is None:
            smallest = self._smallest = (min(self._pending_amounts[0]),
                                         min(self._pending_amounts[1]),
                                         min(self._pending_amounts[2]))
        cpu_m, memory, gpus = smallest
        anywhere = self._pending_tolerating_not_ready > 0  # NotReady nodes count too
        node = self._witness  # checking one likely node first saves a scan of them all
        if (node is not None and (node.ready or anywhere) and node.cpu_cap_m - node.cpu_m >= cpu_m
                and node.spec.allocatable.memory - node.memory >= memory
                and len(node.gpu_free) - node.gpus_used >= gpus):
            return True
        free = self._allocatable - self._allocated
        room = (free[:, 0] >= cpu_m / 1000.0 - 1e-9) & (free[:, 1] >= memory) & (free[:, 2] >= gpus)
        if self.nodes_down and not anywhere:
            room &= self._ready
        index = int(room.argmax())
        if not room[index]:
            return False
        self._witness = self._nodes[index]
        return True
