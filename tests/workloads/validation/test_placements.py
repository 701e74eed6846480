"""Recorded placements against a cluster: broken intervals, unknown nodes, overloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.types import Recorded, Resources, Task
from dagpilot.workloads.validation.placements import (
    cluster_beside,
    cluster_violations,
    placement_violations,
    read_cluster,
)

GIB = 2**30
NODES = {"n1": Resources(4.0, 16 * GIB)}


def draft(*tasks: tuple[str, str | None, float | None, float | None, float]) -> JobDraft:
    job = JobDraft("trace.csv", "run/1")
    for index, (task_id, node, start, end, cpu) in enumerate(tasks):
        job.add(Task(task_id, task_id, 1.0, Resources(cpu, GIB),
                     recorded=Recorded(node, start, start, end)), f"line {index + 2}")
    return job


@pytest.mark.parametrize(("tasks", "expected"), [
    ([("a", "n1", 0, 10, 4), ("b", "n1", 10, 20, 4)], []),
    ([("a", "n1", 0, 10, 4), ("b", "n1", 5, 20, 1)], [("resource.conservation", "line 3")]),
    ([("a", "n1", 10, 5, 1)], [("placement.interval", "line 2")]),
    ([("a", None, 0, 5, 1)], [("placement.missing", "line 2")]),
    ([("a", "n7", 0, 5, 1), ("b", "n7", 5, 6, 1)], [("placement.unknown-node", "line 2")]),
    ([("a", "n1", None, None, 100)], []),  # not started: nothing recorded to check
])
def test_placement_rules(tasks: list[tuple[str, str | None, float | None, float | None, float]],
                         expected: list[tuple[str, str]]) -> None:
    found = placement_violations([draft(*tasks)], NODES, "cluster.json")
    assert [(v.rule, v.record) for v in found] == expected


def test_runs_are_swept_separately() -> None:
    # two runs at the same (relative) times on the same node do not add up
    first, second = draft(("a", "n1", 0, 10, 4)), draft(("a", "n1", 0, 10, 4))
    assert placement_violations([first, second], NODES, "cluster.json") == []


def test_cluster_file_is_found_beside_the_traces_folder(fixtures: Path) -> None:
    trace = fixtures / "validate" / "cws" / "traces" / "tiny.csv"
    assert cluster_beside(trace) == fixtures / "validate" / "cws" / "cluster.json"
    assert cluster_beside(fixtures / "validate" / "wf_valid.json") is None


def test_cluster_nodes_and_their_sanity(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"worker_nodes": [
        {"name": "ok", "cpu": 8, "ram_bytes": 32 * GIB},
        {"name": "zero", "cpu": 0, "ram_bytes": 32 * GIB},
        {"name": "kib", "cpu": 8, "ram_bytes": 32 * 2**20 // 1024}]}))
    assert read_cluster(path)["ok"] == Resources(8.0, 32 * GIB)
    assert [(v.record, v.rule) for v in cluster_violations(path)] == [
        ("worker_nodes[1]", "field.capacity"), ("worker_nodes[2]", "field.units")]


@pytest.mark.parametrize(("text", "record", "field"), [
    ("{", "line 1 column 2", ""),
    ('{"worker_nodes": {}}', "worker_nodes", "worker_nodes"),
    ('{"worker_nodes": [{"name": "a", "cpu": 1}]}', "worker_nodes[0]", "ram_bytes"),
    ('{"worker_nodes": [{"name": "a", "cpu": "x", "ram_bytes": 1}]}', "worker_nodes[0]", ""),
])
def test_a_broken_cluster_file_is_invalid_input(tmp_path: Path, text: str, record: str,
                                                field: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        read_cluster(path)
    assert (caught.value.record, caught.value.field) == (record, field)
