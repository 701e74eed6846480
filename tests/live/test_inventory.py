"""Node objects <-> NodeSpec: the round trip is exact; bad fields are named."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.errors import InvalidInput
from dagpilot.live import inventory


def test_every_builtin_node_survives_the_round_trip() -> None:
    for cluster in ("builtin:default", "builtin:small"):
        for spec in load_cluster(cluster).nodes:
            seen = inventory.node_spec(inventory.node_manifest(spec))
            labels = dict(seen.labels)
            assert labels.pop(inventory.DISK_KIND) == spec.disk.kind.value
            assert dataclasses.replace(seen, labels=spec.labels) == spec
            assert labels == dict(spec.labels)


def test_cluster_of_lists_nodes_by_name() -> None:
    specs = load_cluster("builtin:small").nodes
    cluster = inventory.cluster_of([inventory.node_manifest(s) for s in reversed(specs)])
    assert [n.name for n in cluster.nodes] == sorted(s.name for s in specs)


def _gpu_node() -> dict[str, object]:
    gpu = next(s for s in load_cluster("builtin:small").nodes if s.gpus)
    return inventory.node_manifest(gpu)


@pytest.mark.parametrize(("path", "value", "field"), [
    (("status", "allocatable", "cpu"), "16 cores", "status.allocatable.cpu"),
    (("status", "allocatable", "memory"), "-1Gi", "status.allocatable.memory"),
    (("metadata", "annotations", inventory.ROOT_COMPLEXES), "0,1", inventory.ROOT_COMPLEXES),
    (("metadata", "annotations", inventory.MEMORY_BANDWIDTH), "nan", inventory.MEMORY_BANDWIDTH),
    (("metadata", "labels", inventory.DISK_KIND), "tape", inventory.DISK_KIND),
    (("metadata", "labels", "team"), 7, "metadata.labels.team"),
])
def test_a_malformed_field_is_refused_naming_the_node_and_field(
        path: tuple[str, ...], value: object, field: str) -> None:
    node = copy.deepcopy(_gpu_node())
    target: dict[str, object] = node
    for key in path[:-1]:
        target = target[key]  # type: ignore[assignment]
    target[path[-1]] = value
    with pytest.raises(InvalidInput, match=rf"node {node['metadata']['name']}.*{field}"):  # type: ignore[index]
        inventory.node_spec(node)


def test_a_node_without_dagpilot_annotations_gets_the_documented_defaults() -> None:
    node = _gpu_node()
    node["metadata"]["annotations"] = {}  # type: ignore[index]
    spec = inventory.node_spec(node)
    assert {gpu.root_complex for gpu in spec.gpus} == {0}
    assert spec.cpu_speed == 1.0
