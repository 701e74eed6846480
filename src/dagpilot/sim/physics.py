"""The physical effects: one small pure function per effect, each documented and switchable.

A running pod has a rate (seconds of nominal work done per second) of
    node.cpu_speed / (F_membw x F_io x F_comm),
where each factor is a *time factor* >= 1 of the form
    F = (1 - s) + s x m = 1 + s (m - 1),
`s` being the share of the task's runtime bound by the resource (Task.membw_intensity,
io_intensity, comm_share) and `m` how much slower that share runs now. With an effect switched
off its factor is exactly 1. docs/SIMULATOR.md gives every formula and parameter with the seed
figures of DESIGN.md section 4 they honour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import DiskKind, NodeSpec, Task

# Network distances between two nodes, worst last.
SAME_NODE, SAME_RACK, CROSS_RACK, CROSS_ZONE = 0, 1, 2, 3
# Past this utilisation a storage queue is treated as overloaded (M/M/1 diverges at 1).
RHO_MAX = 0.99


def share_factor(share: float, multiplier: float) -> float:
    """Time factor of work whose share `share` runs `multiplier` times slower: 1 + s (m - 1)."""
    return 1.0 + share * (multiplier - 1.0)


# --- memory bandwidth ------------------------------------------------------------------------

def pod_membw_demand(task: Task, params: PhysicsParameters) -> float:
    """Bytes/s a running pod streams from memory: membw_intensity x busy cores x per-core rate.

    Busy cores are requests.cpu x cpu_intensity; a fully memory-bound core streams
    `membw_per_core_bytes_s` (default 8 GB/s, a STREAM-like single-core figure).
    """
    cores = task.requests.cpu * task.cpu_intensity
    return task.membw_intensity * cores * params.membw_per_core_bytes_s


def mbpi(utilisation: float) -> float:
    """Memory Bandwidth Pressure Index from channel utilisation u: clamp((u - 0.3) / 0.7, 0, 1)."""
    return min(1.0, max(0.0, (utilisation - 0.3) / 0.7))


def membw_multiplier(utilisation: float, params: PhysicsParameters) -> float:
    """How many times slower memory-bound work runs at channel utilisation u (demand/capacity).

    1 up to the knee (75 %); then rising quadratically to the cache-miss factor (3.2x) at the
    utilisation where MBPI reaches 0.85 (u = 0.3 + 0.7 x 0.85 = 0.895); flat from there to
    saturation; past u = 1 the channels are shared, so it grows further in proportion to u.
    """
    knee, factor = params.membw_knee, params.membw_cache_miss_factor
    if utilisation <= knee:
        return 1.0
    full = 0.3 + 0.7 * params.membw_saturation_mbpi
    if utilisation < full:
        x = (utilisation - knee) / (full - knee)
        return 1.0 + (factor - 1.0) * x * x
    return factor * max(1.0, utilisation)


def memory_bandwidth_factor(membw_share: float, utilisation: float, params: PhysicsParameters,
                            on: bool) -> float:
    """Time factor of a pod on a node at channel utilisation u: 1 + s (membw_multiplier(u) - 1)."""
    if not on or membw_share <= 0.0:
        return 1.0
    return share_factor(membw_share, membw_multiplier(utilisation, params))


# --- storage I/O QoS -------------------------------------------------------------------------

def pod_iops(task: Task, runtime_s: float, params: PhysicsParameters) -> float:
    """I/O operations per second a running pod issues.

    From the recorded bytes when there are any: (read + written) / runtime / io_block_bytes
    (256 KiB blocks); otherwise io_intensity x io_pod_iops (a fully I/O-bound pod: 1,000).
    """
    moved = task.read_bytes + task.written_bytes
    if moved > 0 and runtime_s > 0.0:
        return moved / runtime_s / params.io_block_bytes
    return task.io_intensity * params.io_pod_iops


def service_ms(kind: DiskKind, params: PhysicsParameters) -> float:
    """Service time of one I/O on an idle device of this kind."""
    return {DiskKind.NVME: params.io_service_ms_nvme, DiskKind.SSD: params.io_service_ms_ssd,
            DiskKind.NETWORK: params.io_service_ms_network,
            DiskKind.HDD: params.io_service_ms_hdd}[kind]


def io_await_ms(demand_iops: float, iops: float, service: float) -> float:
    """Average I/O await of a device: M/M/1, service / (1 - rho), rho = demand / IOPS.

    Past rho = 0.99 the queue is overloaded: the await is that of rho = 0.99 (100 x service)
    times rho / 0.99, so it keeps growing with the overload instead of diverging.
    """
    rho = demand_iops / iops if iops > 0.0 else math.inf
    capped = min(rho, RHO_MAX)
    return service / (1.0 - capped) * max(1.0, rho / RHO_MAX)


def await_level(await_ms: float, params: PhysicsParameters) -> int:
    """0 healthy (< 10 ms), 1 busy (< 50 ms), 2 moderate congestion (< 200 ms), 3 collapsed."""
    if await_ms < params.io_level1_ms:
        return 0
    if await_ms < params.io_level2_ms:
        return 1
    if await_ms < params.io_level3_ms:
        return 2
    return 3


def io_level_multiplier(level: int, params: PhysicsParameters) -> float:
    """How many times slower I/O-bound work runs at an await level: 1, 1.5, 3, 6."""
    return (1.0, params.io_level1_factor, params.io_level2_factor, params.io_level3_factor)[level]


def storage_io_factor(io_share: float, level: int, params: PhysicsParameters, on: bool) -> float:
    """Time factor of a pod whose disk is at `level`: 1 + s (io_level_multiplier(level) - 1)."""
    if not on or io_share <= 0.0:
        return 1.0
    return share_factor(io_share, io_level_multiplier(level, params))


# --- network ---------------------------------------------------------------------------------

def distance(a: NodeSpec, b: NodeSpec) -> int:
    """SAME_NODE, SAME_RACK, CROSS_RACK or CROSS_ZONE (racks are named within a zone)."""
    if a.name == b.name:
        return SAME_NODE
    if a.zone != b.zone:
        return CROSS_ZONE
    return SAME_RACK if a.rack == b.rack else CROSS_RACK


def group_distance(nodes: int, racks: int, zones: int) -> int:
    """Worst distance between members of a group spread over so many distinct nodes/racks/zones."""
    if zones > 1:
        return CROSS_ZONE
    if racks > 1:
        return CROSS_RACK
    return SAME_RACK if nodes > 1 else SAME_NODE


def rtt_ms(level: int, params: PhysicsParameters) -> float:
    """Round-trip time of a distance: 0.05 ms same node, 0.1 same rack, 0.8 (8x) cross rack,
    2 ms cross zone."""
    return (params.rtt_same_node_ms, params.rtt_same_rack_ms, params.rtt_cross_rack_ms,
            params.rtt_cross_zone_ms)[level]


def network_multiplier(worst_rtt_ms: float, params: PhysicsParameters, on: bool) -> float:
    """How many times slower communication runs when the group's worst pair has this RTT.

    1 + sensitivity x (worst / same-rack RTT - 1), never below 1: communication is mostly
    bandwidth-bound, only its latency-bound part (sensitivity 0.1) follows the RTT, so a
    cross-rack group (8x RTT) communicates 1.7x slower, and placing it in one rack cuts the
    all-reduce time by 1 - 1/1.7 = 41 %.
    """
    if not on:
        return 1.0
    ratio = worst_rtt_ms / params.rtt_same_rack_ms
    return 1.0 + params.network_latency_sensitivity * max(0.0, ratio - 1.0)


# --- GPU PCIe topology -----------------------------------------------------------------------

def pcie_multiplier(node: NodeSpec, gpu_indices: Sequence[int], params: PhysicsParameters,
                    on: bool) -> float:
    """5 when a pod's GPUs span PCIe root complexes (it gets 1/5 of the bandwidth), else 1."""
    if not on or len(gpu_indices) < 2:
        return 1.0
    complexes = {node.gpus[index].root_complex for index in gpu_indices}
    return params.pcie_cross_complex_factor if len(complexes) > 1 else 1.0


def communication_factor(comm_share: float, network: float, pcie: float) -> float:
    """Time factor of a pod's communication share: 1 + s (network x pcie - 1).

    With PCIe alone, (1 - s) + 5 s; an all-reduce with s = 0.425 then runs 2.7x slower across
    root complexes, so same-complex placement cuts it by 63 %.
    """
    if comm_share <= 0.0:
        return 1.0
    return share_factor(comm_share, network * pcie)


# --- memory and page cache -------------------------------------------------------------------

def memory_footprint(task: Task, params: PhysicsParameters, on: bool) -> tuple[int, int]:
    """(working set, page cache) in bytes of one running pod.

    The page cache of a task is page_cache_ratio x io_intensity times its working set, so an
    I/O-bound task shows memory.current up to 1.8x its container_memory_usage_bytes. A recorded
    peak_memory already includes the cache and is split that way; otherwise the working set is
    the request. Off: the request and no cache.
    """
    if not on:
        return task.requests.memory, 0
    cache_share = params.page_cache_ratio * task.io_intensity
    if task.peak_memory is not None:
        working = round(task.peak_memory / (1.0 + cache_share))
        return working, task.peak_memory - working
    return task.requests.memory, round(task.requests.memory * cache_share)


def memory_capacity(node: NodeSpec, params: PhysicsParameters) -> int:
    """Bytes of anonymous memory (working sets) past which the node's kernel OOM-kills a pod."""
    return int(node.allocatable.memory * params.memory_capacity_factor)


def cache_held(working: int, cache: int, capacity: int) -> int:
    """Bytes of page cache the kernel keeps on a node: what its pods want, less what it
    reclaims when working sets and cache together pass the capacity (clean cache pages are
    dropped before anything is killed, as cgroup v2 and the global reclaim do)."""
    room = capacity - working
    return cache if cache <= room else max(0, room)


def page_cache_multiplier(working: int, cache: int, capacity: int,
                          params: PhysicsParameters) -> float:
    """How many times slower I/O-bound work on a node runs when part of its page cache is
    reclaimed: 1 + page_cache_miss_factor x (reclaimed / wanted cache); reads that would have
    hit the cache go to the disk. 1 when nothing is reclaimed."""
    held = cache_held(working, cache, capacity)
    if held >= cache:
        return 1.0
    return 1.0 + params.page_cache_miss_factor * ((cache - held) / cache)


def over_own_limit(task: Task, working: int, on: bool) -> bool:
    """Whether the pod's working set passes its own memory limit (its cgroup kills it)."""
    limits = task.limits
    return on and limits is not None and limits.memory > 0 and working > limits.memory


def oom_victim(candidates: Sequence[tuple[int, int]]) -> int:
    """Index of the pod the kernel kills among (working set, request) pairs, in start order.

    The OOM killer picks the highest badness (its anonymous memory: page cache is reclaimed,
    not counted); Kubernetes sets oom_score_adj = 1000 - 1000 x request / capacity for
    Burstable pods, so badness is 1000 x (use - request) / capacity plus a constant: the pod
    most over its request. Ties go to the most recently started pod.
    """
    best, best_excess = 0, -math.inf
    for index, (use, request) in enumerate(candidates):
        excess = use - request
        if excess >= best_excess:
            best, best_excess = index, excess
    return best
