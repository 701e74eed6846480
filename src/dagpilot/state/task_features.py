"""Per-candidate-pod features (schema.TASK): what the pod asks for, where it stands in its
DAG, how far its job has come, how it uses the machine, and whom it talks to.

What depends on the task alone is stacked once per job (`task_table`); per decision only the
figures that move (the job's progress, where it runs, the pod's wait and attempt) are
computed, for all candidates at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import Job
from dagpilot.core.view import PodRef
from dagpilot.state.job_statics import JobProgress, JobStatics
from dagpilot.state.node_statics import gpu_model_slot
from dagpilot.state.schema import GPU_MODEL_SLOTS, TASK, TASK_CLASSES, FixedColumns

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
GIB = float(2**30)
MB = 1e6


@dataclass(frozen=True)
class JobNow:
    """One job at this decision: its DAG arrays, the fixed task columns, its progress, and
    the nodes its pods run on."""

    statics: JobStatics
    table: FixedColumns  # task_table(job, statics)
    progress: JobProgress
    hosts: Ints  # node indices
    racks: int  # distinct racks and zones among the hosts
    zones: int


def _slots(prefix: str, slots: tuple[str, ...], chosen: list[int | None]) -> dict[str, Floats]:
    picked = np.array([-1 if c is None else c for c in chosen], dtype=np.int64)
    return {f"{prefix}_{slot}": (picked == position).astype(np.float64)
            for position, slot in enumerate(slots)}


def task_table(job: Job, statics: JobStatics) -> FixedColumns:
    """The TASK columns that depend on the task alone, one row per task of the job."""
    tasks = job.tasks
    critical = statics.critical_path_s
    group = statics.group
    sizes = np.append(statics.group_size, 0.0)  # group -1 (none) reads the appended 0
    peak = [t.peak_memory / t.requests.memory if t.peak_memory is not None
            and t.requests.memory > 0 else 1.0 for t in tasks]
    cpu_intensity = np.array([t.cpu_intensity for t in tasks], dtype=np.float64)
    columns: dict[str, npt.ArrayLike] = {
        "cpu_request_cores": statics.cpu,
        "memory_request_gib": statics.memory / GIB,
        "gpu_request": statics.gpus,
        "peak_memory_share": peak,
        "instances_log1p": np.log1p(statics.instances),
        "depth": statics.depth,
        "parents": statics.parents,
        "children": statics.children,
        "b_level_log1p_s": np.log1p(statics.b_level),
        "b_level_share": statics.b_level / critical if critical > 0 else 1.0,
        "job_tasks_log1p": np.log1p(len(tasks)),
        "cpu_intensity": cpu_intensity,
        "io_intensity": statics.io_intensity,
        "membw_intensity": statics.membw_intensity,
        "membw_bound_cores": statics.membw_intensity * statics.cpu * cpu_intensity,
        "comm_share": statics.comm_share,
        "comm_group_member": group >= 0,
        "comm_group_size_log1p": np.log1p(sizes[group]),
        "priority": [t.priority + job.priority for t in tasks],
        **_slots("gpu_model", GPU_MODEL_SLOTS,
                 [gpu_model_slot(t.requests.gpu_model) if t.requests.gpus else None
                  for t in tasks]),
        **_slots("class", TASK_CLASSES, [TASK_CLASSES.index(t.task_class.value) for t in tasks]),
    }
    return TASK.fixed(columns, len(tasks))


def task_features(candidates: Sequence[PodRef], jobs: Mapping[str, JobNow],
                  now_s: float) -> npt.NDArray[np.float32]:
    """(candidates, TASK.dim) float32, raw (not normalised)."""
    count = len(candidates)
    if not count:
        return np.zeros((0, TASK.dim), dtype=np.float32)
    inputs = task_inputs(candidates, jobs)
    return TASK.stack(moving_columns(inputs, now_s), count, inputs.fixed)


@dataclass(frozen=True)
class TaskInputs:
    """What the candidates' rows are computed from, one entry per candidate (`stacked`: the
    candidates of several decisions one after another, `state.lane_tasks`)."""

    candidates: Sequence[PodRef]
    per_job: list[JobNow]  # each candidate's job
    tasks: Ints  # each candidate's task position in its job
    fixed: FixedColumns  # the columns of the task alone, gathered


def task_inputs(candidates: Sequence[PodRef], jobs: Mapping[str, JobNow]) -> TaskInputs:
    """The candidates' (at least one) jobs and task positions, and their fixed columns
    gathered."""
    per_job = [jobs[pod.job.id] for pod in candidates]
    positions = [job.statics.index_of[pod.task.id] for pod, job in zip(
        candidates, per_job, strict=True)]
    fixed = np.stack([job.table.array[task] for job, task in zip(per_job, positions, strict=True)])
    # every job fixes the same columns
    return TaskInputs(candidates, per_job, np.array(positions, dtype=np.int64),
                      FixedColumns(per_job[0].table.names, fixed))


def moving_columns(inputs: TaskInputs, now_s: float | Floats) -> dict[str, npt.ArrayLike]:
    """The TASK columns not fixed; `now_s` per candidate or one for all. Each figure is the
    candidate's own, element-wise, whichever candidates are computed with it."""
    return _moving(inputs.candidates, inputs.per_job, inputs.tasks, now_s)


def _moving(candidates: Sequence[PodRef], per_job: list[JobNow], tasks: Ints,
            now_s: float | Floats) -> dict[str, npt.ArrayLike]:
    """The columns that change between decisions, or between the pods of one task."""
    runtime = np.array([pod.runtime_s for pod in candidates], dtype=np.float64)
    moved = np.array([pod.task.read_bytes + pod.task.written_bytes for pod in candidates],
                     dtype=np.float64)
    remaining = np.array([job.progress.remaining_work for job in per_job], dtype=np.float64)
    total = np.array([job.statics.total_work for job in per_job], dtype=np.float64)
    groups = [int(job.statics.group[t]) for job, t in zip(per_job, tasks.tolist(), strict=True)]
    hosts = np.array([len(job.hosts) for job in per_job], dtype=np.float64)
    return {
        "runtime_log1p_s": np.log1p(runtime),
        "io_rate_log1p_mb_s": np.log1p(np.divide(moved / MB, runtime,
                                                 out=np.zeros_like(moved), where=runtime > 0)),
        "job_remaining_work_log1p_core_s": np.log1p(remaining),
        "job_remaining_work_share": np.divide(remaining, total, out=np.ones_like(remaining),
                                              where=total > 0),
        "job_age_log1p_s": np.log1p(np.maximum(
            0.0, now_s - np.array([pod.job.arrival_s for pod in candidates]))),
        "wait_log1p_s": np.log1p(np.maximum(
            0.0, now_s - np.array([pod.created_s for pod in candidates]))),
        "comm_group_active_share": [float(job.progress.group_active_share[g]) if g >= 0 else 0.0
                                    for job, g in zip(per_job, groups, strict=True)],
        "job_running": hosts > 0,
        "job_nodes_log1p": np.log1p(hosts),
        "job_racks": [job.racks for job in per_job],
        "job_zones": [job.zones for job in per_job],
        "attempt": [pod.attempt for pod in candidates],
    }
