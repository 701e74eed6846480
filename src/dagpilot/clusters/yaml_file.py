"""Clusters described in YAML (`yaml:PATH`); the schema is in docs/CLUSTERS.md.

A file names the cluster and lists node groups. A group gives node fields shared by its nodes
and either `count` (nodes NAME-0, NAME-1, ...) or `nodes` (explicit nodes, each with a `name`
and any group field to override). Every problem is an InvalidInput naming the file, the group
or node, and the field. `to_yaml` writes any cluster back in this schema (explicit nodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from dagpilot.clusters.node_conventions import (
    HOSTNAME,
    MAX_CPU_SPEED,
    MAX_NODE_BYTES,
    MAX_NODE_CPU,
    MAX_NODE_GPUS,
    MAX_NODES,
    MEMORY_BANDWIDTH_PER_CORE,
    even_split,
    gpus_over_root_complexes,
    node_labels,
)
from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.numbers import MAX_EXACT, problem
from dagpilot.core.reading.yaml_documents import read_yaml_documents
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
from dagpilot.core.units import cpu_cores, memory_bytes, quantity

T = TypeVar("T")
N = TypeVar("N", int, float)
TOP_KEYS = {"name", "node_groups"}
NODE_KEYS = {"name", "zone", "rack", "cpu", "memory", "memory_bandwidth", "cpu_speed",
             "instance_type", "gpus", "disk", "labels", "taints", "unschedulable"}
GROUP_KEYS = NODE_KEYS | {"count", "nodes"}
GPU_KEYS = {"model", "count", "root_complexes"}
DISK_KEYS = {"kind", "iops", "bandwidth", "shared_pool"}
TAINT_KEYS = {"key", "value", "effect"}


def read(argument: str, settings: LoaderSettings) -> Cluster:
    """The cluster of the YAML file at `argument`."""
    del settings  # a YAML cluster states everything it needs
    documents = read_yaml_documents(argument)  # bounded: size, depth, aliases
    if len(documents) > 1:
        raise InvalidInput(argument, "document 2", "",
                           f"a cluster file holds one YAML document, this one {len(documents)}")
    return parse(documents[0] if documents else None, argument, Path(argument).stem)


def parse(document: Any, file: str, default_name: str = "cluster") -> Cluster:
    """The cluster of a loaded YAML document; `file` names it in errors."""
    top = _Where(file, "top level")
    mapping = top.mapping(document, "", TOP_KEYS)
    groups = mapping.get("node_groups")
    if not isinstance(groups, list) or not groups:
        raise top.error("node_groups", "expected a non-empty list of node groups")
    _check_node_total(groups, file)
    placed: list[tuple[NodeSpec, _Where]] = []
    for position, group in enumerate(groups):
        placed.extend(_group_nodes(group, _Where(file, f"node_groups[{position}]")))
    seen: set[str] = set()
    for node, where in placed:
        if node.name in seen:
            raise where.error("name", f"node name {shown(node.name)} is used twice")
        seen.add(node.name)
    name = top.typed(mapping.get("name", default_name), "name", str)
    return Cluster(name, tuple(node for node, _ in placed))


@dataclass(frozen=True)
class _Where:
    """A place in the file, to name in errors."""

    file: str
    record: str

    def error(self, field: str, message: str) -> InvalidInput:
        return InvalidInput(self.file, self.record, field, message)

    def inside(self, suffix: str) -> _Where:
        return _Where(self.file, f"{self.record}{suffix}")

    def mapping(self, value: Any, field: str, allowed: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(field, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(str(key) for key in value if key not in allowed)
        if unknown:
            prefix = f"{field}." if field else ""
            raise self.error(prefix + unknown[0], "unknown key; known: "
                             + ", ".join(sorted(allowed)))
        return value

    def typed(self, value: Any, field: str, kind: type[T]) -> T:
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise self.error(field, f"expected {kind.__name__}, got {shown(value)}")
        return value

    def count(self, value: Any, field: str, minimum: int, maximum: int) -> int:
        """A whole number in [minimum, maximum], checked before anything is made of it."""
        number = self.typed(value, field, int)
        reason = problem(number, minimum, maximum)
        if reason is not None:
            raise self.error(field, reason)
        return number

    def number(self, value: Any, field: str, parse: Callable[[Any], N],
               minimum: float = 0.0, maximum: float = MAX_EXACT) -> N:
        """A finite quantity ("16", "500m", "64Gi", 30000) from `minimum` to `maximum`."""
        try:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ValueError(f"expected a quantity, got {shown(value)}")
            amount = quantity(value)  # finite, or a ValueError
        except ValueError as error:
            raise self.error(field, str(error)) from error
        if not amount >= minimum:
            raise self.error(field, f"must be at least {minimum:g}, got {shown(value)}")
        if amount > maximum:
            raise self.error(field, f"{amount:g} is beyond the limit {maximum:g}")
        return parse(value)


def _check_node_total(groups: list[Any], file: str) -> None:
    """At most MAX_NODES nodes in all, counted from what the groups declare, before any node
    is made (the groups' own fields are checked as they are read)."""
    total = 0
    for position, group in enumerate(groups):
        if not isinstance(group, dict):
            continue
        count, nodes = group.get("count"), group.get("nodes")
        total += count if isinstance(count, int) and count > 0 else (
            len(nodes) if isinstance(nodes, list) else 0)
        if total > MAX_NODES:
            name = group.get("name")
            where = _Where(file, f"node_groups[{position}]"
                           + (f" ({name})" if isinstance(name, str) else ""))
            raise where.error("count" if "count" in group else "nodes",
                              f"the cluster would have more than {MAX_NODES:,} nodes")


def _group_nodes(group: Any, where: _Where) -> list[tuple[NodeSpec, _Where]]:
    """The group's nodes, each with its place in the file."""
    fields = where.mapping(group, "", GROUP_KEYS)
    name = where.typed(fields.get("name"), "name", str)
    where = where.inside(f" ({name})")
    shared = {key: value for key, value in fields.items() if key not in ("count", "nodes")}
    if ("count" in fields) == ("nodes" in fields):
        raise where.error("count", "give exactly one of count and nodes")
    if "count" in fields:
        count = where.count(fields["count"], "count", 1, MAX_NODES)
        first = _node({**shared, "name": f"{name}-0"}, where)  # read and checked once
        own_hostname = HOSTNAME in _labels(shared, where)
        return [(_renamed(first, f"{name}-{index}", own_hostname), where)
                for index in range(count)]
    explicit = fields["nodes"]
    if not isinstance(explicit, list) or not explicit:
        raise where.error("nodes", "expected a non-empty list of nodes")
    nodes = []
    for position, node in enumerate(explicit):
        place = where.inside(f".nodes[{position}]")
        own = place.mapping(node, "", NODE_KEYS)
        node_name = place.typed(own.get("name"), "name", str)
        merged_labels = {**_labels(shared, where), **_labels(own, place)}
        merged = {**shared, **own, "labels": merged_labels}
        place = place.inside(f" ({node_name})")
        nodes.append((_node(merged, place), place))
    return nodes


def _renamed(node: NodeSpec, name: str, own_hostname: bool) -> NodeSpec:
    """A copy of a group's node under another name; its hostname label follows the name
    unless the group's labels set one of their own."""
    if own_hostname:
        return dataclasses.replace(node, name=name)
    renamed = {**dict(node.labels), HOSTNAME: name}
    return dataclasses.replace(node, name=name, labels=labels(renamed))


def _labels(fields: dict[str, Any], where: _Where) -> dict[Any, Any]:
    """The `labels` mapping of a group or node ({} when absent), before its entries are read."""
    value = fields.get("labels") or {}
    if not isinstance(value, dict):
        raise where.error("labels", "expected a mapping of strings")
    return value


def _node(fields: dict[str, Any], where: _Where) -> NodeSpec:
    name = where.typed(fields["name"], "name", str)
    for required in ("cpu", "memory"):
        if required not in fields:
            raise where.error(required, "missing")
    cpu = where.number(fields["cpu"], "cpu", cpu_cores, minimum=0.001, maximum=MAX_NODE_CPU)
    memory = where.number(fields["memory"], "memory", memory_bytes, minimum=1,
                          maximum=MAX_NODE_BYTES)
    zone = where.typed(fields.get("zone", "zone-a"), "zone", str)
    rack = where.typed(fields.get("rack", "rack-0"), "rack", str)
    gpus = _gpus(fields.get("gpus"), where)
    model = gpus[0].model if gpus else None
    instance_type = fields.get("instance_type")
    if instance_type is not None:
        where.typed(instance_type, "instance_type", str)
    extra = _string_map(fields.get("labels") or {}, where, "labels")
    return NodeSpec(
        name=name,
        allocatable=Resources(cpu, memory, len(gpus), model),
        zone=zone,
        rack=rack,
        gpus=gpus,
        disk=_disk(fields.get("disk"), where),
        memory_bandwidth_bytes_s=where.number(
            fields.get("memory_bandwidth", cpu * MEMORY_BANDWIDTH_PER_CORE), "memory_bandwidth",
            _whole, minimum=1, maximum=MAX_NODE_BYTES),
        cpu_speed=where.number(fields.get("cpu_speed", 1.0), "cpu_speed", quantity,
                               minimum=1e-6, maximum=MAX_CPU_SPEED),
        labels=node_labels(name, zone, rack, instance_type=instance_type, gpu_model=model,
                           extra=extra),
        taints=_taints(fields.get("taints") or [], where),
        unschedulable=where.typed(fields.get("unschedulable", False), "unschedulable", bool),
    )


def _gpus(value: Any, where: _Where) -> tuple[Gpu, ...]:
    if value is None:
        return ()
    fields = where.mapping(value, "gpus", GPU_KEYS)
    model = where.typed(fields.get("model"), "gpus.model", str)
    count = where.count(fields.get("count"), "gpus.count", 0, MAX_NODE_GPUS)
    complexes = fields.get("root_complexes", 1)
    if isinstance(complexes, list):
        if len(complexes) > MAX_NODE_GPUS:
            raise where.error("gpus.root_complexes", f"{len(complexes)} root complexes, beyond "
                              f"the limit {MAX_NODE_GPUS}")
        split = tuple(where.count(c, "gpus.root_complexes", 0, MAX_NODE_GPUS)
                      for c in complexes)
        if sum(split) != count:
            raise where.error("gpus.root_complexes",
                              f"GPUs per root complex {list(split)} do not add up to {count}")
    else:
        split = even_split(count, where.count(complexes, "gpus.root_complexes", 1,
                                              MAX_NODE_GPUS))
    return gpus_over_root_complexes(model, split)


def _disk(value: Any, where: _Where) -> Disk:
    if value is None:
        return Disk()
    fields = where.mapping(value, "disk", DISK_KEYS)
    kind_text = fields.get("kind", Disk().kind.value)
    kinds = {kind.value: kind for kind in DiskKind}
    if not isinstance(kind_text, str) or kind_text not in kinds:
        raise where.error("disk.kind",
                          f"expected one of {', '.join(kinds)}, got {shown(kind_text)}")
    pool = fields.get("shared_pool")
    return Disk(
        kinds[kind_text],
        iops=where.number(fields.get("iops", Disk().iops), "disk.iops", _whole, minimum=1),
        bandwidth_bytes_s=where.number(fields.get("bandwidth", Disk().bandwidth_bytes_s),
                                       "disk.bandwidth", _whole, minimum=1,
                                       maximum=MAX_NODE_BYTES),
        shared_pool=None if pool is None else where.typed(pool, "disk.shared_pool", str),
    )


def _taints(value: Any, where: _Where) -> tuple[Taint, ...]:
    if not isinstance(value, list):
        raise where.error("taints", "expected a list of taints")
    effects = {effect.value: effect for effect in TaintEffect}
    taints = []
    for position, item in enumerate(value):
        field = f"taints[{position}]"
        fields = where.mapping(item, field, TAINT_KEYS)
        effect = fields.get("effect", "NoSchedule")
        if not isinstance(effect, str) or effect not in effects:
            raise where.error(f"{field}.effect",
                              f"expected one of {', '.join(effects)}, got {shown(effect)}")
        taints.append(Taint(where.typed(fields.get("key"), f"{field}.key", str),
                            _text(fields.get("value", ""), where, f"{field}.value"),
                            effects[effect]))
    return tuple(taints)


def _whole(value: Any) -> int:
    """A whole-number quantity such as 30000, "30k" or "76.8G"."""
    return round(quantity(value))


def _string_map(value: Any, where: _Where, field: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise where.error(field, "expected a mapping of strings")
    return {where.typed(key, f"{field}", str): _text(item, where, f"{field}.{key}")
            for key, item in value.items()}


def _text(value: Any, where: _Where, field: str) -> str:
    """A label or taint value: YAML reads `true` and `1` as non-strings; keep their text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise where.error(field, f"expected a string, got {shown(value)}")


def to_yaml(cluster: Cluster) -> str:
    """The cluster in this schema, one explicit node per node; `read` gives it back."""
    nodes = [_node_fields(node) for node in cluster.nodes]
    document = {"name": cluster.name, "node_groups": [{"name": "nodes", "nodes": nodes}]}
    return yaml.safe_dump(document, sort_keys=False)


def _node_fields(node: NodeSpec) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": node.name, "zone": node.zone, "rack": node.rack,
        "cpu": node.allocatable.cpu, "memory": node.allocatable.memory,
        "memory_bandwidth": node.memory_bandwidth_bytes_s, "cpu_speed": node.cpu_speed,
    }
    if node.gpus:
        models = {gpu.model for gpu in node.gpus}
        split = tuple(len(group) for group in node.root_complexes.values())
        if len(models) != 1 or gpus_over_root_complexes(node.gpus[0].model, split) != node.gpus:
            raise ValueError(f"node {node.name}: GPUs not of one model numbered by root complex")
        fields["gpus"] = {"model": node.gpus[0].model, "count": len(node.gpus),
                          "root_complexes": list(split)}
    fields["disk"] = {"kind": node.disk.kind.value, "iops": node.disk.iops,
                      "bandwidth": node.disk.bandwidth_bytes_s,
                      "shared_pool": node.disk.shared_pool}
    fields["labels"] = dict(node.labels)
    fields["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect.value}
                        for t in node.taints]
    fields["unschedulable"] = node.unschedulable
    return fields
