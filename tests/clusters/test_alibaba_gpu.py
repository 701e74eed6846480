from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.clusters import alibaba_gpu
from dagpilot.clusters.node_conventions import GPU_PRODUCT, GPU_TAINT
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput, SpecError

SETTINGS = LoaderSettings()


def test_real_inventory_has_1523_nodes(traces: Path) -> None:
    cluster = alibaba_gpu.read(str(traces / "alibaba-gpu-v2023"), SETTINGS)
    assert len(cluster.nodes) == 1523
    gpu_nodes = [node for node in cluster.nodes if node.gpus]
    assert len(gpu_nodes) == 1523 - 310  # 310 CPU-only nodes in the trace
    assert cluster.capacity.gpus == 6212
    assert {node.gpus[0].model for node in gpu_nodes} == {
        "A10", "G2", "G3", "P100", "T4", "V100M16", "V100M32"}
    assert all(node.taints == (GPU_TAINT,) for node in gpu_nodes)


def test_a_sample_is_seeded_stable_and_in_file_order(traces: Path) -> None:
    csv = traces / "alibaba-gpu-v2023" / alibaba_gpu.NODE_LIST
    first = alibaba_gpu.read(f"{csv}:200", SETTINGS)
    assert len(first.nodes) == 200
    assert first == alibaba_gpu.read(f"{csv}:200", SETTINGS)
    assert first != alibaba_gpu.read(f"{csv}:200", LoaderSettings(seed=1))
    names = [node.name for node in first.nodes]
    assert names == sorted(names)  # sn are zero-padded, so file order is name order


def test_gpus_are_split_over_two_root_complexes(fixtures: Path) -> None:
    cluster = alibaba_gpu.read(str(fixtures / "clusters" / "alibaba-gpu" / "nodes.csv"),
                               SETTINGS)
    split = {node.name: [len(g) for g in node.root_complexes.values()] for node in cluster.nodes}
    assert split == {"n-cpu-0": [], "n-t4-0": [1, 1], "n-g2-0": [4, 4], "n-v100-0": [1],
                     "n-v100-1": [2, 2]}
    t4 = cluster.node("n-t4-0")
    assert t4.allocatable.cpu == 96.0 and t4.allocatable.memory == 393216 * 2**20
    assert t4.allocatable.gpu_model == "T4" and dict(t4.labels)[GPU_PRODUCT] == "T4"
    assert not cluster.node("n-cpu-0").taints


def test_a_colon_in_the_path_is_kept_when_the_last_segment_is_no_number(tmp_path: Path,
                                                                          fixtures: Path) -> None:
    folder = tmp_path / "a:b"
    folder.mkdir()
    source = fixtures / "clusters" / "alibaba-gpu" / "nodes.csv"
    (folder / alibaba_gpu.NODE_LIST).write_text(source.read_text())
    assert len(alibaba_gpu.read(str(folder), SETTINGS).nodes) == 5
    assert len(alibaba_gpu.read(f"{folder}:3", SETTINGS).nodes) == 3


def test_asking_for_more_nodes_than_the_file_has_is_a_spec_error(fixtures: Path) -> None:
    with pytest.raises(SpecError, match="asks for 6 nodes"):
        alibaba_gpu.read(f"{fixtures / 'clusters' / 'alibaba-gpu' / 'nodes.csv'}:6", SETTINGS)


@pytest.mark.parametrize(
    ("name", "record", "field"),
    [
        ("bad_cpu.csv", "line 3", "cpu_milli"),
        ("no_model.csv", "line 4", "model"),
        ("missing_column.csv", "line 1 (header)", "memory_mib"),
        ("duplicate.csv", "line 3", "sn"),
        ("absent.csv", "", ""),
    ],
)
def test_bad_files_name_line_and_column(fixtures: Path, name: str, record: str,
                                        field: str) -> None:
    path = fixtures / "clusters" / "alibaba-gpu" / name
    with pytest.raises(InvalidInput) as caught:
        alibaba_gpu.read(str(path), SETTINGS)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), record,
                                                                            field)
