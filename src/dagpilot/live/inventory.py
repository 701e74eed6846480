"""Node objects <-> NodeSpec: the one convention for what a Kubernetes Node says about hardware.

Kubernetes records allocatable amounts, labels and taints; the rest of a NodeSpec (PCIe root
complex of each GPU, memory bandwidth, disk, relative CPU speed) travels as `dagpilot.io/`
annotations, which the sandbox writes on its kwok nodes and a real cluster's node agent or
operator sets (docs/LIVE.md). A Node without them gets the documented defaults, never a guess
presented as a measurement: all GPUs on one root complex, the default disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagpilot.clusters.node_conventions import GPU_PRODUCT, MEMORY_BANDWIDTH_PER_CORE, RACK, ZONE
from dagpilot.core import quantity
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import (
    Cluster,
    Disk,
    DiskKind,
    Gpu,
    NodeSpec,
    Resources,
    Taint,
    TaintEffect,
    labels,
)

GPU_RESOURCE = "nvidia.com/gpu"
ROOT_COMPLEXES = "dagpilot.io/gpu-root-complexes"  # "0,0,0,0,1,1,1,1": complex of GPU i
MEMORY_BANDWIDTH = "dagpilot.io/memory-bandwidth"  # bytes/s
CPU_SPEED = "dagpilot.io/cpu-speed"  # relative to the reference core of task runtimes
DISK_KIND = "dagpilot.io/disk-kind"  # a label: nvme | ssd | network | hdd
DISK_IOPS = "dagpilot.io/disk-iops"
DISK_BANDWIDTH = "dagpilot.io/disk-bandwidth"  # bytes/s
DISK_POOL = "dagpilot.io/disk-pool"  # network disks of one pool share its IOPS
PODS_PER_NODE = 110  # the kubelet's default maxPods


def node_manifest(spec: NodeSpec, extra_labels: Mapping[str, str] | None = None,
                  extra_annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The Node object that stands for `spec` (status included: Nodes take it on create)."""
    amounts = {"cpu": quantity.format_milli(round(spec.allocatable.cpu * 1000)),
               "memory": str(spec.allocatable.memory), "pods": str(PODS_PER_NODE)}
    if spec.gpus:
        amounts[GPU_RESOURCE] = str(len(spec.gpus))
    annotations = {MEMORY_BANDWIDTH: str(spec.memory_bandwidth_bytes_s),
                   CPU_SPEED: repr(spec.cpu_speed), DISK_IOPS: str(spec.disk.iops),
                   DISK_BANDWIDTH: str(spec.disk.bandwidth_bytes_s),
                   **({DISK_POOL: spec.disk.shared_pool} if spec.disk.shared_pool else {}),
                   **({ROOT_COMPLEXES: ",".join(str(g.root_complex) for g in spec.gpus)}
                      if spec.gpus else {}),
                   **(extra_annotations or {})}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": spec.name,
                     "labels": {**dict(spec.labels), ZONE: spec.zone, RACK: spec.rack,
                                DISK_KIND: spec.disk.kind.value, **(extra_labels or {})},
                     "annotations": annotations},
        "spec": {"unschedulable": spec.unschedulable,
                 "taints": [{"key": t.key, "value": t.value, "effect": t.effect.value}
                            for t in spec.taints]},
        "status": {"allocatable": amounts, "capacity": dict(amounts)},
    }


def node_spec(node: Mapping[str, Any], source: str = "api") -> NodeSpec:
    """The NodeSpec of a Node object; InvalidInput naming the node and field otherwise."""
    metadata = _mapping(node.get("metadata"), source, "?", "metadata")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidInput(source, "node", "metadata.name", "missing or not a string")
    where = f"node {name}"
    node_labels = _strings(metadata.get("labels"), source, where, "metadata.labels")
    notes = _strings(metadata.get("annotations"), source, where, "metadata.annotations")
    spec = _mapping(node.get("spec") or {}, source, where, "spec")
    status = _mapping(node.get("status") or {}, source, where, "status")
    allocatable = _strings(status.get("allocatable"), source, where, "status.allocatable")
    cpu = _amount(allocatable, "cpu", quantity.cores, source, where)
    memory = _amount(allocatable, "memory", quantity.value, source, where)
    gpu_count = _amount(allocatable, GPU_RESOURCE, quantity.value, source, where)
    model = node_labels.get(GPU_PRODUCT, "gpu")
    gpus = tuple(Gpu(i, model, rc) for i, rc in
                 enumerate(_root_complexes(notes.get(ROOT_COMPLEXES), int(gpu_count),
                                           source, where)))
    return NodeSpec(
        name=name,
        allocatable=Resources(cpu, int(memory), len(gpus), model if gpus else None),
        zone=node_labels.get(ZONE, "zone-a"), rack=node_labels.get(RACK, "rack-0"),
        gpus=gpus, disk=_disk(node_labels, notes, source, where),
        memory_bandwidth_bytes_s=int(_annotation(
            notes, MEMORY_BANDWIDTH, cpu * MEMORY_BANDWIDTH_PER_CORE, source, where)),
        cpu_speed=_annotation(notes, CPU_SPEED, 1.0, source, where),
        labels=labels(node_labels), taints=_taints(spec.get("taints"), source, where),
        unschedulable=bool(spec.get("unschedulable", False)))


def cluster_of(nodes: list[Mapping[str, Any]], name: str = "live",
               source: str = "api") -> Cluster:
    """Nodes in name order (the order `kubectl get nodes` lists them)."""
    specs = sorted((node_spec(node, source) for node in nodes), key=lambda spec: spec.name)
    return Cluster(name, tuple(specs))


def _mapping(value: object, source: str, where: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(source, where, field, "not an object")
    return value


def _strings(value: object, source: str, where: str, field: str) -> dict[str, str]:
    if value is None:
        return {}
    mapping = _mapping(value, source, where, field)
    for key, item in mapping.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise InvalidInput(source, where, f"{field}.{str(key)[:60]}", "not a string")
    return dict(mapping)


def _amount(amounts: dict[str, str], key: str, parse: Any, source: str, where: str) -> float:
    text = amounts.get(key, "0")
    try:
        amount = float(parse(text))
    except ValueError as error:
        raise InvalidInput(source, where, f"status.allocatable.{key}", str(error)) from None
    if amount < 0:
        raise InvalidInput(source, where, f"status.allocatable.{key}", "negative")
    return amount


def _annotation(notes: dict[str, str], key: str, default: float, source: str,
                where: str) -> float:
    text = notes.get(key)
    if text is None:
        return default
    try:
        number = float(text)
    except ValueError:
        number = -1.0
    if not 0 < number < 1e18:
        raise InvalidInput(source, where, f"metadata.annotations.{key}",
                           "not a positive number below 1e18")
    return number


def _root_complexes(text: str | None, count: int, source: str, where: str) -> list[int]:
    if text is None:
        return [0] * count
    field = f"metadata.annotations.{ROOT_COMPLEXES}"
    parts = text.split(",") if text else []
    if len(parts) != count or not all(part.isascii() and part.isdigit() and len(part) < 4
                                      for part in parts):
        raise InvalidInput(source, where, field,
                           f"needs {count} comma-separated root-complex numbers, one per GPU")
    return [int(part) for part in parts]


def _disk(node_labels: dict[str, str], notes: dict[str, str], source: str,
          where: str) -> Disk:
    default = Disk()
    kind_text = node_labels.get(DISK_KIND, default.kind.value)
    try:
        kind = DiskKind(kind_text)
    except ValueError:
        raise InvalidInput(source, where, f"metadata.labels.{DISK_KIND}",
                           "one of nvme, ssd, network, hdd") from None
    return Disk(kind, int(_annotation(notes, DISK_IOPS, default.iops, source, where)),
                int(_annotation(notes, DISK_BANDWIDTH, default.bandwidth_bytes_s, source,
                                where)),
                notes.get(DISK_POOL))


def _taints(value: object, source: str, where: str) -> tuple[Taint, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidInput(source, where, "spec.taints", "not a list")
    taints = []
    for index, item in enumerate(value):
        field = f"spec.taints[{index}]"
        entry = _mapping(item, source, where, field)
        try:
            effect = TaintEffect(entry.get("effect"))
        except ValueError:
            raise InvalidInput(source, where, f"{field}.effect",
                               "one of NoSchedule, PreferNoSchedule, NoExecute") from None
        key, text = entry.get("key"), entry.get("value", "")
        if not isinstance(key, str) or not isinstance(text, str):
            raise InvalidInput(source, where, field, "key and value must be strings")
        taints.append(Taint(key, text, effect))
    return tuple(taints)
