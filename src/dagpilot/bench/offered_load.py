"""The load a Poisson arrival process offers, per resource, and the bottleneck it is set on.

`--load 0.8` means: the arrivals ask, on average, for 0.8 of the cluster's *busiest* resource.
The arrival module sets its rate on CPU cores alone; a workload whose GPU or memory demand is
larger relative to the cluster would then be offered more than the cluster can ever serve (the
built-in mix on the built-in cluster asks for about 3.5 times its GPUs at 0.8 of its cores),
queues would only grow, and no scheduler could be told from another. So the harness hands the
arrival process a *CPU-equivalent capacity*, scaled down by the bottleneck's share.

Demand per job: core-seconds (requests x the time a pod holds them), byte-seconds of memory
requests and GPU-seconds, over every instance; capacity: the cluster's cores, memory and GPUs.
A pod holds its requests from binding, through its start-up (image pull, container start), to
its end, so `startup_s` (the simulator's median start-up) is added to every pod's runtime.
For long tasks that changes little; for TPC-H's instances (median runtime 0.04 s against a 3 s
start-up) it is most of the demand, and leaving it out offered such workloads many times what
the cluster can serve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagpilot.core.types import Cluster, Job, Task


@dataclass(frozen=True, slots=True)
class OfferedLoad:
    """Mean demand of a job over the cluster's capacity (seconds of the whole resource)."""

    cpu_s: float
    memory_s: float
    gpu_s: float

    @property
    def bottleneck(self) -> str:
        return max(("cpu", self.cpu_s), ("memory", self.memory_s), ("gpu", self.gpu_s),
                   key=lambda pair: pair[1])[0]

    @property
    def busiest_s(self) -> float:
        return max(self.cpu_s, self.memory_s, self.gpu_s)

    def shares(self, rate_per_s: float) -> dict[str, float]:
        """The share of each resource asked for at an arrival rate."""
        return {"cpu": rate_per_s * self.cpu_s, "memory": rate_per_s * self.memory_s,
                "gpu": rate_per_s * self.gpu_s}


def held_s(task: Task, startup_s: float) -> float:
    """Seconds the task's pods hold their requests: every instance's runtime and start-up."""
    return task.total_runtime_s + task.instances * startup_s


def offered_load(jobs: Sequence[Job], cluster: Cluster, startup_s: float = 0.0) -> OfferedLoad:
    """Mean per-job demand of each resource, in seconds of the whole cluster's resource."""
    count = max(len(jobs), 1)
    capacity = cluster.capacity
    cpu = memory = gpu = 0.0
    for job in jobs:
        for task in job.tasks:
            held = held_s(task, startup_s)
            cpu += held * task.requests.cpu
            memory += held * task.requests.memory
            gpu += held * task.requests.gpus

    def share(total: float, available: float) -> float:
        return total / count / available if available > 0 else 0.0

    return OfferedLoad(cpu_s=share(cpu, capacity.cpu),
                       memory_s=share(memory, float(capacity.memory)),
                       gpu_s=share(gpu, float(capacity.gpus)))


def cpu_equivalent_cores(jobs: Sequence[Job], cluster: Cluster, startup_s: float = 0.0) -> float:
    """The cores to give the arrival module's rate (set on the jobs' core-seconds of runtime)
    so that the busiest resource, start-ups included, gets the load."""
    runtime_only = offered_load(jobs, cluster)
    demand = offered_load(jobs, cluster, startup_s)
    if demand.busiest_s <= 0 or runtime_only.cpu_s <= 0:
        return cluster.capacity.cpu
    return cluster.capacity.cpu * runtime_only.cpu_s / demand.busiest_s


def jobs_per_hour(jobs: Sequence[Job], cluster: Cluster, load: float,
                  startup_s: float = 0.0) -> float:
    """The Poisson rate that offers `load` of the busiest resource (0 when nothing is asked)."""
    demand = offered_load(jobs, cluster, startup_s)
    return load / demand.busiest_s * 3600 if demand.busiest_s > 0 else 0.0
