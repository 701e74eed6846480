"""Lower bounds no scheduler can beat (DESIGN.md section 6), and the ratio of a result to them.

They ignore every overhead (pod start-up, polling, physics) and every packing constraint:

- a job cannot finish sooner than its critical path, run on the fastest node;
- nor sooner than its own work spread over the whole cluster: work / capacity, for CPU
  (core-seconds over cores x speed) and for GPUs (GPU-seconds over GPUs), whichever is larger;
- average JCT >= the mean over jobs of the larger of the two;
- makespan (from the first arrival) >= max(the latest arrival-plus-critical-path, the total
  work of all jobs / capacity).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagpilot.core.types import Cluster, Job


@dataclass(frozen=True, slots=True)
class Capacity:
    """What the whole cluster does per second at best."""

    core_speed: float  # sum over nodes of cores x relative CPU speed
    gpus: int
    fastest: float  # the highest relative CPU speed of any node

    @classmethod
    def of(cls, cluster: Cluster) -> Capacity:
        return cls(
            core_speed=sum(node.allocatable.cpu * node.cpu_speed for node in cluster.nodes),
            gpus=sum(node.allocatable.gpus for node in cluster.nodes),
            fastest=max((node.cpu_speed for node in cluster.nodes), default=1.0),
        )


@dataclass(frozen=True, slots=True)
class LowerBound:
    avg_jct_s: float
    makespan_s: float


def gpu_work_s(job: Job) -> float:
    """GPU-seconds of work over every instance of every task."""
    return sum(task.total_runtime_s * task.requests.gpus for task in job.tasks)


def spread_s(work_core_s: float, work_gpu_s: float, capacity: Capacity) -> float:
    """The time the work takes spread over the whole cluster (the busier resource decides)."""
    cpu = work_core_s / capacity.core_speed if capacity.core_speed > 0 else 0.0
    gpu = work_gpu_s / capacity.gpus if capacity.gpus > 0 else 0.0
    return max(cpu, gpu)


def critical_path_bound_s(job: Job, capacity: Capacity) -> float:
    return job.critical_path_s / capacity.fastest


def job_bound_s(job: Job, capacity: Capacity) -> float:
    """No schedule finishes this job, alone on the cluster, sooner than this."""
    return max(critical_path_bound_s(job, capacity),
               spread_s(job.total_work_core_s, gpu_work_s(job), capacity))


def lower_bound(jobs: Sequence[Job], cluster: Cluster) -> LowerBound:
    """The bounds on average JCT and makespan for these jobs (with their arrivals)."""
    if not jobs:
        return LowerBound(0.0, 0.0)
    capacity = Capacity.of(cluster)
    first = min(job.arrival_s for job in jobs)
    avg_jct = sum(job_bound_s(job, capacity) for job in jobs) / len(jobs)
    latest_path = max(job.arrival_s - first + critical_path_bound_s(job, capacity)
                      for job in jobs)
    all_work = spread_s(sum(job.total_work_core_s for job in jobs),
                        sum(gpu_work_s(job) for job in jobs), capacity)
    return LowerBound(avg_jct_s=avg_jct, makespan_s=max(latest_path, all_work))


def ratio(value: float, bound: float) -> float:
    """value / bound; 0 when the bound is 0 (an empty workload)."""
    return value / bound if bound > 0 else 0.0
