"""WfFormat execution records against the machines they ran on.

A task may not use more cores or memory than the machines it names hold, must name machines
that the instance lists, and sizes must be plausible in bytes (some instances record kilobytes
in `memoryInBytes`). WfFormat records no start or end times, so no sweep over time is possible.
Schema 1.5 keeps machines and measurements in `workflow.execution` (task `machines`,
`coreCount`); the flat 1.3/1.4 layout in `workflow` (task `machine`, `cores`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dagpilot.core.job_draft import Severity, Violation

_MIN_MACHINE_MEMORY = 2**30  # below 1 GiB a server's memory is a unit mix-up
_MIN_TASK_MEMORY = 2**20  # no process that ran real work peaked under 1 MiB


@dataclass(frozen=True, slots=True)
class Machine:
    name: str
    cores: int | None
    memory: int | None


def machine_violations(file: str, document: Any) -> list[Violation]:
    """Every capacity and unit flaw of the execution section of a WfFormat document."""
    workflow = _get(document, "workflow")
    execution = _get(workflow, "execution")
    section, where = (execution, "workflow.execution") if isinstance(execution, dict) else (
        workflow, "workflow")
    machines = _machines(section)
    found = [_small_machine(file, f"{where}.machines[{index}]", machine)
             for index, machine in enumerate(machines)
             if machine.memory is not None and machine.memory < _MIN_MACHINE_MEMORY]
    by_name = {machine.name: machine for machine in machines}
    tasks = _get(section, "tasks")
    if not isinstance(tasks, list):
        return found
    tiny: list[tuple[str, int]] = []
    for index, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        record = f"{where}.tasks[{index}]"
        memory = _number(task.get("memoryInBytes"))
        if memory is not None and 0 < memory < _MIN_TASK_MEMORY:
            tiny.append((record, int(memory)))
        found.extend(_task_on_machines(file, record, task, by_name))
    if tiny:
        values = [value for _, value in tiny]
        found.append(Violation(file, tiny[0][0], "field.units", (
            f"{len(tiny)} task(s) report memoryInBytes under 1 MiB ({min(values)} to "
            f"{max(values)}): kilobytes recorded as bytes?"), Severity.WARNING))
    return found


def _task_on_machines(file: str, record: str, task: dict[str, Any],
                      machines: dict[str, Machine]) -> list[Violation]:
    listed = task.get("machines", task.get("machine"))
    if isinstance(listed, str):
        listed = [listed]
    if not isinstance(listed, list) or not listed or not machines:
        return []
    names = [str(name) for name in listed]
    task_id = task.get("id", "?")
    missing = [str(name) for name in names if name not in machines]
    if missing:
        return [Violation(file, record, "placement.unknown-node", (
            f"task {task_id!r} ran on {', '.join(missing)}, which the instance does not list "
            "among its machines"))]
    used = [machines[name] for name in names]
    found: list[Violation] = []
    cores = _number(task.get("coreCount", task.get("cores")))
    memory = _number(task.get("memoryInBytes"))
    held_cores = sum(m.cores or 0 for m in used) if all(m.cores for m in used) else None
    if cores is not None and held_cores is not None and cores > held_cores:
        found.append(Violation(file, record, "resource.node-capacity", (
            f"task {task_id!r} used {cores:g} cores on {', '.join(names)}, which hold "
            f"{held_cores}")))
    plausible = all(m.memory and m.memory >= _MIN_MACHINE_MEMORY for m in used)
    held_memory = sum(m.memory or 0 for m in used)
    if memory is not None and plausible and memory > held_memory:
        found.append(Violation(file, record, "resource.node-capacity", (
            f"task {task_id!r} used {memory:g} bytes of memory on {', '.join(names)}, "
            f"which hold {held_memory}")))
    return found


def _small_machine(file: str, record: str, machine: Machine) -> Violation:
    cores = f" for {machine.cores} cores" if machine.cores else ""
    return Violation(file, record, "field.units", (
        f"machine {machine.name!r} has memoryInBytes {machine.memory} "
        f"({(machine.memory or 0) / 2**20:.0f} MiB){cores}: kilobytes recorded as bytes?"),
        Severity.WARNING)


def _machines(section: Any) -> list[Machine]:
    listed = _get(section, "machines")
    if not isinstance(listed, list):
        return []
    machines: list[Machine] = []
    for entry in listed:
        if isinstance(entry, dict) and isinstance(entry.get("nodeName"), str):
            cores = _number(_get(entry.get("cpu"), "coreCount"))
            memory = _number(entry.get("memoryInBytes"))
            machines.append(Machine(entry["nodeName"], None if cores is None else int(cores),
                                    None if memory is None else int(memory)))
    return machines


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _number(value: Any) -> float | None:
    """A finite figure, or None: a machine's NaN or infinite size says nothing to check."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and abs(number) < 2**63 else None
