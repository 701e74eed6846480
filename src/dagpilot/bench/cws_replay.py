"""Replay of one recorded CWS Nextflow run in the simulator, for the fidelity check.

The recorded run becomes one job arriving at 0 on the run's cluster: its tasks keep their
recorded runtimes (`realtime`) and requests, the task DAG rebuilt by the `cws` loader, and the
scheduler of the run's strategy (`original` = `kube-default`). Physics stays off: a recorded
runtime already contains whatever interference the real node caused, so the simulator must not
add its own; what is left to simulate is the engine and Kubernetes overheads and the
scheduling.

The simulated makespan is the last pod end minus the first pod creation, as `runs.csv` takes
the last `complete` minus the first `submit`.

DAG repair. The process DAG that Nextflow draws misses some dependencies (channel operators
that collect a whole stage, inputs staged from the network), so some tasks were submitted long
after their rebuilt parents completed, or long after the run began when they have none. Such a
task (submitted more than `late_s` after it was ready by the rebuilt DAG, where polling alone
accounts for at most 11.5 s with the fitted overheads) gets as extra parents the tasks whose
recorded completion came last before its submission: the event that released it. The edges
agree with the recorded times (`submit` >= parent `complete`), as the loader's own edges do,
and never close a cycle.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from dagpilot.core.config import SimSettings
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.types import Cluster, Job, Task
from dagpilot.native import simulate
from dagpilot.schedulers import build as build_scheduler
from dagpilot.schedulers import cws_strategy
from dagpilot.sim import RunRecord

LATE_S = 15.0
"""A task submitted this long after it was ready by the rebuilt DAG is missing a parent."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """One recorded run replayed: its identity, the simulated makespan, the DAG repair."""

    job_id: str
    workflow: str
    strategy: str
    rep: int
    simulated_s: float | None  # None when the simulated run did not finish
    inferred_edges: int


def replay(job: Job, cluster: Cluster, settings: SimSettings, seed: int,
           late_s: float | None = LATE_S) -> Replayed:
    """Simulate one recorded run with its strategy's scheduler (settings as given: the caller
    chooses physics and overheads). `late_s = None` skips the DAG repair."""
    strategy = job.label("strategy")
    repaired, inferred = repair_dag(job, late_s) if late_s is not None else (job, 0)
    record = simulate([dataclasses.replace(repaired, arrival_s=0.0)], cluster,
                      build_scheduler(cws_strategy(strategy)), settings, seed)
    return Replayed(job.id, job.label("workflow"), strategy, int(job.label("rep", "0")),
                    simulated_makespan(record), inferred)


def simulated_makespan(record: RunRecord) -> float | None:
    """Last pod end minus first pod creation; None when a job did not finish."""
    if not record.pods or any(job.finish_s is None for job in record.jobs):
        return None
    first = min(pod.created_s for pod in record.pods)
    last = max(pod.ended_s for pod in record.pods if pod.ended_s is not None)
    return last - first


def repair_dag(job: Job, late_s: float) -> tuple[Job, int]:
    """The job with timing-inferred parents for its late tasks (module docstring), and how many
    tasks got them. A job whose tasks lack recorded submit or complete times is left alone."""
    times = _recorded_times(job.tasks)
    if times is None:
        return job, 0
    start_s = min(submit for submit, _ in times.values())
    ends = sorted((complete, task_id) for task_id, (_, complete) in times.items())
    end_times = [end for end, _ in ends]
    children = {task.id: list(task.children) for task in job.tasks}
    parents = {task.id: task.parents for task in job.tasks}
    repaired = 0
    for task in job.tasks:
        submit_s = times[task.id][0]
        ready_s = max((times[up][1] for up in task.parents), default=start_s)
        if submit_s - ready_s <= late_s:
            continue
        extra = _releasing_tasks(task, submit_s, ends, end_times, children)
        if extra:
            parents[task.id] = (*task.parents, *extra)
            for up in extra:
                children[up].append(task.id)
            repaired += 1
    if not repaired:
        return job, 0
    return _rebuilt(job, parents), repaired


def _recorded_times(tasks: Sequence[Task]) -> dict[str, tuple[float, float]] | None:
    """(submit, complete) of every task, or None when any is not recorded."""
    times: dict[str, tuple[float, float]] = {}
    for task in tasks:
        recorded = task.recorded
        if recorded is None or recorded.submit_s is None or recorded.complete_s is None:
            return None
        times[task.id] = (recorded.submit_s, recorded.complete_s)
    return times


def _releasing_tasks(task: Task, submit_s: float, ends: Sequence[tuple[float, str]],
                     end_times: Sequence[float], children: dict[str, list[str]]
                     ) -> tuple[str, ...]:
    """The tasks that completed last at or before `submit_s` (ties: all of them), leaving out
    the task itself, its parents and its descendants."""
    below = _descendants(task.id, children)
    found: list[str] = []
    last: float | None = None
    for index in range(bisect.bisect_right(end_times, submit_s) - 1, -1, -1):
        end, task_id = ends[index]
        if last is not None and end != last:
            break
        if task_id not in below and task_id not in task.parents:
            found.append(task_id)
            last = end
    return tuple(reversed(found))


def _descendants(task_id: str, children: dict[str, list[str]]) -> set[str]:
    """The task and every task below it."""
    seen = {task_id}
    stack = [task_id]
    while stack:
        for child in children[stack.pop()]:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def _rebuilt(job: Job, parents: dict[str, tuple[str, ...]]) -> Job:
    draft = JobDraft(job.source.removesuffix(f"#{job.id}") or job.id, job.id,
                     arrival_s=job.arrival_s, priority=job.priority, labels=job.labels,
                     recorded_makespan_s=job.recorded_makespan_s)
    for task in job.tasks:
        draft.add(dataclasses.replace(task, parents=parents[task.id], children=()), task.id)
    return build(draft)
