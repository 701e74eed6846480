"""The workflow engine (Argo, Nextflow): releases a task when its parents have finished, creates
its pods on the engine's polling grid, and resubmits pods that were killed.

Overheads, fitted to real runs (docs/SIMULATOR.md):
- polling: each job's engine wakes every `poll_interval_s` (with a random phase per job); work
  it finds (a job that arrived, a task whose parents finished, a pod to retry) gets its pods
  created at that wake-up plus `submit_latency_s`;
- start-up: a bound pod starts running after a log-normal delay (image pull, container start)
  with median `startup_median_s` and log-space deviation `startup_sigma`;
- `engine_queue_size` (Nextflow's queueSize) caps the pods of one job in flight at once;
- a killed pod is retried after a back-off (retry_backoff_s doubling per attempt, capped).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from dagpilot.core.config import SimSettings
from dagpilot.core.types import Job, Task
from dagpilot.core.view import PodRef
from dagpilot.sim.kernel import Kernel, Order
from dagpilot.sim.streams import NormalBuffer


def next_poll(now_s: float, phase_s: float, interval_s: float) -> float:
    """The first wake-up of a poller (phase + k x interval) at or after `now_s`."""
    if interval_s <= 0.0:
        return now_s
    wake = phase_s + math.ceil((now_s - phase_s) / interval_s) * interval_s
    return wake if wake >= now_s else now_s  # guard against rounding below now


def poll_phases(rng: np.random.Generator, interval_s: float, jobs: int) -> np.ndarray:
    """Each job's polling phase: uniform over one interval (all 0 without polling)."""
    return rng.uniform(0.0, interval_s, jobs) if interval_s > 0 else np.zeros(jobs)


class StartupDelays:
    """Pod start-up times: median x exp(sigma x N(0, 1)), from the run's start-up stream."""

    __slots__ = ("_median", "_normals", "_sigma")

    def __init__(self, rng: np.random.Generator, median_s: float, sigma: float) -> None:
        self._normals = NormalBuffer(rng)
        self._median = median_s
        self._sigma = sigma

    def draw(self) -> float:
        if self._median <= 0.0:
            return 0.0
        if self._sigma <= 0.0:
            return self._median
        return self._median * math.exp(self._sigma * self._normals.draw())


class JobRun:
    """The engine's bookkeeping for one job."""

    __slots__ = ("arrived", "failed", "finish_s", "in_flight", "index", "instances_left", "job",
                 "missing", "oom_kills", "phase_s", "queue", "submit_scheduled", "tasks_left")

    def __init__(self, job: Job, index: int, phase_s: float) -> None:
        self.job = job
        self.index = index
        self.phase_s = phase_s
        self.missing = {task.id: len(task.parents) for task in job.tasks}
        self.instances_left = {task.id: task.instances for task in job.tasks}
        self.tasks_left = len(job.tasks)
        self.queue: deque[tuple[Task, int, int]] = deque()  # (task, instance, attempt) to create
        self.in_flight = 0  # pods created and not yet ended
        self.submit_scheduled = False
        self.arrived = False
        self.finish_s: float | None = None
        self.failed = False
        self.oom_kills: dict[tuple[str, int], int] = {}

    @property
    def ended(self) -> bool:
        return self.finish_s is not None or self.failed


class Engine:
    """Releases tasks of every job and creates their pods; told when pods end."""

    def __init__(self, kernel: Kernel, settings: SimSettings, rng: np.random.Generator, *,
                 create_pod: Callable[[PodRef], None],
                 task_done: Callable[[JobRun, Task], None],
                 job_ended: Callable[[JobRun], None]) -> None:
        self._kernel = kernel
        self._settings = settings
        self._rng = rng
        self._create_pod = create_pod
        self._task_done = task_done
        self._job_ended = job_ended
        self.runs: list[JobRun] = []
        self._next_uid = 0
        # Jobs arrived and not finished; a failed job never completes, so it stays counted (the
        # reward must not make failing a job look cheap).
        self.in_system = 0
        self.ended = 0
        self.outstanding = 0  # arrival and submit events ahead: work the engine will do unasked
        self.arrived = 0
        self._arrivals: list[float] = []  # every job's arrival event time, ascending

    def add(self, jobs: Sequence[Job]) -> None:
        phases = poll_phases(self._rng, self._settings.poll_interval_s, len(jobs))
        for index, (job, phase) in enumerate(zip(jobs, phases.tolist(), strict=True)):
            run = JobRun(job, index, phase)
            self.runs.append(run)
            self.outstanding += 1
            arrival_s = max(job.arrival_s, self._kernel.now_s)
            self._arrivals.append(arrival_s)
            self._kernel.schedule(arrival_s, Order.ARRIVAL, self._on_arrival, run)
        self._arrivals.sort()

    def next_arrival_s(self) -> float:
        """When the next job arrives (arrivals run in time order); infinity when all have."""
        arrivals = self._arrivals
        return arrivals[self.arrived] if self.arrived < len(arrivals) else math.inf

    def only_arrivals_ahead(self) -> bool:
        """Whether all the engine has ahead is jobs to arrive: no pod to create or retry."""
        return self.outstanding == len(self._arrivals) - self.arrived

    def _on_arrival(self, run: JobRun, _: int) -> None:
        self.outstanding -= 1
        self.arrived += 1
        run.arrived = True
        self.in_system += 1
        if not run.job.tasks:
            self._finish(run)
            return
        for task in run.job.tasks:
            if not task.parents:
                self._release(run, task)

    def _release(self, run: JobRun, task: Task) -> None:
        run.queue.extend((task, instance, 0) for instance in range(task.instances))
        self._wake(run)

    def _wake(self, run: JobRun) -> None:
        """Make sure the job's engine creates its queued pods at its next poll."""
        limit = self._settings.engine_queue_size
        if run.submit_scheduled or not run.queue or (limit > 0 and run.in_flight >= limit):
            return
        run.submit_scheduled = True
        self.outstanding += 1
        settings, now = self._settings, self._kernel.now_s
        when = next_poll(now, run.phase_s, settings.poll_interval_s) + settings.submit_latency_s
        self._kernel.schedule(when, Order.SUBMIT, self._on_submit, run)

    def _on_submit(self, run: JobRun, _: int) -> None:
        self.outstanding -= 1
        run.submit_scheduled = False
        if run.failed:
            return
        limit, now = self._settings.engine_queue_size, self._kernel.now_s
        while run.queue and (limit <= 0 or run.in_flight < limit):
            task, instance, attempt = run.queue.popleft()
            self._next_uid += 1
            run.in_flight += 1
            self._create_pod(PodRef(self._next_uid, run.job, task, instance, now, attempt))

    def succeeded(self, run: JobRun, task: Task) -> None:
        """A pod of `task` finished its work."""
        run.in_flight -= 1
        if run.failed:
            return
        left = run.instances_left[task.id] - 1
        run.instances_left[task.id] = left
        if left == 0:
            self._task_finished(run, task)
        if not run.ended:
            self._wake(run)

    def _task_finished(self, run: JobRun, task: Task) -> None:
        self._task_done(run, task)
        run.tasks_left -= 1
        if run.tasks_left == 0:
            self._finish(run)
            return
        missing, job = run.missing, run.job
        for child in task.children:
            missing[child] -= 1
            if missing[child] == 0:
                self._release(run, job.task(child))

    def killed(self, run: JobRun, ref: PodRef, oom: bool) -> bool:
        """A pod was killed (OOM or node fault). Returns whether it will be retried; an instance
        OOM-killed more than `oom_retry_limit` times fails its job instead. A pod lost with its
        node is retried only after Kubernetes evicts it (`faults.eviction_delay_s`): until then
        its engine sees it running."""
        run.in_flight -= 1
        if run.ended:
            return False
        if oom:
            key = (ref.task.id, ref.instance)
            kills = run.oom_kills.get(key, 0) + 1
            run.oom_kills[key] = kills
            if kills > self._settings.oom_retry_limit:
                self._fail(run)
                return False
        self.outstanding += 1
        at = self._kernel.now_s + self.backoff_s(ref.attempt)
        if not oom:
            at += self._settings.faults.eviction_delay_s
        self._kernel.schedule(at, Order.ARRIVAL, self._on_retry, (run, ref))
        return True

    def backoff_s(self, attempt: int) -> float:
        """Wait before retrying a pod killed at `attempt`: base x 2^attempt, capped."""
        settings = self._settings
        return min(settings.retry_backoff_s * 2.0 ** min(attempt, 30), settings.retry_backoff_max_s)

    def _on_retry(self, event: tuple[JobRun, PodRef], _: int) -> None:
        self.outstanding -= 1
        run, ref = event
        if run.ended:
            return
        run.queue.append((ref.task, ref.instance, ref.attempt + 1))
        self._wake(run)

    def _finish(self, run: JobRun) -> None:
        run.finish_s = self._kernel.now_s
        self.in_system -= 1
        self.ended += 1
        self._job_ended(run)

    def _fail(self, run: JobRun) -> None:
        run.failed = True
        run.queue.clear()
        self.ended += 1
        self._job_ended(run)
