"""Writes a run's facts into its RunRecord: pod attempts, job outcomes, cluster samples."""

from __future__ import annotations

from collections.abc import Iterable

from dagpilot.core.view import PodRef
from dagpilot.sim.cluster_state import ClusterState
from dagpilot.sim.engine import JobRun
from dagpilot.sim.pod import Phase, PodRun
from dagpilot.sim.progress import Progress
from dagpilot.sim.record import JobRecord, PodRecord, RunRecord, Sample


class Recorder:
    """Appends to one RunRecord as the run goes."""

    def __init__(self, record: RunRecord, state: ClusterState, progress: Progress) -> None:
        self.record = record
        self._state = state
        self._progress = progress
        self.last_pending = -1

    def pod_ended(self, pod: PodRun, outcome: str, now_s: float) -> None:
        ref = pod.ref
        self.record.pods.append(PodRecord(
            ref.name, ref.job.id, ref.task.id, ref.attempt, pod.node.spec.name, ref.created_s,
            pod.bound_s, pod.started_s if pod.started_s >= 0.0 else None,
            now_s if outcome == "succeeded" else None, outcome,
            None if outcome == "unfinished" else now_s))

    def pod_not_bound(self, ref: PodRef, outcome: str, now_s: float | None) -> None:
        self.record.pods.append(PodRecord(ref.name, ref.job.id, ref.task.id, ref.attempt, None,
                                          ref.created_s, None, None, None, outcome, now_s))

    def sample(self, now_s: float, tick: bool) -> None:
        """A cluster sample at a tick or when the backlog changed; one per instant at most."""
        pending = self._state.pending_count()
        if not tick and pending == self.last_pending:
            return
        self.last_pending = pending
        state, progress = self._state, self._progress
        cpu = state.cpu_capacity
        sample = Sample(now_s, pending, progress.running,
                        state.cpu_allocated_m / 1000.0 / cpu if cpu else 0.0,
                        progress.cpu_used / cpu if cpu else 0.0,
                        state.gpus_allocated / state.gpu_capacity if state.gpu_capacity else 0.0)
        samples = self.record.samples
        if samples and samples[-1].time_s == now_s:
            samples[-1] = sample
        else:
            samples.append(sample)

    def close(self, runs: Iterable[JobRun], bound: Iterable[PodRun], now_s: float) -> None:
        """Record what was still under way, and every job's outcome in input order."""
        for ref in self._state.pending:
            self.pod_not_bound(ref, "unfinished", None)
        for pod in bound:
            if pod.phase in (Phase.STARTING, Phase.RUNNING):
                self.pod_ended(pod, "unfinished", now_s)
        for run in runs:
            job = run.job
            self.record.jobs.append(JobRecord(job.id, job.arrival_s, run.finish_s,
                                              job.critical_path_s, job.total_work_core_s,
                                              failed=run.failed))
