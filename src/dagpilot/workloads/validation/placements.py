"""Recorded placements: what each node held while a trace ran, against what it could hold.

Tasks whose `recorded` has a node, a start and a completion are swept per job and node (the
runs of one trace file used the cluster one after the other). The allocatable of each node comes
from a `cluster.json` beside the traces (CWS layout: `worker_nodes: [{name, cpu, ram_bytes}]`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft, Severity, Violation
from dagpilot.core.reading.folders import path_kind
from dagpilot.core.reading.json_documents import read_json
from dagpilot.core.types import Resources, Task
from dagpilot.workloads.validation.conservation import Usage, overloads
from dagpilot.workloads.validation.numbers import seconds

CLUSTER_FILE = "cluster.json"
_MIN_NODE_MEMORY = 2**30  # a node with less than 1 GiB is a unit mix-up, not a server


def cluster_beside(trace: Path) -> Path | None:
    """The cluster file in the trace's folder or the folder above it (`DIR/traces/X.csv.gz`)."""
    for folder in (trace.parent, trace.parent.parent):
        if path_kind(folder / CLUSTER_FILE) == "file":
            return folder / CLUSTER_FILE
    return None


def read_cluster(path: Path) -> dict[str, Resources]:
    """Allocatable per node name of a CWS-style cluster file."""
    file = str(path)
    document = read_json(path)
    nodes = document.get("worker_nodes") if isinstance(document, dict) else None
    if not isinstance(nodes, list):
        raise InvalidInput(file, "worker_nodes", "worker_nodes", "expected a list of nodes")
    allocatable: dict[str, Resources] = {}
    for index, node in enumerate(nodes):
        where = f"worker_nodes[{index}]"
        try:
            cpu, memory = float(node["cpu"]), float(node["ram_bytes"])
            if not (math.isfinite(cpu) and math.isfinite(memory)):
                raise ValueError("cpu and ram_bytes must be finite")
            allocatable[str(node["name"])] = Resources(cpu, int(memory))
        except (TypeError, KeyError, ValueError, OverflowError) as error:
            raise InvalidInput(file, where, _missing_key(node, ("name", "cpu", "ram_bytes")),
                               f"a node needs a name, cpu and ram_bytes: {error!r}") from error
    return allocatable


def cluster_violations(path: Path) -> list[Violation]:
    """Field sanity of the nodes of a cluster file."""
    found: list[Violation] = []
    for index, (name, node) in enumerate(read_cluster(path).items()):
        where = f"worker_nodes[{index}]"
        if not math.isfinite(node.cpu) or node.cpu <= 0:
            found.append(Violation(str(path), where, "field.capacity",
                                   f"node {name!r}: cpu must be positive, got {node.cpu:g}"))
        if node.memory < _MIN_NODE_MEMORY:
            found.append(Violation(str(path), where, "field.units",
                                   f"node {name!r}: ram_bytes {node.memory} is under 1 GiB: "
                                   "wrong unit?"))
    return found


def placement_violations(drafts: Sequence[JobDraft], allocatable: dict[str, Resources],
                         cluster_file: str) -> list[Violation]:
    """Broken placements, nodes missing from the cluster, and overload episodes on each node."""
    found: list[Violation] = []
    unknown: dict[str, list[str]] = {}  # node -> records of the tasks it ran
    for draft in drafts:
        per_node: dict[str, list[Usage]] = {}
        for task, record in zip(draft.tasks, draft.records, strict=True):
            usage, problem = _usage(draft, task, record)
            if problem is not None:
                found.append(problem)
            if usage is None or task.recorded is None or task.recorded.node is None:
                continue
            node = task.recorded.node
            if node not in allocatable:
                unknown.setdefault(node, []).append(record)
                continue
            per_node.setdefault(node, []).append(usage)
        for node, usages in sorted(per_node.items()):
            found.extend(Violation(draft.file, episode.opened_by.record, "resource.conservation",
                                   f"job {draft.job_id}: {episode.describe()}")
                         for episode in overloads(node, allocatable[node], usages))
    file = drafts[0].file if drafts else ""
    found.extend(Violation(file, records[0], "placement.unknown-node",
                           f"node {node!r} ran {len(records)} task(s) but is not in {cluster_file}")
                 for node, records in sorted(unknown.items()))
    return found


def _usage(draft: JobDraft, task: Task, record: str) -> tuple[Usage | None, Violation | None]:
    """The usage of a task with a complete recorded placement, or the flaw that prevents one."""
    recorded = task.recorded
    if recorded is None or recorded.start_s is None or recorded.complete_s is None:
        return None, None
    start, end = recorded.start_s, recorded.complete_s
    if recorded.node is None:
        return None, Violation(draft.file, record, "placement.missing", (
            f"job {draft.job_id}: task {task.id!r} ran from t={seconds(start)} s to "
            f"t={seconds(end)} s but its node is not recorded"), Severity.WARNING)
    if not (math.isfinite(start) and math.isfinite(end)) or end < start:
        return None, Violation(draft.file, record, "placement.interval", (
            f"job {draft.job_id}: task {task.id!r} on {recorded.node} completes at "
            f"t={seconds(end)} s, before its start at t={seconds(start)} s"))
    return Usage(start, end, task.requests, task.id, record), None


def _missing_key(node: Any, keys: tuple[str, ...]) -> str:
    if not isinstance(node, dict):
        return ""
    return next((key for key in keys if key not in node), "")
