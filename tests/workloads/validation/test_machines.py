"""WfFormat tasks against the machines they ran on, in the 1.5 and the flat layout."""

from __future__ import annotations

from typing import Any

import pytest

from dagpilot.workloads.validation.machines import machine_violations

GIB = 2**30


def layout_15(machines: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"workflow": {"execution": {"machines": machines, "tasks": tasks}}}


def machine(name: str, cores: int, memory: int | None = 64 * GIB) -> dict[str, Any]:
    entry: dict[str, Any] = {"nodeName": name, "cpu": {"coreCount": cores}}
    if memory is not None:
        entry["memoryInBytes"] = memory
    return entry


@pytest.mark.parametrize(("tasks", "expected"), [
    ([{"id": "a", "machines": ["m"], "coreCount": 48}], []),
    ([{"id": "a", "machines": ["m"], "coreCount": 64}], ["resource.node-capacity"]),
    ([{"id": "a", "machines": ["m", "m2"], "coreCount": 64}], []),  # spans two machines
    ([{"id": "a", "machines": ["m"], "memoryInBytes": 100 * GIB}], ["resource.node-capacity"]),
    ([{"id": "a", "machines": ["elsewhere"]}], ["placement.unknown-node"]),
    ([{"id": "a", "machines": ["m"], "memoryInBytes": 90_000},
      {"id": "b", "machines": ["m"], "memoryInBytes": 80_000}], ["field.units"]),  # one line
    ([{"id": "a"}], []),  # no machine recorded: nothing to compare
    (["not a task", {"id": "a", "machines": [{"odd": 1}]}], ["placement.unknown-node"]),
])
def test_task_rules(tasks: list[Any], expected: list[str]) -> None:
    document = layout_15([machine("m", 48), machine("m2", 48)], tasks)
    assert [v.rule for v in machine_violations("wf.json", document)] == expected


def test_a_machine_with_memory_in_kilobytes_is_flagged_and_not_compared() -> None:
    document = layout_15([machine("kb", 64, 196_483_612)],
                         [{"id": "a", "machines": ["kb"], "memoryInBytes": 2 * GIB}])
    [flag] = machine_violations("wf.json", document)
    assert (flag.rule, flag.record) == ("field.units", "workflow.execution.machines[0]")
    assert "196483612 (187 MiB) for 64 cores" in flag.message


def test_flat_layout() -> None:
    document = {"workflow": {"machines": [machine("m", 8)],
                             "tasks": [{"id": "a", "machine": "m", "cores": 16}]}}
    [flag] = machine_violations("wf.json", document)
    assert (flag.rule, flag.record) == ("resource.node-capacity", "workflow.tasks[0]")


@pytest.mark.parametrize("document", [None, [], {"workflow": 3}, {"workflow": {"execution": {
    "machines": "x", "tasks": {}}}}])
def test_odd_documents_give_nothing(document: Any) -> None:
    assert machine_violations("wf.json", document) == []
