"""Refuse, before a run starts, a benchmark whose runs could only report nothing.

A task that no node of the cluster can ever hold would wait forever and the run would end at
its horizon with nothing to say why. The check is on requests against allocatable (CPU, memory,
GPUs of the requested model), the same amounts NodeResourcesFit compares; labels and taints
are left to the schedulers.

Poisson arrivals that bring no job before the horizon (a rate of a job an hour and a 10-minute
horizon) would make every figure 0: refused with the rate and a horizon that would do.

A job longer, even at ideal speed, than a run can stay busy (sim/sampling.py: MAX_SAMPLES
samples, one every sample_interval_s) would have every run end at that limit with the job cut
short, its figures meaningless: refused, unless a horizon ends the runs sooner, with the
sampling interval that would do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dagpilot.core.config import SimSettings
from dagpilot.core.errors import DagpilotError, SpecError
from dagpilot.core.types import Cluster, Job, NodeSpec, Resources, Task
from dagpilot.sim.sampling import MAX_SAMPLES

GIB = 2**30


class NeverFits(DagpilotError):
    """A task needs more than any node offers."""

    def __init__(self, job: Job, task: Task, cluster: Cluster) -> None:
        self.job_id = job.id
        self.task_id = task.id
        largest = cluster.largest_node
        message = (f"task {task.id!r} of job {job.id!r} needs {describe(task.requests)}, more "
                   f"than any node of cluster {cluster.name!r} offers; the largest node is "
                   f"{largest.name} ({describe(largest.allocatable)})")
        gpu_node = _most_gpus(cluster, task.requests.gpu_model)
        if task.requests.gpus and gpu_node is not None and gpu_node is not largest:
            message += f"; the node with the most such GPUs is {gpu_node.name} " \
                       f"({describe(gpu_node.allocatable)})"
        elif task.requests.gpus and gpu_node is None:
            message += f"; no node has {task.requests.gpu_model or 'any'} GPUs"
        super().__init__(message)


class EmptyCluster(DagpilotError):
    def __init__(self, cluster: Cluster) -> None:
        super().__init__(f"cluster {cluster.name!r} has no nodes")


def check_fits(jobs: Sequence[Job], cluster: Cluster) -> None:
    """Raise NeverFits for the first task (in job and topological order) no node can hold."""
    if not cluster.nodes:
        raise EmptyCluster(cluster)
    seen: set[Resources] = set()
    for job in jobs:
        for task in job.tasks:
            if task.requests in seen:
                continue
            if not any(fits(task.requests, node) for node in cluster.nodes):
                raise NeverFits(job, task, cluster)
            seen.add(task.requests)


def fits(requests: Resources, node: NodeSpec) -> bool:
    """Whether an empty node holds the requests, GPU model included."""
    if not requests.fits_in(node.allocatable):
        return False
    return not (requests.gpus and requests.gpu_model
                and requests.gpu_model != gpu_model(node))


def gpu_model(node: NodeSpec) -> str | None:
    return node.allocatable.gpu_model or (node.gpus[0].model if node.gpus else None)


def describe(resources: Resources) -> str:
    text = f"{resources.cpu:g} CPU, {resources.memory / GIB:.4g} GiB memory"
    if resources.gpus:
        text += f", {resources.gpus} {resources.gpu_model or ''} GPUs".replace("  ", " ")
    return text


def _most_gpus(cluster: Cluster, model: str | None) -> NodeSpec | None:
    holders = [node for node in cluster.nodes if node.allocatable.gpus
               and (model is None or gpu_model(node) == model)]
    return max(holders, key=lambda node: (node.allocatable.gpus, node.name), default=None)


EXPECTED_ARRIVALS = 10  # the suggested horizon brings about this many jobs


class NoArrivals(SpecError):
    """Poisson arrivals at this rate bring no job before the horizon."""

    def __init__(self, workloads: Sequence[str], seed: int, jobs_per_hour: float,
                 horizon_s: float) -> None:
        self.seed = seed
        self.jobs_per_hour = jobs_per_hour
        self.horizon_s = horizon_s
        expected = jobs_per_hour * horizon_s / 3600
        super().__init__(" ".join(workloads), (
            f"no job arrives within the horizon of {horizon_s:g} s for seed {seed}: the "
            f"Poisson rate is {jobs_per_hour:.3g} jobs per hour ({expected:.2g} expected in "
            f"the horizon); use a longer horizon, e.g. --horizon "
            f"{suggest_horizon(jobs_per_hour)} (about {EXPECTED_ARRIVALS} jobs), or a higher "
            f"--load"))


def check_arrivals(arrived: Sequence[Job], workloads: Sequence[str], seed: int,
                   jobs_per_hour: float, horizon_s: float | None) -> None:
    """Raise NoArrivals when a seed's arrival sequence is empty."""
    if not arrived and horizon_s is not None:
        raise NoArrivals(workloads, seed, jobs_per_hour, horizon_s)


def suggest_horizon(jobs_per_hour: float) -> str:
    """A horizon, rounded up to whole minutes or hours, that brings EXPECTED_ARRIVALS jobs."""
    if not jobs_per_hour > 0:
        return "(none: the rate is 0)"
    minutes = math.ceil(EXPECTED_ARRIVALS / jobs_per_hour * 60)
    return f"{minutes}m" if minutes < 120 else f"{math.ceil(minutes / 60)}h"


class BeyondSampleBudget(DagpilotError):
    """A job outlasts the longest a run can be busy."""

    def __init__(self, job: Job, least_s: float, settings: SimSettings) -> None:
        self.job_id = job.id
        interval = settings.sample_interval_s
        budget_s = MAX_SAMPLES * interval
        wanted = math.ceil(2 * least_s / MAX_SAMPLES)  # room for restarts and slowdowns
        super().__init__(
            f"job {job.id!r} takes at least {least_s:.4g} s ({least_s / 86_400:.1f} days) at "
            f"ideal speed, longer than a run can stay busy: it records at most "
            f"{MAX_SAMPLES:,} samples, one every {interval:g} s ({budget_s / 86_400:.1f} days); "
            f"set [sim] sample_interval_s = {wanted} or more in a --settings file (or a [sim] "
            f"horizon_s below {budget_s:.4g} s, to cut the runs short)")


def check_sample_budget(jobs: Sequence[Job], cluster: Cluster, settings: SimSettings) -> None:
    """Raise BeyondSampleBudget for the first job whose critical path, on the fastest node,
    is longer than MAX_SAMPLES ticks, unless the horizon ends every run before that."""
    budget_s = MAX_SAMPLES * settings.sample_interval_s
    fastest = max((node.cpu_speed for node in cluster.nodes), default=1.0)
    for job in jobs:
        least_s = job.critical_path_s / fastest
        if least_s > budget_s and settings.horizon_s - job.arrival_s > budget_s:
            raise BeyondSampleBudget(job, least_s, settings)
