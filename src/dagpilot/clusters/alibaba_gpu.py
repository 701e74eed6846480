"""The heterogeneous Alibaba GPU inventory (`alibaba-gpu:PATH[:N]`, cluster-trace-gpu-v2023).

PATH is the trace folder or `openb_node_list_all_node.csv` (columns sn, cpu_milli, memory_mib,
gpu, model); `:N` keeps a sample of N nodes, drawn from `settings.seed` and kept in file order.
The trace records no topology, so nodes are put in racks of 32 in file order (a node keeps its
rack when sampled), the first half of the racks in zone-a and the rest in zone-b. GPU nodes
get their GPUs split over two PCIe root complexes, the GPU taint and the product label.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from dagpilot.clusters.node_conventions import (
    GPU_TAINT,
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
from dagpilot.core.csv_shape import check_shape
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput, SpecError
from dagpilot.core.numbers import ascii_whole
from dagpilot.core.reading.folders import path_kind
from dagpilot.core.reading.gunzip import read_decompressed
from dagpilot.core.reading.limits import MAX_TABLE_BYTES
from dagpilot.core.types import Cluster, NodeSpec, Resources

NODE_LIST = "openb_node_list_all_node.csv"
COLUMNS = {"sn": pl.String, "cpu_milli": pl.Int64, "memory_mib": pl.Int64, "gpu": pl.Int64,
           "model": pl.String}
NODES_PER_RACK = 32
MIB = 2**20
# The most each column may say of one node (node_conventions), checked before a node is made.
MAXIMA = {"cpu_milli": int(MAX_NODE_CPU) * 1000, "memory_mib": MAX_NODE_BYTES // MIB,
          "gpu": MAX_NODE_GPUS}


def read(argument: str, settings: LoaderSettings) -> Cluster:
    """The inventory at PATH, or a seeded sample of N of its nodes."""
    path_text, sample = _split_count(argument)
    path = Path(path_text)
    file = path / NODE_LIST if path_kind(path) == "folder" else path
    table = read_table(file)
    nodes = [_node(row, index, table.height) for index, row in enumerate(table.iter_rows())]
    if sample is None:
        return Cluster("alibaba-gpu", tuple(nodes))
    if sample > len(nodes):
        raise SpecError(f"alibaba-gpu:{argument}",
                        f"asks for {sample} nodes but {file} has {len(nodes)}")
    rng = np.random.default_rng(settings.seed)
    keep = sorted(int(i) for i in rng.choice(len(nodes), size=sample, replace=False))
    return Cluster(f"alibaba-gpu-{sample}", tuple(nodes[i] for i in keep))


def _split_count(argument: str) -> tuple[str, int | None]:
    """PATH and N of `PATH:N`; a last segment that is not a whole number belongs to PATH."""
    head, sep, tail = argument.rpartition(":")
    count = ascii_whole(tail)  # not str.isdigit: "²" passes it, and int() refuses it
    if sep and count is not None and head:
        if count < 1:
            raise SpecError(f"alibaba-gpu:{argument}", "the sample size N must be at least 1")
        return head, count
    return argument, None


def read_table(file: Path) -> pl.DataFrame:
    """The node list with typed columns, or InvalidInput naming the line and column."""
    data = read_decompressed(file, MAX_TABLE_BYTES)  # a regular file, capped, read once
    check_shape(data, str(file))  # no column named twice, no short row
    try:
        raw = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except pl.exceptions.PolarsError as error:
        raise InvalidInput(str(file), "", "", f"cannot read the node list: {error}") from error
    missing = [column for column in COLUMNS if column not in raw.columns]
    if missing:
        raise InvalidInput(str(file), "line 1 (header)", missing[0], "missing column")
    if raw.height > MAX_NODES:
        raise InvalidInput(str(file), f"line {MAX_NODES + 2}", "",
                           f"more than {MAX_NODES:,} nodes")
    typed = raw.select(pl.col(name).cast(kind, strict=False) for name, kind in COLUMNS.items())
    _refuse_first(file, raw["sn"].is_null(), "sn", "missing node name {}", raw["sn"])
    _refuse_first(file, ~raw["sn"].is_first_distinct(), "sn", "node name {} used twice",
                  raw["sn"])
    for name in ("cpu_milli", "memory_mib", "gpu"):
        bad = (typed[name] < 0).fill_null(True)
        _refuse_first(file, bad, name, "expected a non-negative whole number, got {}",
                      raw[name])
        _refuse_first(file, typed[name] > MAXIMA[name], name,
                      f"{{}} is beyond the limit {MAXIMA[name]:,}", raw[name])
    no_model = (typed["gpu"] > 0) & (typed["model"].fill_null("") == "")
    _refuse_first(file, no_model, "model", "a node with GPUs needs a model, got {}",
                  raw["model"])
    return typed


def _refuse_first(file: Path, bad: pl.Series, column: str, message: str,
                  values: pl.Series) -> None:
    """InvalidInput at the first flagged row (line numbers count the header as line 1)."""
    if bad.any():
        row = int(bad.arg_true()[0])
        raise InvalidInput(str(file), f"line {row + 2}", column,
                           message.format(shown(values[row])))


def _node(row: tuple[Any, ...], index: int, total: int) -> NodeSpec:
    name, cpu_milli, memory_mib, gpu_count, model = row
    rack = index // NODES_PER_RACK
    zone = "zone-a" if rack < math.ceil(math.ceil(total / NODES_PER_RACK) / 2) else "zone-b"
    gpu_model = str(model) if gpu_count else None
    gpus = gpus_over_root_complexes(gpu_model, even_split(gpu_count)) if gpu_model else ()
    cpu = cpu_milli / 1000
    return NodeSpec(
        name=name,
        allocatable=Resources(cpu, memory_mib * MIB, len(gpus), gpu_model),
        zone=zone,
        rack=f"rack-{rack}",
        gpus=gpus,
        memory_bandwidth_bytes_s=round(cpu * MEMORY_BANDWIDTH_PER_CORE),
        labels=node_labels(name, zone, f"rack-{rack}", gpu_model=gpu_model),
        taints=(GPU_TAINT,) if gpus else (),
    )
