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
from dagpilot.sim.kubelet import preferred_gpus
from dagpilot.sim.nodes import ScrapeClock, SimNode, StoragePool, millicores
from dagpilot.sim.pending import PendingPods
from dagpilot.sim.pod import PodRun
from dagpilot.sim.signal_columns import SignalColumns

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
        self._signals = SignalColumns(self._nodes)
        self._allocatable = np.array(
            [[n.allocatable.cpu, n.allocatable.memory, n.allocatable.gpus] for n in cluster.nodes],
            dtype=np.float64).reshape(len(cluster.nodes), 3)
        self._allocated = np.zeros_like(self._allocatable)
        self._allocatable.setflags(write=False)
        self._allocated_rows = list(self._allocated)  # row views: cheaper item writes
        self._allocated_view = self._allocated.view()  # what readers get: read-only
        self._allocated_view.setflags(write=False)
        self._ready = np.ones(len(self._nodes), dtype=bool)
        self._ready_view = self._ready.view()
        self._ready_view.setflags(write=False)
        self._pending: dict[int, PodRef] = {}
        self._pending_view = PendingPods(self._pending)
        # How many pending pods request each amount, to find the smallest request quickly.
        self._pending_amounts: tuple[dict[int, int], dict[int, int], dict[int, int]] = ({}, {}, {})
        self._smallest: tuple[int, int, int] | None = None  # smallest pending cpu_m, memory, GPUs
        self._witness: SimNode | None = None  # a node that had room for the smallest request
        # After a scan found no room for a request (cpu_m, memory, GPUs, anywhere): placements
        # only take room, so only the nodes freed since (released pods, back to Ready) can
        # have room for it or a larger one.
        self._no_room: tuple[int, int, int, bool] | None = None
        self._freed: dict[int, SimNode] = {}
        self._task_amounts: dict[int, tuple[int, int, int, bool]] = {}  # by id(task)
        # Indices of the nodes whose allocation or readiness changed, in order (changed_nodes);
        # token `_changes_first` is the start of the list.
        self._changes: list[int] = []
        self._changes_first = 0
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
        return self._allocatable, self._allocated_view

    def ready_mask(self) -> np.ndarray:
        return self._ready_view

    def signal_arrays(self) -> np.ndarray:
        return self._signals.arrays()

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        changes, first = self._changes, self._changes_first
        now = first + len(changes)
        if since < first or since > now:
            return now, None
        return now, changes[since - first:]

    # --- changes -------------------------------------------------------------------------

    def node(self, name: str) -> SimNode | None:
        return self._by_name.get(name)

    def add_pending(self, ref: PodRef) -> None:
        self._pending[ref.uid] = ref
        self._pending_view.changed()
        cpu_m, memory, gpus, tolerates = self._amounts(ref)
        cpus, memories, gpu_counts = self._pending_amounts
        cpus[cpu_m] = cpus.get(cpu_m, 0) + 1
        memories[memory] = memories.get(memory, 0) + 1
        gpu_counts[gpus] = gpu_counts.get(gpus, 0) + 1
        smallest = self._smallest
        if smallest is not None and (cpu_m < smallest[0] or memory < smallest[1]
                                     or gpus < smallest[2]):
            self._smallest = None
        if tolerates:
            self._pending_tolerating_not_ready += 1

    def remove_pending(self, uid: int) -> PodRef:
        ref = self._pending.pop(uid)
        self._unqueued(ref, self._amounts(ref))
        return ref

    def _unqueued(self, ref: PodRef, amounts: tuple[int, int, int, bool]) -> None:
        """Take a pod that left the queue out of the counts of pending requests."""
        self._pending_view.changed()
        for counts, amount in zip(self._pending_amounts, amounts[:3], strict=True):
            left = counts[amount] - 1
            if left:
                counts[amount] = left
            else:
                del counts[amount]
                self._smallest = None
        if amounts[3]:
            self._pending_tolerating_not_ready -= 1

    def _amounts(self, ref: PodRef) -> tuple[int, int, int, bool]:
        """(CPU in millicores, memory, GPUs, whether it tolerates NotReady) of the pod's task."""
        task = ref.task
        amounts = self._task_amounts.get(id(task))  # the run's jobs keep their tasks alive
        if amounts is None:
            requests = task.requests
            amounts = (self.millicores(requests.cpu), requests.memory, requests.gpus,
                       bool(task.tolerations) and _tolerates_not_ready(ref))
            self._task_amounts[id(task)] = amounts
        return amounts

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
        cpu_m, memory, _, tolerates = self._amounts(pod)
        if not node.ready and not tolerates:
            raise InvalidPlacement(placement, "the node is NotReady")
        if node.cpu_m + cpu_m > node.cpu_cap_m:
            requests = pod.requests
            raise InvalidPlacement(placement, f"CPU requests of {requests.cpu:g} cores exceed "
                                   f"the {(node.cpu_cap_m - node.cpu_m) / 1000:g} free")
        if node.memory + memory > node.spec.allocatable.memory:
            raise InvalidPlacement(placement, f"memory requests of {memory} bytes exceed "
                                   f"the {node.spec.allocatable.memory - node.memory} free")
        if not placement.gpus and not placement.pod.requests.gpus:
            return pod, node, ()
        return pod, node, self._gpus_for(placement, node)

    def _gpus_for(self, placement: Placement, node: SimNode) -> tuple[int, ...]:
        """The GPUs named by the placement, or the kubelet's preferred allocation (`sim.kubelet`:
        one root complex when possible, as NVIDIA's device plugin picks)."""
        wanted = placement.pod.requests.gpus
        if wanted == 0:
            if placement.gpus:
                raise InvalidPlacement(placement, "GPUs named for a pod that requests none")
            return ()
        free = node.free_gpus
        if len(free) < wanted:
            raise InvalidPlacement(placement, f"{wanted} GPUs requested, {len(free)} free")
        model = placement.pod.requests.gpu_model
        gpus = (tuple(placement.gpus) if placement.gpus
                else preferred_gpus(node.spec, free, wanted, model) or free[:wanted])
        if len(gpus) != wanted or len(set(gpus)) != wanted or not set(gpus) <= set(free):
            raise InvalidPlacement(placement, f"GPUs {gpus} are not {wanted} distinct free GPUs "
                                   f"of the node (free: {free})")
        if model is not None and any(node.spec.gpus[i].model != model for i in gpus):
            raise InvalidPlacement(placement, f"the pod needs {model} GPUs")
        return gpus

    def bind(self, ref: PodRef, node: SimNode, gpus: tuple[int, ...]) -> int:
        """Allocate the pod's requests on the node; returns its CPU in millicores."""
        amounts = self._amounts(ref)
        del self._pending[ref.uid]
        self._unqueued(ref, amounts)
        cpu_m, memory = amounts[0], amounts[1]
        node.cpu_m += cpu_m
        node.memory += memory
        if gpus:
            node.gpus_used += len(gpus)
            for gpu in gpus:
                node.gpu_free[gpu] = False
            self.gpus_allocated += len(gpus)
        node.pods += 1
        node.note_placed(ref.task.requests)
        self._signals.placed(node.index)
        self._placed[node.index] = node
        node.allocation_changed()
        self._store_allocation(node)
        self.bound_pods += 1
        self.cpu_allocated_m += cpu_m
        where = self._job_nodes.get(ref.job.id)
        if where is None:
            where = self._job_nodes[ref.job.id] = {}
        name = node.spec.name
        where[name] = where.get(name, 0) + 1
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
        if self._no_room is not None:
            self._freed[node.index] = node
        where = self._job_nodes[pod.ref.job.id]
        count = where[node.spec.name] - 1
        if count:
            where[node.spec.name] = count
        else:
            del where[node.spec.name]

    def _store_allocation(self, node: SimNode) -> None:
        index = node.index
        self._changed(index)
        row = self._allocated_rows[index]
        row[0] = node.cpu_m / 1000.0
        row[1] = node.memory
        row[2] = node.gpus_used

    def _changed(self, index: int) -> None:
        changes = self._changes
        if len(changes) > 4 * len(self._nodes) + 64:  # old tokens get None: "recompute all"
            self._changes_first += len(changes)
            changes.clear()
        changes.append(index)

    def task_finished(self, job_id: str, task_id: str) -> None:
        self._finished.setdefault(job_id, set()).add(task_id)
        self._finished_view.pop(job_id, None)

    def set_ready(self, node: SimNode, ready: bool) -> None:
        if node.ready != ready:
            node.ready = ready
            self._ready[node.index] = ready
            self._changed(node.index)
            self.nodes_down += -1 if ready else 1
            if ready and self._no_room is not None:
                self._freed[node.index] = node

    def scrape(self, now_s: float, nodes: Iterable[SimNode], pools: Iterable[StoragePool]) -> None:
        """A metrics scrape at `now_s`: `nodes` and `pools` are those whose load changed since
        the previous one (the others would give the same figures)."""
        self._clock.time_s = now_s
        self._signals.scraped()
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
        no_room = self._no_room
        if (no_room is not None and no_room[3] == anywhere and cpu_m >= no_room[0]
                and memory >= no_room[1] and gpus >= no_room[2]):
            # only the nodes freed since the last scan can have room
            return bool(self._freed) and self._freed_room(cpu_m, memory, gpus, anywhere)
        free = self._allocatable - self._allocated
        room = free[:, 0] >= cpu_m / 1000.0 - 1e-9
        room &= free[:, 1] >= memory
        room &= free[:, 2] >= gpus
        if self.nodes_down and not anywhere:
            room &= self._ready
        index = int(room.argmax())
        if not room[index]:
            self._no_room = (cpu_m, memory, gpus, anywhere)
            self._freed.clear()
            return False
        self._no_room = None
        self._witness = self._nodes[index]
        return True

    def _freed_room(self, cpu_m: int, memory: int, gpus: int, anywhere: bool) -> bool:
        """The room scan of `could_place_any` over the nodes freed since the last scan that
        found none: the same comparisons, so the same answer and the same witness (the first
        node with room)."""
        need_cpu, check_ready = cpu_m / 1000.0 - 1e-9, self.nodes_down and not anywhere
        roomy = {}
        for index, node in self._freed.items():
            capacity = node.spec.allocatable
            if ((node.ready or not check_ready) and capacity.cpu - node.cpu_m / 1000.0 >= need_cpu
                    and capacity.memory - node.memory >= memory
                    and capacity.gpus - node.gpus_used >= gpus):
                roomy[index] = node
        self._freed = roomy  # the others have no room for this request or a larger one
        self._no_room = (cpu_m, memory, gpus, anywhere)
        if not roomy:
            return False
        self._witness = roomy[min(roomy)]
        return True
