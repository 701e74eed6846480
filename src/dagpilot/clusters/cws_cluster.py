"""The 4-worker cluster of the CWS Nextflow runs (`cws:PATH`, PATH the folder or cluster.json).

`cluster.json` lists `worker_nodes` (name, cpu, ram_bytes), as CWS logged them. It records no
topology, GPUs or disks: the workers were one lab cluster, so they share one zone and rack and
keep the default disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dagpilot.clusters.node_conventions import (
    MAX_NODE_BYTES,
    MAX_NODE_CPU,
    MAX_NODES,
    MEMORY_BANDWIDTH_PER_CORE,
    node_labels,
)
from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.numbers import finite
from dagpilot.core.reading.folders import path_kind
from dagpilot.core.reading.json_documents import read_json
from dagpilot.core.types import Cluster, NodeSpec, Resources

CLUSTER_FILE = "cluster.json"
ZONE, RACK = "zone-a", "rack-0"


def read(argument: str, settings: LoaderSettings) -> Cluster:
    del settings  # the file states every node
    path = Path(argument)
    file = path / CLUSTER_FILE if path_kind(path) == "folder" else path
    document = read_json(file)
    workers = document.get("worker_nodes") if isinstance(document, dict) else None
    if not isinstance(workers, list) or not workers:
        raise InvalidInput(str(file), "top level", "worker_nodes",
                           "expected a non-empty list of worker nodes")
    if len(workers) > MAX_NODES:
        raise InvalidInput(str(file), "top level", "worker_nodes",
                           f"{len(workers):,} workers, beyond the limit of {MAX_NODES:,}")
    nodes = tuple(_node(worker, str(file), f"worker_nodes[{i}]")
                  for i, worker in enumerate(workers))
    return Cluster("cws-k8s-nextflow", nodes)


def _node(worker: Any, file: str, record: str) -> NodeSpec:
    if not isinstance(worker, dict):
        raise InvalidInput(file, record, "", "expected an object")
    name = worker.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidInput(file, record, "name", f"expected a node name, got {shown(name)}")
    cpu = _positive(worker.get("cpu"), file, record, "cpu", MAX_NODE_CPU)
    memory = _positive(worker.get("ram_bytes"), file, record, "ram_bytes", MAX_NODE_BYTES)
    return NodeSpec(
        name=name,
        allocatable=Resources(cpu, int(memory)),
        zone=ZONE,
        rack=RACK,
        memory_bandwidth_bytes_s=round(cpu * MEMORY_BANDWIDTH_PER_CORE),
        labels=node_labels(name, ZONE, RACK),
    )


def _positive(value: Any, file: str, record: str, field: str, limit: float) -> float:
    """A finite number above 0 and at most `limit`."""
    number = finite(value, file, record, field, low=0.0, high=limit)
    if number <= 0:
        raise InvalidInput(file, record, field, f"expected a positive number, got {number:g}")
    return number
