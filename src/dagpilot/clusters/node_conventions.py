"""Conventions every cluster source shares: well-known labels, the GPU taint, GPU topology.

GPU nodes carry the `nvidia.com/gpu=present:NoSchedule` taint (as the NVIDIA GPU operator
docs recommend), so only pods that tolerate it land there, and the `nvidia.com/gpu.product`
label holds the GPU model, the same string as `Gpu.model` and `Resources.gpu_model`.
"""

from __future__ import annotations

from dagpilot.core.numbers import MAX_BYTES, MAX_CORES
from dagpilot.core.types import Gpu, Labels, Taint, TaintEffect, labels

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RACK = "topology.dagpilot.io/rack"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_TAINT = Taint("nvidia.com/gpu", "present", TaintEffect.NO_SCHEDULE)
# JEDEC DDR4-3200: 3,200 MT/s x 8 bytes per transfer = 25.6 GB/s per channel; an AMD EPYC 7003
# socket has 8 channels (204.8 GB/s). Per core of a 64-core socket, what a source that states
# no bandwidth gets: a node is taken as its cores' share of such a socket (docs/SIMULATOR.md).
DDR4_3200_CHANNEL_BYTES_S = 3_200_000_000 * 8
CHANNELS_PER_SOCKET = 8
MEMORY_BANDWIDTH_PER_CORE = CHANNELS_PER_SOCKET * DDR4_3200_CHANNEL_BYTES_S // 64  # 3.2 GB/s

# Ceilings every source holds a cluster to: far beyond real machines, low enough that a typo
# (cpu: 1e300, gpus.count: 10**9) is refused before it allocates, overflows or reaches the native
# core's int64 tables.
MAX_NODES = 100_000  # nodes in one cluster (kube-scheduler is tested at 5,000)
MAX_NODE_CPU = MAX_CORES  # 1,048,576 cores; times MEMORY_BANDWIDTH_PER_CORE it is still exact
MAX_NODE_BYTES = MAX_BYTES  # 8 PiB: memory, and bandwidths in bytes per second
MAX_NODE_GPUS = 64  # the largest single servers hold 8 to 16
MAX_CPU_SPEED = 1000.0  # relative to the reference core


def gpus_over_root_complexes(model: str, per_complex: tuple[int, ...]) -> tuple[Gpu, ...]:
    """GPUs numbered from 0, the first `per_complex[0]` on root complex 0, and so on."""
    return tuple(Gpu(index, model, complex_)
                 for index, complex_ in enumerate(
                     c for c, count in enumerate(per_complex) for _ in range(count)))


def even_split(count: int, complexes: int = 2) -> tuple[int, ...]:
    """GPUs per root complex when `count` GPUs are spread evenly (earlier complexes get more)."""
    complexes = max(1, min(complexes, count))
    return tuple(count // complexes + (1 if c < count % complexes else 0)
                 for c in range(complexes))


def node_labels(name: str, zone: str, rack: str, *, instance_type: str | None = None,
                gpu_model: str | None = None, extra: dict[str, str] | None = None) -> Labels:
    """The well-known labels of a node, then `extra` (which may override them)."""
    mapping = {HOSTNAME: name, ZONE: zone, RACK: rack}
    if instance_type:
        mapping[INSTANCE_TYPE] = instance_type
    if gpu_model:
        mapping[GPU_PRODUCT] = gpu_model
    mapping.update(extra or {})
    return labels(mapping)
