"""A job as a loader read it, the rules it must satisfy, and the one way to turn it into a Job.

Loaders produce drafts; `build` refuses a draft that breaks an error rule with `InvalidInput`,
and the validator reports every violation of every rule. One rule set serves both.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter
from typing import NamedTuple, Protocol

from dagpilot.core.dag import topological_order
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Job, Labels, Task

# Values past these are unit mix-ups (milliseconds read as seconds, bytes as KiB), not workloads.
MAX_RUNTIME_S = 365 * 86_400.0
MAX_CPU = 4096.0
MAX_MEMORY = 256 * 2**40
MAX_GPUS = 64


class Severity(Enum):
    ERROR = "error"  # the loader refuses the file
    WARNING = "warning"  # loadable, but a flaw worth reporting


@dataclass(frozen=True, slots=True)
class Violation:
    file: str
    record: str
    rule: str
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"{self.file}: {self.record}: {self.rule} [{self.severity.value}]: {self.message}"


@dataclass
class JobDraft:
    """Tasks as read, each with the record (line, row, JSON path) it came from."""

    file: str
    job_id: str
    tasks: list[Task] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    arrival_s: float = 0.0
    priority: int = 0
    labels: Labels = ()
    recorded_makespan_s: float | None = None

    def add(self, task: Task, record: str) -> None:
        self.tasks.append(task)
        self.records.append(record)

    @property
    def instances(self) -> int:
        """Its pods, as `Job.instances` counts them."""
        return sum(task.instances for task in self.tasks)


def check(draft: JobDraft) -> list[Violation]:
    """Every violation of the DAG and field rules in the draft."""
    return _analyse(draft).violations


def build(draft: JobDraft) -> Job:
    """The Job of a draft: parents deduplicated, children filled in, tasks in topological order."""
    violations, order, children = _analyse(draft)
    for violation in violations:
        if violation.severity is Severity.ERROR:
            raise InvalidInput(draft.file, violation.record, _FIELD_OF_RULE[violation.rule],
                               violation.message)
    index = {t.id: t for t in draft.tasks}
    tasks = tuple(_with_edges(index[i], tuple(dict.fromkeys(index[i].parents)), children[i])
                  for i in order)
    source = f"{draft.file}#{draft.job_id}"
    return Job(draft.job_id, tasks, draft.arrival_s, draft.priority, source, draft.labels,
               draft.recorded_makespan_s)


def children_of(parents: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Each task's children, from each task's parents: the children `build` gives a Job.

    Children come in task order, a repeated parent counts once, unknown parents are skipped. A
    loader that knows every parent before it makes its tasks can record these children, so that
    `build` keeps its tasks instead of copying each one to add them.
    """
    found: dict[str, list[str]] = {task_id: [] for task_id in parents}
    for task_id, ups in parents.items():
        for up in dict.fromkeys(ups):
            kids = found.get(up)
            if kids is not None:
                kids.append(task_id)
    return {task_id: tuple(kids) for task_id, kids in found.items()}


class _Analysis(NamedTuple):
    violations: list[Violation]
    order: list[str]  # topological; partial when there is a cycle
    children: dict[str, tuple[str, ...]]  # see children_of


def _analyse(draft: JobDraft) -> _Analysis:
    """The violations, the topological order and the children of every task."""
    found: list[Violation] = []
    for task, record in zip(draft.tasks, draft.records, strict=True):
        if not _plainly_valid(task):
            found.extend(_field_violations(draft, task, record))
    children = children_of({t.id: t.parents for t in draft.tasks})
    dag_found, order = _dag_violations(draft, children)
    return _Analysis(found + dag_found, order, children)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(Task))
_task_values = attrgetter(*_TASK_FIELDS)
_PARENTS = _TASK_FIELDS.index("parents")
_CHILDREN = _TASK_FIELDS.index("children")


def _with_edges(task: Task, parents: tuple[str, ...], children: tuple[str, ...]) -> Task:
    """`dataclasses.replace(task, parents=..., children=...)`, at half the cost: loading the
    shared traces builds half a million tasks."""
    if task.parents == parents and task.children == children:
        return task
    values = list(_task_values(task))
    values[_PARENTS], values[_CHILDREN] = parents, children
    return Task(*values)


_FIELD_OF_RULE = {
    "dag.duplicate-id": "id",
    "dag.unknown-parent": "parents",
    "dag.unknown-child": "children",
    "dag.children-mismatch": "children",
    "dag.cycle": "parents",
    "dag.empty": "tasks",
    "field.runtime": "runtime",
    "field.requests": "requests",
    "field.instances": "instances",
    "field.units": "requests",
}


def _bad_number(value: float, limit: float) -> str | None:
    if math.isnan(value):
        return "missing"
    if value < 0:
        return f"negative ({value:g})"
    if value > limit:
        return f"{value:g} is beyond {limit:g}: wrong unit?"
    return None


def _plainly_valid(task: Task) -> bool:
    """A quick test that `_field_violations` finds nothing (False also for NaN): the common case."""
    requests = task.requests
    return (0.0 <= task.runtime_s <= MAX_RUNTIME_S and not task.instance_runtimes_s
            and 0.0 <= requests.cpu <= MAX_CPU and 0 <= requests.memory <= MAX_MEMORY
            and 0 <= requests.gpus <= MAX_GPUS and task.instances >= 1)


def _field_violations(draft: JobDraft, task: Task, record: str) -> list[Violation]:
    found: list[Violation] = []

    def add(rule: str, message: str) -> None:
        found.append(Violation(draft.file, record, rule, f"task {task.id!r}: {message}"))

    for runtime in (task.runtime_s, *task.instance_runtimes_s):
        if (problem := _bad_number(runtime, MAX_RUNTIME_S)) is not None:
            add("field.runtime", f"runtime {problem}")
            break
    for name, value, limit in (("cpu", task.requests.cpu, MAX_CPU),
                               ("memory", float(task.requests.memory), MAX_MEMORY),
                               ("gpus", float(task.requests.gpus), MAX_GPUS)):
        if (problem := _bad_number(value, limit)) is not None:
            rule = "field.units" if "beyond" in problem else "field.requests"
            add(rule, f"{name} request {problem}")
    if task.instances < 1:
        add("field.instances", f"instances must be at least 1, got {task.instances}")
    return found


def _dag_violations(draft: JobDraft, children: dict[str, tuple[str, ...]]
                    ) -> tuple[list[Violation], list[str]]:
    found: list[Violation] = []

    def add(rule: str, record: str, message: str, severity: Severity = Severity.ERROR) -> None:
        found.append(Violation(draft.file, record, rule, message, severity))

    if not draft.tasks:
        add("dag.empty", f"job {draft.job_id}", f"job {draft.job_id!r} has no tasks")
        return found, []
    records: dict[str, str] = {}
    for task, record in zip(draft.tasks, draft.records, strict=True):
        if task.id in records:
            add("dag.duplicate-id", record, f"task id {task.id!r} also at {records[task.id]}")
        records.setdefault(task.id, record)
    index = {t.id: t for t in draft.tasks}
    named_parents: set[str] = set()
    for task in index.values():  # once per id: copies of a repeated row share their parents
        named_parents.update(task.parents)
    known: Mapping[str, Sequence[str]]
    if _edges_consistent(draft, index, children, named_parents):
        _add_orphans(draft, index, named_parents, add)
        known = {t.id: t.parents for t in draft.tasks}
    else:
        _add_edge_violations(draft, index, records, add)
        # per id, not per task: 30,000 copies of one row would filter one long list each
        known = {task_id: [p for p in t.parents if p in index] for task_id, t in index.items()}
    order, on_cycle = topological_order(known)
    if on_cycle:
        add("dag.cycle", records[on_cycle[0]], "tasks on or behind a dependency cycle: "
            + ", ".join(on_cycle[:8]) + (" ..." if len(on_cycle) > 8 else ""))
    return found, order


class _Add(Protocol):
    def __call__(self, rule: str, record: str, message: str,
                 severity: Severity = Severity.ERROR) -> None: ...


def _edges_consistent(draft: JobDraft, index: dict[str, Task],
                      children: dict[str, tuple[str, ...]], named_parents: set[str]) -> bool:
    """Whether `_add_edge_violations` would find only orphans, tested by whole sets and tuples:
    ids unique, every parent known, and children either not recorded or recorded as `build`
    fills them in."""
    if len(index) != len(draft.tasks) or not named_parents <= index.keys():
        return False
    if not any(t.children for t in draft.tasks):
        return True
    return all(t.children == children[t.id] for t in draft.tasks)


def _add_orphans(draft: JobDraft, index: dict[str, Task], named_parents: set[str],
                 add: _Add) -> None:
    """The orphans of a draft whose edges are consistent (named as a child = has parents)."""
    if len(index) == 1:
        return
    for task, record in zip(draft.tasks, draft.records, strict=True):
        if not task.parents and not task.children and task.id not in named_parents:
            add("dag.orphan", record, f"task {task.id!r} has neither parents nor children",
                Severity.WARNING)


def _add_edge_violations(draft: JobDraft, index: dict[str, Task], records: dict[str, str],
                         add: _Add) -> None:
    """Unknown parents and children, the two sides of an edge disagreeing, and orphans."""
    # One pass per task id: a duplicated id is reported once already (dag.duplicate-id), and
    # repeating its edges for every copy made the checks quadratic (a trace with repeated rows).
    tasks = list(index.values())
    children_recorded = any(t.children for t in tasks)
    # A task named on either side of an edge is linked, whichever side recorded it.
    linked = {t.id for t in tasks if t.parents or t.children} | {
        other for t in tasks for other in (*t.parents, *t.children)}
    # Sets, not the tuples: a task of thousands of parents would make the checks quadratic.
    children_of = ({id(t): frozenset(t.children) for t in index.values()}
                   if children_recorded else {})
    parents_of = {id(t): frozenset(t.parents) for t in index.values()}
    for task in tasks:
        record = records[task.id]
        for parent in task.parents:
            if parent not in index:
                add("dag.unknown-parent", record, f"task {task.id!r} names parent {parent!r}, "
                    "which is not in the job")
            elif children_recorded and task.id not in children_of[id(index[parent])]:
                add("dag.children-mismatch", records[parent], f"task {parent!r} is a parent of "
                    f"{task.id!r} but does not list it as a child")
        for child in task.children:
            if child not in index:
                add("dag.unknown-child", record, f"task {task.id!r} names child {child!r}, "
                    "which is not in the job")
            elif task.id not in parents_of[id(index[child])]:
                add("dag.children-mismatch", records[child], f"task {child!r} is a child of "
                    f"{task.id!r} but does not list it as a parent")
        if len(index) > 1 and task.id not in linked:
            add("dag.orphan", record, f"task {task.id!r} has neither parents nor children",
                Severity.WARNING)
