"""Node inventories and pod lists in the Alibaba GPU (openb) CSV layout.

Nodes: `sn, cpu_milli, memory_mib, gpu, model`. Pods: `name, cpu_milli, memory_mib, num_gpu,
gpu_milli, ..., creation_time, deletion_time, scheduled_time`. A pod must fit on at least one
node of the inventories in its folder; a node name must mean one node across those inventories.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import Severity, Violation
from dagpilot.core.reading.gunzip import read_decompressed
from dagpilot.core.reading.limits import MAX_TABLE_BYTES

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu")
_POD_TIMES = ("creation_time", "scheduled_time", "deletion_time")


def is_node_header(columns: list[str]) -> bool:
    return set(NODE_COLUMNS) <= set(columns)


def is_pod_header(columns: list[str]) -> bool:
    return set(POD_COLUMNS) <= set(columns)


def node_violations(path: Path, siblings: list[Path]) -> list[Violation]:
    """Capacity sanity, duplicate names, and names that mean another node in a sibling file."""
    file = str(path)
    nodes = _read(path, NODE_COLUMNS)
    found = _bad_rows(file, nodes, "field.capacity", [
        (pl.col("cpu_milli").is_null() | (pl.col("cpu_milli") <= 0), "cpu_milli must be positive"),
        (pl.col("memory_mib").is_null() | (pl.col("memory_mib") <= 0),
         "memory_mib must be positive"),
        (pl.col("gpu").is_null() | (pl.col("gpu") < 0), "gpu must be 0 or more"),
    ])
    if "model" in nodes.columns:
        found += _bad_rows(file, nodes, "field.capacity", [
            ((pl.col("gpu") > 0) & pl.col("model").is_null(), "a node with GPUs names no model")])
    duplicated = nodes.filter(pl.col("sn").is_duplicated())
    found += [Violation(file, f"line {row + 2}", "inventory.duplicate",
                        f"node name {name!r} appears more than once")
              for row, name in duplicated.select("_row", "sn").iter_rows()]
    for other in siblings:
        if other.name < path.name:  # each pair of files is compared once, reported on the later
            found.extend(_conflicts(path, nodes, other))
    return found


def pod_violations(path: Path, inventories: list[Path]) -> list[Violation]:
    """Request and lifetime sanity, and pods that no node of the inventories could hold."""
    file = str(path)
    pods = _read(path, POD_COLUMNS)
    found = _bad_rows(file, pods, "field.requests", [
        (pl.col(column).is_null() | (pl.col(column) < 0), f"{column} must be 0 or more")
        for column in POD_COLUMNS[1:]])
    times = [column for column in _POD_TIMES if column in pods.columns]
    if {"creation_time", "deletion_time"} <= set(times):
        found += _bad_rows(file, pods, "field.runtime", [
            (pl.col("deletion_time") < pl.col("creation_time"),
             "deleted before it was created (negative lifetime)")])
    if {"creation_time", "scheduled_time"} <= set(times):
        found += _bad_rows(file, pods, "time.order", [
            (pl.col("scheduled_time") < pl.col("creation_time"),
             "scheduled before it was created")])
    if inventories:
        found += _unplaceable(file, pods, inventories)
    return found


def _unplaceable(file: str, pods: pl.DataFrame, inventories: list[Path]) -> list[Violation]:
    nodes = pl.concat([_read(p, NODE_COLUMNS).select(NODE_COLUMNS[1:]) for p in inventories])
    capacity = nodes.unique().to_numpy().astype(float)  # (kinds of node, [cpu, memory, gpu])
    demand = pods.select(POD_COLUMNS[1:]).fill_null(0).to_numpy().astype(float)
    fits = np.any(np.all(demand[:, None, :] <= capacity[None, :, :], axis=2), axis=1)
    largest = capacity.max(axis=0)
    names = ", ".join(p.name for p in inventories)
    found: list[Violation] = []
    for index in np.flatnonzero(~fits):
        cpu, memory, gpus = demand[index]
        found.append(Violation(file, f"line {int(pods['_row'][int(index)]) + 2}",
                               "resource.node-capacity", (
            f"pod {pods['name'][int(index)]!r} requests {cpu / 1000:g} CPUs, "
            f"{memory / 1024:g} GiB, {gpus:g} GPUs: no node in {names} holds that much "
            f"(largest per resource: {largest[0] / 1000:g} CPUs, {largest[1] / 1024:g} GiB, "
            f"{largest[2]:g} GPUs)")))
    return found


def _conflicts(path: Path, nodes: pl.DataFrame, other: Path) -> list[Violation]:
    theirs = _read(other, NODE_COLUMNS).select(NODE_COLUMNS)
    joined = nodes.join(theirs, on="sn", suffix="_there")
    differ = joined.filter(pl.any_horizontal(pl.col(c) != pl.col(f"{c}_there")
                                             for c in NODE_COLUMNS[1:]))
    if differ.is_empty():
        return []
    first = differ.row(0, named=True)
    return [Violation(str(path), f"line {first['_row'] + 2}", "inventory.conflict", (
        f"{differ.height} of {joined.height} node names shared with {other.name} name a different "
        f"node there, e.g. {first['sn']!r}: {first['cpu_milli'] / 1000:g} CPUs, {first['gpu']:g} "
        f"GPUs here, {first['cpu_milli_there'] / 1000:g} CPUs, {first['gpu_there']:g} GPUs there; "
        "the files cannot be merged by name"), Severity.WARNING)]


def _bad_rows(file: str, frame: pl.DataFrame, rule: str,
              conditions: list[tuple[pl.Expr, str]]) -> list[Violation]:
    found: list[Violation] = []
    label = "name" if "name" in frame.columns else "sn"
    for condition, message in conditions:
        for row, name in frame.filter(condition).select("_row", label).iter_rows():
            found.append(Violation(file, f"line {row + 2}", rule, f"{name!r}: {message}"))
    return found


def _read(path: Path, required: tuple[str, ...]) -> pl.DataFrame:
    """The CSV with a `_row` index (0 = line 2); numbers as floats, names as text."""
    file = str(path)
    data = read_decompressed(path, MAX_TABLE_BYTES)
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema_length=0)  # all text; cast below
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as error:
        raise InvalidInput(file, "", "", f"not a readable CSV: {error}") from error
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise InvalidInput(file, "line 1", missing[0], f"missing column(s) {', '.join(missing)}")
    numeric = [c for c in (*required[1:], *_POD_TIMES) if c in frame.columns]
    cast = frame.with_columns(pl.col(numeric).cast(pl.Float64, strict=False))
    for column in numeric:
        unreadable = cast[column].is_null() & frame[column].is_not_null()
        if unreadable.any():
            row = int(unreadable.arg_true()[0])
            raise InvalidInput(file, f"line {row + 2}", column,
                               f"not a number: {frame[column][row]!r}")
    return cast.with_row_index("_row")
