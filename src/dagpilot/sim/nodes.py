"""A simulated node (the NodeState of the view, plus its live load) and a storage pool."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dagpilot.core.types import NodeSpec, Resources
from dagpilot.core.view import NodeSignals
from dagpilot.sim import physics

if TYPE_CHECKING:
    from dagpilot.sim.pod import PodRun


def millicores(cpu: float) -> int:
    """CPU in millicores, rounded up as Kubernetes does, so sums of requests are exact."""
    return math.ceil(round(cpu * 1000.0, 6))


class ScrapeClock:
    """When the metrics were last scraped: shared by the nodes of one run."""

    __slots__ = ("time_s",)

    def __init__(self) -> None:
        self.time_s = 0.0


class StoragePool:
    """The IOPS shared by the nodes of one pool (a node's local disk is a pool of its own)."""

    __slots__ = ("await_ms", "collapsed", "demand", "iops", "level", "multiplier", "name",
                 "nodes", "nominal_iops", "scraped_await_ms", "service_ms", "shared")

    def __init__(self, name: str, nominal_iops: float, service_ms: float, shared: bool) -> None:
        self.name = name
        self.shared = shared  # network storage whose IOPS drift and can collapse
        self.nominal_iops = nominal_iops
        self.iops = nominal_iops
        self.service_ms = service_ms
        self.collapsed = False
        self.demand = 0.0
        self.await_ms = service_ms
        self.scraped_await_ms = service_ms
        self.level = 0
        self.multiplier = 1.0
        self.nodes: list[SimNode] = []


EMPTY = Resources()


class SimNode:
    """A node as schedulers see it (spec, allocation, readiness, sampled signals), and the load
    that its running pods put on it now (which schedulers only see through the samples)."""

    __slots__ = ("_allocated", "_clock", "_free_gpus", "_placed", "_signals", "bound",
                 "cache_multiplier", "cpu_cap_m", "cpu_m", "cpu_used", "gpu_free", "gpus_used",
                 "index", "mem_cache", "mem_capacity", "mem_working", "membw_capacity",
                 "membw_demand", "membw_multiplier", "memory", "pods", "pool", "ready",
                 "running", "scraped", "spec", "speed", "waiting")

    def __init__(self, spec: NodeSpec, index: int, pool: StoragePool, mem_capacity: int,
                 clock: ScrapeClock) -> None:
        self.spec = spec
        self.index = index
        self.pool = pool
        self.ready = True
        self.pods = 0
        self.cpu_cap_m = millicores(spec.allocatable.cpu)
        self.cpu_m = 0
        self.memory = 0
        self.gpus_used = 0
        self.gpu_free = [True] * len(spec.gpus)
        self.bound: dict[int, PodRun] = {}  # uid -> pod, starting or running
        self.running: dict[int, PodRun] = {}  # uid -> pod, in start order
        self.waiting: list[PodRun] = []  # bound while NotReady: they start when it is back
        self.speed = spec.cpu_speed
        self.cpu_used = 0.0
        self.mem_working = 0
        self.mem_cache = 0
        self.mem_capacity = mem_capacity
        self.membw_demand = 0.0
        self.membw_capacity = float(spec.memory_bandwidth_bytes_s)
        self.membw_multiplier = 1.0
        self.cache_multiplier = 1.0  # I/O slowdown of the page cache reclaimed under pressure
        self._placed: list[Resources] = []  # requests bound since the last scrape, in order
        # (cpu used, memory used, memory.current, membw utilisation) at the last scrape
        self.scraped: tuple[float, int, int, float] = (0.0, 0, 0, 0.0)
        self._clock = clock
        self._allocated: Resources | None = None
        self._free_gpus: tuple[int, ...] | None = None
        self._signals: NodeSignals | None = None

    @property
    def allocated(self) -> Resources:
        if self._allocated is None:
            self._allocated = Resources(self.cpu_m / 1000.0, self.memory, self.gpus_used,
                                        self.spec.allocatable.gpu_model)
        return self._allocated

    @property
    def free_gpus(self) -> tuple[int, ...]:
        if self._free_gpus is None:
            self._free_gpus = tuple(i for i, free in enumerate(self.gpu_free) if free)
        return self._free_gpus

    @property
    def signals(self) -> NodeSignals:
        signals, sampled_s = self._signals, self._clock.time_s
        if signals is None or signals.sampled_s != sampled_s:
            cpu, used, current, membw = self.scraped
            signals = self._signals = NodeSignals(sampled_s, cpu, used, current, membw,
                                                  self.pool.scraped_await_ms, self.placed_since)
        return signals

    @property
    def placed_since(self) -> Resources:
        """Requests bound since the last scrape (summed when read: most are never read)."""
        total = EMPTY
        for requests in self._placed:
            total = total + requests
        return total

    def allocation_changed(self) -> None:
        self._allocated = None
        self._free_gpus = None

    def note_placed(self, requests: Resources) -> None:
        """A pod was bound since the last scrape: its load is not in the metrics yet."""
        self._placed.append(requests)
        self._signals = None

    def scrape(self) -> None:
        """Sample the live load (only needed when it changed since the last scrape)."""
        held = physics.cache_held(self.mem_working, self.mem_cache, self.mem_capacity)
        self.scraped = (self.cpu_used, self.mem_working, self.mem_working + held,
                        self.membw_demand / self.membw_capacity if self.membw_capacity else 0.0)

    def clear_placed(self) -> None:
        self._placed.clear()
        self._signals = None
