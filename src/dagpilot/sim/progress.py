"""The fluid progress model: running pods, the load they put on nodes, pools and groups, and
their progress rates.

Each running pod does `rate` seconds of nominal work per second, with
    rate = node.cpu_speed / (F_membw x F_io x F_comm)   (see physics.py).
The multipliers behind the factors belong to the node (memory bandwidth, page cache reclaimed),
its storage pool (await level) and the pod's communication group (worst-pair RTT). When a pod
starts or stops, the multipliers it touches are recomputed; only pods whose multiplier actually
changed get a new rate and a new completion event (older ones are left in the heap and skipped
as stale).
"""

from __future__ import annotations

from typing import TypeVar

from dagpilot.core.config import PhysicsParameters, PhysicsSwitches
from dagpilot.sim import physics
from dagpilot.sim.kernel import Handler, Kernel, Order
from dagpilot.sim.nodes import SimNode, StoragePool
from dagpilot.sim.pod import Phase, PodRun

K = TypeVar("K")


class CommGroup:
    """Running pods of one job that exchange data (a shuffle, an all-reduce)."""

    __slots__ = ("key", "members", "multiplier", "nodes", "racks", "zones")

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.members: dict[int, PodRun] = {}
        self.nodes: dict[str, int] = {}
        self.racks: dict[tuple[str, str], int] = {}
        self.zones: dict[str, int] = {}
        self.multiplier = 1.0


def _count(counter: dict[K, int], key: K, step: int) -> None:
    """Add `step` to a count, dropping keys that reach zero (so len() counts distinct keys)."""
    value = counter.get(key, 0) + step
    if value:
        counter[key] = value
    else:
        del counter[key]


def _groups_of(pods: list[PodRun]) -> list[CommGroup]:
    """The distinct communication groups of some pods, in order."""
    groups: list[CommGroup] = []
    for pod in pods:
        if pod.group is not None and pod.group not in groups:
            groups.append(pod.group)
    return groups


class Progress:
    """Starts and stops pods on nodes and keeps every running pod's completion event current."""

    def __init__(self, kernel: Kernel, params: PhysicsParameters, switches: PhysicsSwitches,
                 on_complete: Handler) -> None:
        self._kernel = kernel
        self._params = params
        self._on = switches
        self._on_complete = on_complete
        self._groups: dict[tuple[str, str], CommGroup] = {}
        self.running = 0
        self.cpu_used = 0.0
        # Nodes and pools whose load changed since the last metrics scrape.
        self.touched_nodes: dict[int, SimNode] = {}
        self.touched_pools: dict[str, StoragePool] = {}
        self._footprints: dict[int, tuple[int, int, float, float]] = {}  # by id(task)

    def start(self, pod: PodRun) -> list[PodRun]:
        """Start a bound pod. Returns the pods the kernel OOM-kills as a result (maybe the pod
        itself), already stopped here; the caller frees their requests."""
        pod.phase = Phase.RUNNING
        pod.started_s = pod.since = self._kernel.now_s
        self._prepare(pod)
        node = pod.node
        self._add(pod)
        victims = self._oom_victims(pod)
        for victim in victims:
            self._remove(victim)
        self._refresh_node(node)
        self._refresh_pool(node.pool)
        if victims:
            for group in _groups_of([pod, *victims]):
                self._refresh_group(group)
        elif pod.group is not None:
            self._refresh_group(pod.group)
        if pod.phase == Phase.RUNNING:
            self._update_rate(pod)
        return victims

    def stop(self, pod: PodRun) -> None:
        """Take a running pod off its node (it finished or was killed) and update the others."""
        self._remove(pod)
        self._refresh_node(pod.node)
        self._refresh_pool(pod.node.pool)
        if pod.group is not None:
            self._refresh_group(pod.group)

    def stop_all(self, node: SimNode) -> list[PodRun]:
        """Take every running pod off a node at once (the node failed); returns them."""
        pods = list(node.running.values())
        for pod in pods:
            self._remove(pod)
        self._refresh_node(node)
        self._refresh_pool(node.pool)
        for group in _groups_of(pods):
            self._refresh_group(group)
        return pods

    def set_iops(self, pool: StoragePool, iops: float, collapsed: bool) -> None:
        """The pool's IOPS changed (drift, collapse, recovery)."""
        pool.iops = iops
        pool.collapsed = collapsed
        self.touched_pools[pool.name] = pool
        self._refresh_pool(pool)

    # --- load bookkeeping ----------------------------------------------------------------

    def _prepare(self, pod: PodRun) -> None:
        """The pod's footprint on its node, computed once when it starts."""
        ref, params, on = pod.ref, self._params, self._on
        task = ref.task
        footprint = self._footprints.get(id(task))  # the run's jobs keep their tasks alive
        if footprint is None:
            working, cache = physics.memory_footprint(task, params, on.memory)
            footprint = (working, cache, physics.pod_membw_demand(task, params),
                         physics.pod_iops(task, task.runtime_s, params))
            self._footprints[id(task)] = footprint
        pod.working, pod.cache, pod.membw, pod.iops = footprint
        if task.instance_runtimes_s:  # the I/O rate follows the instance's own runtime
            pod.iops = physics.pod_iops(task, ref.runtime_s, params)
        if len(pod.gpus) > 1:  # fewer GPUs cannot span PCIe root complexes
            pod.pcie = physics.pcie_multiplier(pod.node.spec, pod.gpus, params, on.gpu_pcie)
        if task.comm_group is not None and pod.comm_share > 0.0:
            key = (pod.ref.job.id, task.comm_group)
            group = self._groups.get(key)
            if group is None:
                group = self._groups[key] = CommGroup(key)
            pod.group = group

    def _add(self, pod: PodRun) -> None:
        node = pod.node
        self.touched_nodes[node.index] = node
        self.touched_pools[node.pool.name] = node.pool
        node.running[pod.ref.uid] = pod
        node.cpu_used += pod.cpu_used
        node.mem_working += pod.working
        node.mem_cache += pod.cache
        node.membw_demand += pod.membw
        node.pool.demand += pod.iops
        self.running += 1
        self.cpu_used += pod.cpu_used
        group = pod.group
        if group is not None:
            group.members[pod.ref.uid] = pod
            spec = node.spec
            _count(group.nodes, spec.name, 1)
            _count(group.racks, (spec.zone, spec.rack), 1)
            _count(group.zones, spec.zone, 1)

    def _remove(self, pod: PodRun) -> None:
        node = pod.node
        self.touched_nodes[node.index] = node
        self.touched_pools[node.pool.name] = node.pool
        del node.running[pod.ref.uid]
        node.cpu_used -= pod.cpu_used
        node.mem_working -= pod.working
        node.mem_cache -= pod.cache
        node.membw_demand -= pod.membw
        node.pool.demand -= pod.iops
        self.running -= 1
        self.cpu_used -= pod.cpu_used
        pod.version += 1  # its completion event is stale now
        pod.phase = Phase.KILLED  # the caller marks a pod that finished as succeeded
        group = pod.group
        if group is not None:
            del group.members[pod.ref.uid]
            spec = node.spec
            _count(group.nodes, spec.name, -1)
            _count(group.racks, (spec.zone, spec.rack), -1)
            _count(group.zones, spec.zone, -1)
            if not group.members:  # a later member starts a fresh group
                del self._groups[group.key]
        if not node.running:  # clear float residue: an empty node has no load
            node.cpu_used = node.membw_demand = 0.0

    def _oom_victims(self, started: PodRun) -> list[PodRun]:
        """Pods killed for memory when `started` starts: over its own limit, then the node's
        OOM killer until actual use fits the node's capacity."""
        if not self._on.memory:
            return []
        node = started.node
        victims: list[PodRun] = []
        if physics.over_own_limit(started.ref.task, started.working, True):
            victims.append(started)
        # Only anonymous memory kills: the page cache is reclaimed first (physics.cache_held).
        used = node.mem_working - sum(v.working for v in victims)
        if used <= node.mem_capacity:
            return victims
        candidates = [p for p in node.running.values() if p not in victims]
        while used > node.mem_capacity and candidates:
            index = physics.oom_victim([(p.working, p.ref.requests.memory) for p in candidates])
            victim = candidates.pop(index)
            victims.append(victim)
            used -= victim.working
        return victims

    # --- multipliers and rates -----------------------------------------------------------

    def _refresh_node(self, node: SimNode) -> None:
        """The node's memory-bandwidth and page-cache multipliers after its load changed."""
        on, params = self._on, self._params
        membw, cache = node.membw_multiplier, node.cache_multiplier
        if on.memory_bandwidth:
            utilisation = node.membw_demand / node.membw_capacity if node.membw_capacity else 0.0
            membw = physics.membw_multiplier(utilisation, params)
        if on.memory:
            cache = physics.page_cache_multiplier(node.mem_working, node.mem_cache,
                                                  node.mem_capacity, params)
        if membw != node.membw_multiplier or cache != node.cache_multiplier:
            node.membw_multiplier, node.cache_multiplier = membw, cache
            for pod in node.running.values():
                self._update_rate(pod)

    def _refresh_pool(self, pool: StoragePool) -> None:
        if not self._on.storage_io:
            return  # the await is then only needed for the metrics, computed at the scrape
        pool.await_ms = physics.io_await_ms(pool.demand, pool.iops, pool.service_ms)
        level = physics.await_level(pool.await_ms, self._params)
        if level != pool.level:
            pool.level = level
            pool.multiplier = physics.io_level_multiplier(level, self._params)
            for node in pool.nodes:
                for pod in node.running.values():
                    self._update_rate(pod)

    def _refresh_group(self, group: CommGroup) -> None:
        level = physics.group_distance(len(group.nodes), len(group.racks), len(group.zones))
        multiplier = physics.network_multiplier(physics.rtt_ms(level, self._params),
                                                self._params, self._on.network)
        if multiplier != group.multiplier:
            group.multiplier = multiplier
            for pod in group.members.values():
                self._update_rate(pod)

    def _update_rate(self, pod: PodRun) -> None:
        """Bring the pod's work up to now, give it its current rate, and reschedule its end."""
        node = pod.node
        group = pod.group
        # physics.share_factor and physics.communication_factor, written out: this runs for
        # every pod whose multiplier changes.
        slowdown = (1.0 + pod.membw_share * (node.membw_multiplier - 1.0)) * (
            1.0 + pod.io_share * (node.pool.multiplier * node.cache_multiplier - 1.0))
        comm_share = pod.comm_share
        if comm_share > 0.0:
            network = group.multiplier if group is not None else 1.0
            slowdown *= 1.0 + comm_share * (network * pod.pcie - 1.0)
        rate = node.speed / slowdown
        if rate == pod.rate:
            return
        kernel = self._kernel
        now = kernel.now_s
        remaining = pod.remaining - pod.rate * (now - pod.since)
        pod.remaining = remaining = remaining if remaining > 0.0 else 0.0
        pod.since = now
        pod.rate = rate
        pod.version = version = pod.version + 1
        kernel.schedule(now + remaining / rate, Order.COMPLETE, self._on_complete, pod, version)

    def remaining_at(self, pod: PodRun, now_s: float) -> float:
        """Work left (nominal seconds) of a running pod at `now_s`."""
        return max(0.0, pod.remaining - pod.rate * (now_s - pod.since))
