"""A job's DAG as arrays (fixed per job), and its progress at one moment (per decision).

Task features, job graphs and comm-group figures all read the same per-task arrays, so they
are built once per job: the edges, depth, b-level, work, communication groups.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import Job, Task

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


def _column(job: Job, value: Callable[[Task], float]) -> Floats:
    return np.array([value(task) for task in job.tasks], dtype=np.float64)


@dataclass(frozen=True)
class JobStatics:
    job: Job
    index_of: dict[str, int]  # task id -> position in job.tasks
    edge_parent: Ints  # (edges,) one entry per parent -> child edge
    edge_child: Ints
    parents: Floats  # (tasks,) parent counts
    children: Floats  # (tasks,) child counts
    child_lists: tuple[tuple[int, ...], ...]
    depth: Floats
    b_level: Floats  # s: longest runtime from the task's start to the job's end
    work: Floats  # core-s over all instances
    instances: Floats
    group: Ints  # (tasks,) comm group id, -1 for none
    group_size: Floats  # (groups,) pods in each group
    cpu: Floats  # (tasks,) requests of one pod: cores, bytes, GPUs
    memory: Floats
    gpus: Floats
    runtime: Floats  # s: the longest instance's nominal runtime
    io_intensity: Floats
    membw_intensity: Floats
    comm_share: Floats

    @classmethod
    def of(cls, job: Job) -> JobStatics:
        tasks = job.tasks
        index_of = {task.id: position for position, task in enumerate(tasks)}
        edges = [(index_of[p], child) for child, task in enumerate(tasks) for p in task.parents]
        edge_parent = np.array([p for p, _ in edges], dtype=np.int64)
        edge_child = np.array([c for _, c in edges], dtype=np.int64)
        groups: dict[str, int] = {}
        group = np.array([groups.setdefault(t.comm_group, len(groups)) if t.comm_group else -1
                          for t in tasks], dtype=np.int64)
        instances = np.array([t.instances for t in tasks], dtype=np.float64)
        b_levels, depths = job.b_levels, job.depths
        return cls(
            job=job, index_of=index_of, edge_parent=edge_parent, edge_child=edge_child,
            parents=np.array([len(t.parents) for t in tasks], dtype=np.float64),
            children=np.array([len(t.children) for t in tasks], dtype=np.float64),
            child_lists=tuple(tuple(index_of[c] for c in t.children) for t in tasks),
            depth=np.array([depths[t.id] for t in tasks], dtype=np.float64),
            b_level=np.array([b_levels[t.id] for t in tasks], dtype=np.float64),
            work=np.array([t.work_core_s for t in tasks], dtype=np.float64),
            instances=instances,
            group=group,
            group_size=np.bincount(group[group >= 0], weights=instances[group >= 0],
                                   minlength=len(groups)).astype(np.float64),
            cpu=_column(job, lambda t: t.requests.cpu),
            memory=_column(job, lambda t: t.requests.memory),
            gpus=_column(job, lambda t: t.requests.gpus),
            runtime=_column(job, lambda t: t.longest_runtime_s),
            io_intensity=_column(job, lambda t: t.io_intensity),
            membw_intensity=_column(job, lambda t: t.membw_intensity),
            comm_share=_column(job, lambda t: t.comm_share),
        )

    @property
    def critical_path_s(self) -> float:
        return float(self.b_level.max(initial=0.0))

    @property
    def max_depth(self) -> float:
        return float(self.depth.max(initial=0.0))

    @property
    def total_work(self) -> float:
        return float(self.work.sum())


@dataclass(frozen=True)
class JobProgress:
    """Where a job stands: finished tasks, ready tasks (released, not finished), the rest
    blocked behind unfinished parents."""

    finished: Bools
    ready: Bools
    remaining_work: float  # core-s of the unfinished tasks
    group_active_share: Floats  # (groups,) share of each group's pods released, unfinished

    @property
    def blocked(self) -> Bools:
        return ~(self.finished | self.ready)


def progress(statics: JobStatics, finished_ids: Set[str]) -> JobProgress:
    finished = np.zeros(len(statics.job.tasks), dtype=np.bool_)
    finished[[statics.index_of[t] for t in finished_ids if t in statics.index_of]] = True
    done_parents = np.bincount(statics.edge_child, weights=finished[statics.edge_parent],
                               minlength=len(finished)).astype(np.float64)
    ready = ~finished & (done_parents >= statics.parents)
    active = ready & (statics.group >= 0)
    active_pods = np.bincount(statics.group[active], weights=statics.instances[active],
                              minlength=len(statics.group_size)).astype(np.float64)
    share = np.divide(active_pods, statics.group_size, out=np.zeros_like(active_pods),
                      where=statics.group_size > 0)
    return JobProgress(finished, ready, float(statics.work[~finished].sum()), share)
