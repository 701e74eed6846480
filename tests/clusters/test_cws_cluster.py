from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.clusters import cws_cluster
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput

SETTINGS = LoaderSettings()


def test_real_cluster_has_four_workers_of_31_9_cpus(traces: Path) -> None:
    cluster = cws_cluster.read(str(traces / "cws-k8s-nextflow"), SETTINGS)
    assert [node.name for node in cluster.nodes] == ["cpu05", "cpu14", "node8", "node10"]
    for node in cluster.nodes:
        assert node.allocatable.cpu == 31.9
        assert 124 * 2**30 < node.allocatable.memory < 126 * 2**30
        assert not node.gpus and not node.taints


def test_folder_and_file_give_the_same_cluster(fixtures: Path) -> None:
    folder = fixtures / "clusters" / "cws"
    from_folder = cws_cluster.read(str(folder), SETTINGS)
    assert from_folder == cws_cluster.read(str(folder / "cluster.json"), SETTINGS)
    assert [(n.name, n.allocatable.cpu, n.allocatable.memory) for n in from_folder.nodes] == [
        ("w1", 31.9, 134473297920), ("w2", 15.5, 67236648960)]


@pytest.mark.parametrize(
    ("name", "record", "field"),
    [
        ("bad_ram.json", "worker_nodes[1]", "ram_bytes"),
        ("truncated.json", "line 2 column 10", ""),
        ("missing.json", "", ""),
    ],
)
def test_bad_files_name_record_and_field(fixtures: Path, name: str, record: str,
                                         field: str) -> None:
    path = fixtures / "clusters" / "cws" / name
    with pytest.raises(InvalidInput) as caught:
        cws_cluster.read(str(path), SETTINGS)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), record,
                                                                            field)


def test_a_file_without_workers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text('{"worker_nodes": []}')
    with pytest.raises(InvalidInput, match="worker_nodes"):
        cws_cluster.read(str(tmp_path), SETTINGS)
