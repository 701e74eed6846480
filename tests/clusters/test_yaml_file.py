from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.clusters import builtin, yaml_file
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import DiskKind, TaintEffect

REPO = Path(__file__).resolve().parents[2]
SETTINGS = LoaderSettings()


def test_groups_with_count_and_explicit_nodes(fixtures: Path) -> None:
    cluster = yaml_file.read(str(fixtures / "clusters" / "yaml" / "two_groups.yaml"), SETTINGS)
    assert cluster.name == "tiny"
    assert [node.name for node in cluster.nodes] == ["cpu-0", "cpu-1", "cpu-2", "gpu-0", "gpu-1"]
    cpu = cluster.node("cpu-1")
    assert (cpu.allocatable.cpu, cpu.allocatable.memory) == (4.0, 16 * 2**30)
    assert (cpu.disk.kind, cpu.disk.iops, cpu.disk.shared_pool) == (
        DiskKind.NETWORK, 30_000, "pool-a")
    assert cpu.memory_bandwidth_bytes_s == 4 * 3_200_000_000  # 204.8 GB/s per 64-core socket
    assert dict(cpu.labels)["tier"] == "batch"
    gpu0, gpu1 = cluster.node("gpu-0"), cluster.node("gpu-1")
    assert [len(g) for g in gpu0.root_complexes.values()] == [2, 2]
    assert [len(g) for g in gpu1.root_complexes.values()] == [1, 2]
    assert gpu0.allocatable.gpus == 4 and gpu0.allocatable.gpu_model == "T4"
    assert dict(gpu0.labels)["tier"] == "gpu"
    assert dict(gpu0.labels)["accelerated"] == "true"
    assert dict(gpu0.labels)["nvidia.com/gpu.product"] == "T4"
    assert gpu0.taints[0].effect is TaintEffect.NO_SCHEDULE
    assert gpu1.unschedulable and not gpu0.unschedulable
    assert (gpu1.zone, gpu1.rack) == ("zone-b", "rack-1")


@pytest.mark.parametrize(("group_labels", "hostnames"), [
    ("", ["c-0", "c-1", "c-2"]),  # each copy of a counted node is named for itself
    ("labels: {kubernetes.io/hostname: shared}", ["shared"] * 3),  # the group's own label holds
])
def test_the_nodes_of_a_count_group_differ_only_by_name(tmp_path: Path, group_labels: str,
                                                        hostnames: list[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: c\nnode_groups:\n  - {name: c, count: 3, cpu: 4, memory: 8Gi, "
                    f"zone: z{', ' + group_labels if group_labels else ''}}}\n")
    nodes = yaml_file.read(str(path), SETTINGS).nodes
    assert [dict(node.labels)["kubernetes.io/hostname"] for node in nodes] == hostnames
    assert [node.name for node in nodes] == ["c-0", "c-1", "c-2"]
    assert len({(n.allocatable, n.zone, n.disk, n.gpus) for n in nodes}) == 1


def test_the_example_in_the_repository_loads() -> None:
    cluster = yaml_file.read(str(REPO / "examples" / "cluster.yaml"), SETTINGS)
    assert len(cluster.nodes) == 14
    assert cluster.capacity.gpus == 16
    assert cluster.node("bigmem-b").unschedulable


@pytest.mark.parametrize("name", ["default", "small"])
def test_round_trip_of_builtin_clusters(tmp_path: Path, name: str) -> None:
    original = builtin.read(name, SETTINGS)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml_file.to_yaml(original))
    assert yaml_file.read(str(path), SETTINGS) == original


def test_round_trip_of_a_yaml_cluster(tmp_path: Path, fixtures: Path) -> None:
    original = yaml_file.read(str(fixtures / "clusters" / "yaml" / "two_groups.yaml"), SETTINGS)
    path = tmp_path / "again.yaml"
    path.write_text(yaml_file.to_yaml(original))
    assert yaml_file.read(str(path), SETTINGS) == original


GOOD_GROUP = "node_groups:\n  - {name: g, count: 1, cpu: 4, memory: 8Gi"


@pytest.mark.parametrize(
    ("text", "record", "field"),
    [
        ("name: x\n", "top level", "node_groups"),
        ("node_groups: []\n", "top level", "node_groups"),
        ("nodes: []\n", "top level", "nodes"),
        ("- 1\n", "top level", ""),
        ("node_groups:\n  - {name: g, count: 1, cpu: 4, memory: 12 GB}\n",
         "node_groups[0] (g)", "memory"),
        ("node_groups:\n  - {name: g, count: 1, cpu: four, memory: 8Gi}\n",
         "node_groups[0] (g)", "cpu"),
        ("node_groups:\n  - {name: g, count: 1, cpu: -4, memory: 8Gi}\n",
         "node_groups[0] (g)", "cpu"),
        ("node_groups:\n  - {name: g, count: 1, memory: 8Gi}\n", "node_groups[0] (g)", "cpu"),
        ("node_groups:\n  - {name: g, count: 0, cpu: 4, memory: 8Gi}\n",
         "node_groups[0] (g)", "count"),
        ("node_groups:\n  - {name: g, cpu: 4, memory: 8Gi}\n", "node_groups[0] (g)", "count"),
        ("node_groups:\n  - {count: 1, cpu: 4, memory: 8Gi}\n", "node_groups[0]", "name"),
        (GOOD_GROUP + ", colour: red}\n", "node_groups[0]", "colour"),
        (GOOD_GROUP + ", disk: {kind: tape}}\n", "node_groups[0] (g)", "disk.kind"),
        (GOOD_GROUP + ", disk: {speed: 3}}\n", "node_groups[0] (g)", "disk.speed"),
        (GOOD_GROUP + ", disk: {iops: many}}\n", "node_groups[0] (g)", "disk.iops"),
        (GOOD_GROUP + ", gpus: {model: A100, count: 8, root_complexes: [4, 3]}}\n",
         "node_groups[0] (g)", "gpus.root_complexes"),
        (GOOD_GROUP + ", gpus: {count: 8}}\n", "node_groups[0] (g)", "gpus.model"),
        (GOOD_GROUP + ", taints: [{key: k, effect: Never}]}\n", "node_groups[0] (g)",
         "taints[0].effect"),
        (GOOD_GROUP + ", labels: {a: [1]}}\n", "node_groups[0] (g)", "labels.a"),
        (GOOD_GROUP + ", unschedulable: maybe}\n", "node_groups[0] (g)", "unschedulable"),
        ("node_groups:\n  - {name: g, cpu: 4, memory: 8Gi, nodes: [{name: a, rack: 3}]}\n",
         "node_groups[0] (g).nodes[0] (a)", "rack"),
        ("node_groups:\n  - {name: g, cpu: 4, memory: 8Gi, nodes: [{name: a, size: 3}]}\n",
         "node_groups[0] (g).nodes[0]", "size"),
        ("node_groups:\n  - {name: g, cpu: 4, memory: 8Gi, nodes: [{name: a}, {name: a}]}\n",
         "node_groups[0] (g).nodes[1] (a)", "name"),
        ("node_groups:\n  - {name: g, cpu: 4, memory: 8Gi, nodes: [{name: a}], count: 2}\n",
         "node_groups[0] (g)", "count"),
    ],
)
def test_bad_clusters_name_file_record_and_field(tmp_path: Path, text: str, record: str,
                                                 field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        yaml_file.read(str(path), SETTINGS)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), record,
                                                                            field)


def test_broken_yaml_names_the_line(fixtures: Path) -> None:
    path = fixtures / "clusters" / "yaml" / "broken_syntax.yaml"
    with pytest.raises(InvalidInput) as caught:
        yaml_file.read(str(path), SETTINGS)
    assert caught.value.record.startswith("line ")
    assert "not valid YAML" in caught.value.message


def test_a_missing_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file"):
        yaml_file.read(str(tmp_path / "nothing.yaml"), SETTINGS)
