"""The Common Workflow Scheduler's rank of a task: the number of process hops on the longest
path from the task's process to a sink of the workflow's process DAG (CWS `Vertex.rank`;
operators between processes add no hop). Larger ranks are further from the end.

A process is a task's name without its Nextflow tag (`FASTQC (sample1)` -> `FASTQC`). When the
process graph has a cycle (names that are not processes), the task DAG itself is used.
"""

from __future__ import annotations

import re

from dagpilot.core import dag
from dagpilot.core.types import Job, Task

_TAG = re.compile(r"\s*\(.*\)\s*$")


def process_of(task: Task) -> str:
    return _TAG.sub("", task.name) or task.id


def task_ranks(job: Job) -> dict[str, int]:
    """Hops on the longest path from each task to a sink of the task DAG."""
    rank: dict[str, int] = {}
    for task in reversed(job.tasks):
        rank[task.id] = 1 + max((rank[child] for child in task.children), default=-1)
    return rank


def process_ranks(job: Job) -> dict[str, int]:
    """Each task's CWS rank, from its process's place in the process DAG."""
    parents: dict[str, set[str]] = {}
    for task in job.tasks:
        ups = parents.setdefault(process_of(task), set())
        ups.update(process_of(job.task(p)) for p in task.parents)
    for process, ups in parents.items():
        ups.discard(process)
    order, cyclic = dag.topological_order({p: sorted(ups) for p, ups in parents.items()})
    if cyclic:
        return task_ranks(job)
    children: dict[str, list[str]] = {process: [] for process in parents}
    for process, ups in parents.items():
        for up in ups:
            children[up].append(process)
    rank: dict[str, int] = {}
    for process in reversed(order):
        rank[process] = 1 + max((rank[c] for c in children[process]), default=-1)
    return {task.id: rank[process_of(task)] for task in job.tasks}


class RankTable:
    """Ranks per job, computed once per job and kept for the run."""

    def __init__(self) -> None:
        self._ranks: dict[str, dict[str, int]] = {}

    def rank(self, job: Job, task_id: str) -> int:
        ranks = self._ranks.get(job.id)
        if ranks is None:
            ranks = self._ranks[job.id] = process_ranks(job)
        return ranks[task_id]
