"""Plain-data views for scheduler tests, on the reference view `core.snapshot`.

`cluster_view` builds a ClusterSnapshot; `apply` returns the view after a placement (and
refuses one that does not fit); `TinyRun` is a minimal event loop (no start-up
delay, no physics: a pod runs runtime / cpu_speed seconds from its binding, children are
created the instant their last parent ends) that records every placement, so a test can compare
a scheduler's whole placement sequence with one worked out by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.scheduler import Placement, Scheduler
from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.types import Cluster, Job, NodeSpec, Resources, Task
from dagpilot.core.view import NodeSignals, PodRef

GIB = 2**30


def node(name: str, cpu: float, memory_gib: float = 16, **fields: object) -> NodeSpec:
    return NodeSpec(name, Resources(cpu, int(memory_gib * GIB)), **fields)  # type: ignore[arg-type]


def task(task_id: str, cpu: float, runtime_s: float, parents: Sequence[str] = (),
         memory_gib: float = 1, **fields: object) -> Task:
    return Task(task_id, task_id, runtime_s, Resources(cpu, int(memory_gib * GIB)),
                parents=tuple(parents), **fields)  # type: ignore[arg-type]


def job(job_id: str, tasks: Sequence[Task], arrival_s: float = 0.0, priority: int = 0) -> Job:
    draft = JobDraft("test", job_id, arrival_s=arrival_s, priority=priority)
    for one in tasks:
        draft.add(one, one.id)
    return build(draft)


def cluster_view(nodes: Sequence[NodeSpec], pending: Sequence[PodRef] = (),
                 now_s: float = 0.0) -> ClusterSnapshot:
    return ClusterSnapshot.of(Cluster("test", tuple(nodes)), pending, now_s)


def pods_of(one_job: Job, task_ids: Sequence[str], first_uid: int = 0,
            created_s: float | None = None) -> list[PodRef]:
    created = one_job.arrival_s if created_s is None else created_s
    return [PodRef(first_uid + i, one_job, one_job.task(t), 0, created)
            for i, t in enumerate(task_ids)]


def with_node(view: ClusterSnapshot, name: str, **changes: object) -> ClusterSnapshot:
    return view.with_node(name, **changes)


def apply(view: ClusterSnapshot, placement: Placement) -> ClusterSnapshot:
    """The view after binding; ValueError when the pod is not pending or does not fit."""
    return view.bound(placement)


def drain(scheduler: Scheduler,
          view: ClusterSnapshot) -> tuple[ClusterSnapshot, list[tuple[str, str]]]:
    """Calls decide until None, applying each placement: (final view, [(pod, node)])."""
    placed = []
    while (placement := scheduler.decide(view)) is not None:
        view = apply(view, placement)
        placed.append((placement.pod.name, placement.node))
    return view, placed


@dataclass
class _Running:
    pod: PodRef
    node: str
    end_s: float


class TinyRun:
    """Jobs on a cluster under a scheduler, events in time order, every placement recorded."""

    def __init__(self, jobs: Sequence[Job], nodes: Sequence[NodeSpec], scheduler: Scheduler,
                 seed: int = 0) -> None:
        self.jobs = tuple(jobs)
        self.view = cluster_view(nodes)
        self.scheduler = scheduler
        scheduler.reset(self.view.cluster, np.random.default_rng(seed))
        self._uid = 0
        self._running: list[_Running] = []
        self._done: dict[str, set[str]] = {j.id: set() for j in self.jobs}
        self.placements: list[tuple[float, str, str]] = []

    def _create(self, one_job: Job, one_task: Task) -> None:
        pods = [PodRef(self._uid + i, one_job, one_task, i, self.view.now_s)
                for i in range(one_task.instances)]
        self._uid += len(pods)
        self.view = self.view.created(pods)

    def _sample(self) -> None:
        """Fresh metrics at every decision point: busy cores = bound cores."""
        self.view = self.view.with_signals([NodeSignals(self.view.now_s, cpu_used=n.allocated.cpu)
                                            for n in self.view.nodes])

    def _finish(self, done: _Running) -> None:
        self._running.remove(done)
        self.view = self.view.released(done.pod)
        pod_job, pod_task = done.pod.job, done.pod.task
        siblings = [r for r in self._running if r.pod.job is pod_job and r.pod.task is pod_task]
        if siblings or any(p.task is pod_task and p.job is pod_job for p in self.view.pending):
            return
        finished = self._done[pod_job.id]
        finished.add(pod_task.id)
        self.view = self.view.finished_task(pod_job.id, pod_task.id)
        for child_id in pod_task.children:
            child = pod_job.task(child_id)
            if all(parent in finished for parent in child.parents):
                self._create(pod_job, child)

    def run(self, until_s: float = 1e9) -> list[tuple[float, str, str]]:
        arrivals = sorted(self.jobs, key=lambda j: j.arrival_s)
        while arrivals or self._running or self.view.pending:
            times = [r.end_s for r in self._running] + [j.arrival_s for j in arrivals[:1]]
            if not times or min(times) > until_s:
                break
            now = min(times)
            self.view = self.view.at(now)
            for ended in [r for r in self._running if r.end_s == now]:
                self._finish(ended)
            while arrivals and arrivals[0].arrival_s == now:
                arriving = arrivals.pop(0)
                for source in (t for t in arriving.tasks if not t.parents):
                    self._create(arriving, source)
            self._sample()
            self._decide()
        return self.placements

    def _decide(self) -> None:
        while (placement := self.scheduler.decide(self.view)) is not None:
            self.view = apply(self.view, placement)
            speed = self.view.cluster.node(placement.node).cpu_speed
            end = self.view.now_s + placement.pod.runtime_s / speed
            self._running.append(_Running(placement.pod, placement.node, end))
            self.placements.append((self.view.now_s, placement.pod.name, placement.node))


def diamond(y_runtime_s: float = 20, inputs: tuple[int, int, int] = (0, 0, 0)) -> Job:
    """s (1 cpu, 10 s) -> x (2 cpu, 30 s), y (1 cpu, y_runtime_s), z (1 cpu, 5 s) -> t (1 cpu,
    10 s); 1 GiB each; `inputs` are the read bytes of x, y and z."""
    return job("J", [
        task("s", 1, 10),
        task("x", 2, 30, ["s"], read_bytes=inputs[0]),
        task("y", 1, y_runtime_s, ["s"], read_bytes=inputs[1]),
        task("z", 1, 5, ["s"], read_bytes=inputs[2]),
        task("t", 1, 10, ["x", "y", "z"]),
    ])


def two_nodes(b_speed: float = 1.0) -> list[NodeSpec]:
    """a: 4 cpu, b: 2 cpu, 16 GiB each."""
    return [node("a", 4), node("b", 2, cpu_speed=b_speed)]
