"""Hand-made jobs, clusters and run records for the benchmark tests."""

from __future__ import annotations

import numpy as np

from dagpilot.core.scheduler import Placement, Scheduler
from dagpilot.core.types import Cluster, Job, NodeSpec, Resources, Task
from dagpilot.core.view import ClusterView
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim.record import JobRecord, RunRecord, Sample

GIB = 2**30


def chain_job(job_id: str, arrival_s: float, *steps: tuple[float, float]) -> Job:
    """A chain of tasks given as (runtime s, cores) pairs."""
    tasks = []
    for index, (runtime, cores) in enumerate(steps):
        parents = (f"t{index - 1}",) if index else ()
        children = (f"t{index + 1}",) if index + 1 < len(steps) else ()
        tasks.append(Task(f"t{index}", f"t{index}", runtime, Resources(cores, GIB),
                          parents=parents, children=children))
    return Job(job_id, tuple(tasks), arrival_s=arrival_s)


def cluster(*cores: float, memory: int = 16 * GIB, gpus: int = 0,
            gpu_model: str | None = None) -> Cluster:
    return Cluster("test", tuple(
        NodeSpec(f"node-{index}", Resources(count, memory, gpus, gpu_model if gpus else None))
        for index, count in enumerate(cores)))


def record(scheduler: str = "s", seed: int = 0, *, end_s: float = 200.0,
           jobs: list[JobRecord] | None = None,
           backlog: list[tuple[float, int]] | None = None) -> RunRecord:
    """A run with the given jobs and (time, pending) samples; utilisation 0.5 throughout."""
    run = RunRecord(scheduler, seed, physics=True, end_s=end_s)
    run.jobs.extend(jobs or [])
    run.samples.extend(Sample(time, pending, 0, 0.5, 0.25, 0.0)
                       for time, pending in (backlog or []))
    return run


class StopAfter:
    """kube-default that presses Ctrl-C on its `calls`-th decision."""

    name = "stopper"

    def __init__(self, calls: int) -> None:
        self._inner: Scheduler = SCHEDULERS["kube-default"]()
        self._left = calls

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        self._inner.reset(cluster, rng)

    def decide(self, view: ClusterView) -> Placement | None:
        self._left -= 1
        if self._left <= 0:
            raise KeyboardInterrupt
        return self._inner.decide(view)
