"""Figures that describe a cluster: nodes, capacity, zones, racks, GPUs and taints."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dagpilot.core.types import Cluster


def summarize(cluster: Cluster) -> dict[str, Any]:
    gpu_models = Counter(gpu.model for node in cluster.nodes for gpu in node.gpus)
    return {
        "name": cluster.name,
        "nodes": len(cluster.nodes),
        "cpu": cluster.capacity.cpu,
        "memory_bytes": cluster.capacity.memory,
        "gpus": cluster.capacity.gpus,
        "gpu_models": dict(sorted(gpu_models.items())),
        "zones": sorted({node.zone for node in cluster.nodes}),
        "racks": len({(node.zone, node.rack) for node in cluster.nodes}),
        "tainted_nodes": sum(1 for node in cluster.nodes if node.taints),
        "disks": dict(sorted(Counter(node.disk.kind.value for node in cluster.nodes).items())),
    }


def node_groups(cluster: Cluster) -> list[dict[str, Any]]:
    """Nodes grouped by shape (CPU, memory, GPUs, disk), largest group first."""
    shapes: Counter[tuple[float, int, int, str, str]] = Counter()
    for node in cluster.nodes:
        model = node.gpus[0].model if node.gpus else ""
        shapes[(node.allocatable.cpu, node.allocatable.memory, node.allocatable.gpus, model,
                node.disk.kind.value)] += 1
    return [{"count": count, "cpu": cpu, "memory_bytes": memory, "gpus": gpus, "gpu_model": model,
             "disk": disk}
            for (cpu, memory, gpus, model, disk), count in shapes.most_common()]
