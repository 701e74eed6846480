"""What a Transformer reads about a candidate's job: up to K of its tasks, their features,
topology-aware positions and status (schema.GRAPH, schema.POSITION).

Positions are the task's place in the DAG, not a sequence index: depth (share of the job's
depth), parent and child counts, b-level (share of the critical path). A job may have
thousands of tasks; K of them are kept, the most relevant first:
1. the candidate itself,
2. the other ready tasks (released, not finished: their pods are pending or running), longest
   b-level first: they compete with the candidate now,
3. their descendants, nearest first (breadth-first from the ready tasks), longest b-level
   first within a hop: the work the placement unlocks,
4. the finished parents of ready tasks, longest b-level first: where the inputs come from.
Unused slots are zero with `valid` false.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.state.job_statics import JobProgress, JobStatics
from dagpilot.state.schema import GRAPH, POSITION, TASK_STATUSES

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
GIB = float(2**30)
DEFAULT_GRAPH_TASKS = 32
FINISHED, READY, BLOCKED = range(len(TASK_STATUSES))
EMPTY = -1  # status of an unused slot


@dataclass(frozen=True)
class JobGraph:
    features: npt.NDArray[np.float32]  # (K, GRAPH.dim)
    positions: npt.NDArray[np.float32]  # (K, POSITION.dim)
    valid: npt.NDArray[np.bool_]  # (K,) the slot holds a task
    status: npt.NDArray[np.int8]  # (K,) FINISHED, READY, BLOCKED or EMPTY
    tasks: Ints  # (valid slots,) task positions in job.tasks, slot order


def _by_b_level(statics: JobStatics, tasks: Ints) -> Ints:
    """Longest b-level first; ties in task order (stable)."""
    return tasks[np.argsort(-statics.b_level[tasks], kind="stable")]


def relevant_tasks(statics: JobStatics, progress: JobProgress, limit: int) -> list[int]:
    """Up to `limit` task positions in order of relevance (steps 2-4 above)."""
    ready = _by_b_level(statics, np.flatnonzero(progress.ready)).tolist()[:limit]
    chosen = list(ready)
    seen = set(chosen)
    frontier = ready
    while frontier and len(chosen) < limit:
        children = {c for t in frontier for c in statics.child_lists[t]} - seen
        if not children:
            break
        frontier = _by_b_level(statics, np.array(sorted(children), dtype=np.int64)).tolist()
        chosen += frontier[:limit - len(chosen)]
        seen.update(frontier)
    if len(chosen) < limit and ready and len(statics.edge_child):  # no edges: no parents
        inputs = np.isin(statics.edge_child, ready)
        parents = np.unique(statics.edge_parent[inputs])
        chosen += _by_b_level(statics, parents).tolist()[:limit - len(chosen)]
    return chosen


def job_graphs(statics: JobStatics, progress: JobProgress, candidates: Sequence[int],
               limit: int) -> list[JobGraph]:
    """One graph per candidate task position: the candidate first, then the job's relevant
    tasks without it, cut at `limit`. Rows are computed once per job and gathered."""
    relevant = relevant_tasks(statics, progress, limit)
    tasks = np.array(sorted({*relevant, *candidates}), dtype=np.int64)
    row_of = {task: row for row, task in enumerate(tasks.tolist())}
    status = np.where(progress.finished[tasks], FINISHED,
                      np.where(progress.ready[tasks], READY, BLOCKED)).astype(np.int8)
    table = _Table(_features(statics, tasks, status), _positions(statics, tasks), status)
    built: dict[int, JobGraph] = {}
    for candidate in candidates:
        if candidate not in built:
            order = [candidate, *(t for t in relevant if t != candidate)][:limit]
            built[candidate] = table.gather([row_of[t] for t in order], order, limit)
    return [built[candidate] for candidate in candidates]


@dataclass(frozen=True)
class _Table:
    """Rows of every task some candidate's graph may hold."""

    features: npt.NDArray[np.float32]
    positions: npt.NDArray[np.float32]
    status: npt.NDArray[np.int8]

    def gather(self, rows: list[int], order: list[int], limit: int) -> JobGraph:
        """The graph of these rows (the candidate's first), padded to `limit` slots."""
        used = len(rows)
        graph = np.zeros((limit, GRAPH.dim), dtype=np.float32)
        graph[:used] = self.features[rows]
        graph[0, GRAPH.index("is_candidate")] = 1.0
        place = np.zeros((limit, POSITION.dim), dtype=np.float32)
        place[:used] = self.positions[rows]
        valid = np.zeros(limit, dtype=np.bool_)
        valid[:used] = True
        slots = np.full(limit, EMPTY, dtype=np.int8)
        slots[:used] = self.status[rows]
        return JobGraph(graph, place, valid, slots, np.array(order, dtype=np.int64))


def _features(statics: JobStatics, order: Ints,
              status: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    columns: dict[str, npt.ArrayLike] = {
        "cpu_request_cores": statics.cpu[order],
        "memory_request_gib": statics.memory[order] / GIB,
        "gpu_request": statics.gpus[order],
        "runtime_log1p_s": np.log1p(statics.runtime[order]),
        "instances_log1p": np.log1p(statics.instances[order]),
        "io_intensity": statics.io_intensity[order],
        "membw_intensity": statics.membw_intensity[order],
        "comm_share": statics.comm_share[order],
        "comm_group_member": statics.group[order] >= 0,
        "is_candidate": 0.0,  # set on the candidate's own slot
        **{f"status_{name}": status == code for code, name in enumerate(TASK_STATUSES)},
    }
    return GRAPH.stack(columns, len(order))


def _positions(statics: JobStatics, order: Ints) -> npt.NDArray[np.float32]:
    critical = statics.critical_path_s
    columns: dict[str, npt.ArrayLike] = {
        "depth_share": statics.depth[order] / max(1.0, statics.max_depth),
        "parents_log1p": np.log1p(statics.parents[order]),
        "children_log1p": np.log1p(statics.children[order]),
        "b_level_share": statics.b_level[order] / critical if critical > 0 else 1.0,
    }
    return POSITION.stack(columns, len(order))
