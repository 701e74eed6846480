from __future__ import annotations

import pytest

from dagpilot.clusters import builtin
from dagpilot.clusters.node_conventions import GPU_PRODUCT, GPU_TAINT, HOSTNAME, RACK, ZONE
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.types import DiskKind

SETTINGS = LoaderSettings()


def test_default_has_48_nodes_in_2_zones_and_6_racks() -> None:
    cluster = builtin.read("default", SETTINGS)
    assert len(cluster.nodes) == 48
    assert {node.zone for node in cluster.nodes} == {"zone-a", "zone-b"}
    assert len({node.rack for node in cluster.nodes}) == 6
    assert {node.allocatable.cpu for node in cluster.nodes if not node.gpus} == {16, 32, 64}
    assert len({node.name for node in cluster.nodes}) == 48


def test_default_gpu_nodes_split_4_plus_4_over_root_complexes_and_are_tainted() -> None:
    gpu_nodes = [node for node in builtin.read("default", SETTINGS).nodes if node.gpus]
    assert len(gpu_nodes) == 6
    assert {node.gpus[0].model for node in gpu_nodes} == {"A100", "V100"}
    for node in gpu_nodes:
        assert [len(group) for group in node.root_complexes.values()] == [4, 4]
        assert node.taints == (GPU_TAINT,)
        assert dict(node.labels)[GPU_PRODUCT] == node.gpus[0].model == node.allocatable.gpu_model
        assert node.allocatable.gpus == 8
    cpu_nodes = [node for node in builtin.read("default", SETTINGS).nodes if not node.gpus]
    assert all(not node.taints for node in cpu_nodes)


def test_labels_name_host_zone_and_rack() -> None:
    for node in builtin.read("default", SETTINGS).nodes:
        node_labels = dict(node.labels)
        assert node_labels[HOSTNAME] == node.name
        assert node_labels[ZONE] == node.zone
        assert node_labels[RACK] == node.rack
        assert "node.kubernetes.io/instance-type" in node_labels


def test_memory_grows_with_cores_and_bandwidth_with_sockets() -> None:
    nodes = builtin.read("default", SETTINGS).nodes
    for node in nodes:
        sockets = 2 if node.gpus else 1  # 8 channels of DDR4-3200 each: 204.8 GB/s
        assert node.memory_bandwidth_bytes_s == sockets * 204_800_000_000
        if not node.gpus:
            assert node.allocatable.memory == node.allocatable.cpu * 4 * 2**30


def test_network_disks_share_their_zones_30k_iops_pool_and_big_nodes_have_nvme() -> None:
    nodes = builtin.read("default", SETTINGS).nodes
    network = [n for n in nodes if n.disk.kind is DiskKind.NETWORK]
    assert network and {n.disk.iops for n in network} == {30_000}
    assert all(n.disk.shared_pool == f"netpool-{n.zone}" for n in network)
    assert {n.disk.shared_pool for n in network} == {"netpool-zone-a", "netpool-zone-b"}
    assert {n.disk.kind for n in nodes if n.gpus or n.allocatable.cpu == 64} == {DiskKind.NVME}


def test_small_has_six_nodes_with_both_gpu_models() -> None:
    cluster = builtin.read("small", SETTINGS)
    assert len(cluster.nodes) == 6
    assert sorted(n.gpus[0].model for n in cluster.nodes if n.gpus) == ["A100", "V100"]
    assert {n.zone for n in cluster.nodes} == {"zone-a", "zone-b"}


def test_scale_n_repeats_the_default_pattern() -> None:
    assert builtin.read("scale-48", SETTINGS).nodes == builtin.read("default", SETTINGS).nodes
    big = builtin.read("scale-5000", SETTINGS)
    assert len(big.nodes) == 5000
    assert len({n.name for n in big.nodes}) == 5000
    assert sum(1 for n in big.nodes if n.gpus) == 625


def test_builtin_clusters_are_deterministic() -> None:
    assert builtin.read("default", SETTINGS) == builtin.read("default", LoaderSettings(seed=7))


@pytest.mark.parametrize("argument", ["huge", "scale-", "scale-0", "scale-x", "scale-1000001"])
def test_unknown_names_are_spec_errors(argument: str) -> None:
    with pytest.raises(SpecError):
        builtin.read(argument, SETTINGS)
