"""Built-in clusters (`builtin:default`, `builtin:small`, `builtin:scale-N`); no randomness.

Nodes come in racks of 8 with the same shape pattern: per rack three 16-core and three 32-core
nodes on their zone's shared network storage pool (`netpool-zone-a`, `netpool-zone-b`: a
collapse stays in its zone, so placement can avoid it), one 64-core node and one 8-GPU node
with local NVMe.
GPU nodes alternate between A100 and V100, 4 + 4 GPUs on two PCIe root complexes, and carry
the GPU taint. Racks fill zone-a first, then zone-b. `default` is 48 nodes in 6 racks;
`scale-N` is N nodes of the same pattern (`scale-48` equals `default` but for its name).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from dagpilot.clusters.node_conventions import (
    CHANNELS_PER_SOCKET,
    DDR4_3200_CHANNEL_BYTES_S,
    GPU_TAINT,
    MAX_NODES,
    even_split,
    gpus_over_root_complexes,
    node_labels,
)
from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import SpecError
from dagpilot.core.numbers import ascii_whole
from dagpilot.core.types import Cluster, Disk, DiskKind, NodeSpec, Resources

GIB = 2**30
NODES_PER_RACK = 8
# A zone's network pool is shared by every node of the zone on it; its IOPS are the pool's,
# not per node. `node` names the pool after the zone (POOL_PREFIX + zone).
POOL_PREFIX = "netpool-"
NETWORK_DISK = Disk(DiskKind.NETWORK, iops=30_000, bandwidth_bytes_s=1_000_000_000,
                    shared_pool=POOL_PREFIX)
NVME_DISK = Disk(DiskKind.NVME, iops=400_000, bandwidth_bytes_s=3_000_000_000)


@dataclass(frozen=True)
class Shape:
    """A node model: cores, memory (4-8 GiB per core), GPUs, disk, CPU sockets.

    Each shape is a whole bare-metal server of AMD EPYC 7003 sockets (8 channels of DDR4-3200
    each), so its memory bandwidth is sockets x 204.8 GB/s whatever its core count.
    """

    instance_type: str
    cpu: int
    memory: int
    disk: Disk
    gpus: int = 0
    gpu_model: str | None = None
    sockets: int = 1

    @property
    def memory_bandwidth_bytes_s(self) -> int:
        return self.sockets * CHANNELS_PER_SOCKET * DDR4_3200_CHANNEL_BYTES_S


CPU16 = Shape("c16.m64", 16, 64 * GIB, NETWORK_DISK)  # one EPYC 7313P
CPU32 = Shape("c32.m128", 32, 128 * GIB, NETWORK_DISK)  # one EPYC 7543P
CPU64 = Shape("c64.m256", 64, 256 * GIB, NVME_DISK)  # one EPYC 7763
GPU_A100 = Shape("g8.a100", 64, 512 * GIB, NVME_DISK, 8, "A100", sockets=2)  # two EPYC 7543
GPU_V100 = Shape("g8.v100", 48, 384 * GIB, NVME_DISK, 8, "V100", sockets=2)  # two EPYC 7443
RACK_PATTERN = (CPU16, CPU32, CPU16, CPU64, CPU32, CPU16, CPU32, None)  # None: the GPU node


def read(argument: str, settings: LoaderSettings) -> Cluster:
    """`default`, `small` or `scale-N`."""
    del settings  # built-in clusters are fixed
    if argument == "default":
        return build("default", 48)
    if argument == "small":
        return small()
    if argument.startswith("scale-"):
        count_text = argument.removeprefix("scale-")
        count = ascii_whole(count_text)  # not str.isdigit: "²" passes it, int() refuses it
        if count is None or not 1 <= count <= MAX_NODES:
            raise SpecError(f"builtin:{argument}",
                            f"scale-N needs N from 1 to {MAX_NODES}, got {shown(count_text)}")
        return build(argument, count)
    raise SpecError(f"builtin:{argument}", "unknown built-in cluster; known: default, small, "
                    "scale-N")


def build(name: str, count: int) -> Cluster:
    """`count` nodes of the rack pattern, in racks of 8, the first half of the racks in zone-a."""
    racks = math.ceil(count / NODES_PER_RACK)
    nodes = []
    for index in range(count):
        rack = index // NODES_PER_RACK
        zone = "zone-a" if rack < math.ceil(racks / 2) else "zone-b"
        shape = RACK_PATTERN[index % NODES_PER_RACK] or (GPU_A100 if rack % 2 == 0 else GPU_V100)
        nodes.append(node(f"node-{index:04d}", shape, zone, f"rack-{rack}"))
    return Cluster(name, tuple(nodes))


def small() -> Cluster:
    """Six nodes in two zones, one rack each: every shape once, and both GPU models."""
    shapes = ((CPU16, "zone-a"), (CPU32, "zone-a"), (GPU_A100, "zone-a"),
              (CPU16, "zone-b"), (CPU64, "zone-b"), (GPU_V100, "zone-b"))
    return Cluster("small", tuple(
        node(f"node-{index:04d}", shape, zone, f"rack-{index // 3}")
        for index, (shape, zone) in enumerate(shapes)))


def node(name: str, shape: Shape, zone: str, rack: str) -> NodeSpec:
    gpus = (gpus_over_root_complexes(shape.gpu_model, even_split(shape.gpus))
            if shape.gpu_model else ())
    return NodeSpec(
        name=name,
        allocatable=Resources(float(shape.cpu), shape.memory, shape.gpus, shape.gpu_model),
        zone=zone,
        rack=rack,
        gpus=gpus,
        disk=zone_pool(shape.disk, zone),
        memory_bandwidth_bytes_s=shape.memory_bandwidth_bytes_s,
        labels=node_labels(name, zone, rack, instance_type=shape.instance_type,
                           gpu_model=shape.gpu_model),
        taints=(GPU_TAINT,) if shape.gpus else (),
    )


def zone_pool(disk: Disk, zone: str) -> Disk:
    """A shared disk on its zone's pool (`netpool-<zone>`); a local disk as it is."""
    if disk.shared_pool is None:
        return disk
    return dataclasses.replace(disk, shared_pool=POOL_PREFIX + zone)
