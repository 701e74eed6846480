"""One simulated run: the kernel, the cluster state, the fluid progress model and the workflow
engine wired together, advanced from one decision point to the next.

A decision point is the end of an instant (every event at one time processed) at which pods are
pending, something changed that could let one be placed (pods created, capacity freed, a node
back, fresh metrics), and some ready node has room for the smallest pending request. The caller
(the RL environment) binds placements there, then advances again.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence

from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, Job, Task
from dagpilot.core.view import PodRef
from dagpilot.sim.cluster_state import ClusterState
from dagpilot.sim.engine import Engine, JobRun, StartupDelays, next_poll
from dagpilot.sim.faults import Outage, next_iops_change, next_outage
from dagpilot.sim.input_checks import check_inputs
from dagpilot.sim.kernel import Kernel, Order
from dagpilot.sim.nodes import SimNode, StoragePool
from dagpilot.sim.pod import Phase, PodRun
from dagpilot.sim.progress import Progress
from dagpilot.sim.record import RunRecord
from dagpilot.sim.recorder import Recorder
from dagpilot.sim.sampling import MAX_SAMPLES, next_tick
from dagpilot.sim.startup import StartupSlots
from dagpilot.sim.streams import stream

log = logging.getLogger(__name__)

IDLE_ROUNDS = 2  # decision rounds with nothing in flight and nothing placed before a run stalls


class Simulation:
    """A run in progress. `state` is the ClusterView schedulers read."""

    def __init__(self, jobs: Sequence[Job], cluster: Cluster, settings: SimSettings, seed: int,
                 scheduler_name: str) -> None:
        check_inputs(jobs, cluster, settings)
        self.settings = settings
        self.switches = switches = settings.physics.effective()
        self.kernel = Kernel()
        self.state = ClusterState(cluster, self.kernel, settings.effects)
        self.progress = Progress(self.kernel, settings.effects, switches, self._on_complete)
        self.engine = Engine(self.kernel, settings, stream(seed, "engine"),
                             create_pod=self._on_pod_created, task_done=self._on_task_done,
                             job_ended=self._on_job_ended)
        self.record = RunRecord(scheduler_name, seed, settings.physics.enabled)
        self.recorder = Recorder(self.record, self.state, self.progress)
        self._startup = StartupSlots(
            StartupDelays(stream(seed, "startup"), settings.startup_median_s,
                          settings.startup_sigma),
            len(self.state.nodes), settings.startup_slots_per_node)
        self._faults_rng = stream(seed, "faults")
        self._storage_rng = stream(seed, "storage")
        self.total_jobs = len(jobs)
        self.done = False
        # job-seconds owed for failed jobs: each one's critical path, the least its rerun costs
        self.failure_cost = 0.0
        self.end_s = 0.0
        self._dirty = False  # something changed that could let a pending pod be placed
        self._tick = False  # a metrics sample was taken this instant
        self._sample_index = 0  # the grid index of the next metrics scrape (sim/sampling.py)
        self._idle = 0
        self._closed = False
        self.engine.add(jobs)
        self._runs = {run.job.id: run for run in self.engine.runs}  # for binding
        self._start_background()

    def _start_background(self) -> None:
        self.kernel.schedule(0.0, Order.SAMPLE, self._on_sample)
        if self.switches.faults:
            for node in self.state.nodes:
                self._schedule_outage(node, 0.0)
        if self.switches.storage_io:
            for pool in self.state.pools.values():
                if pool.shared:
                    self._schedule_iops_change(pool, 0.0, collapsed=False)

    # --- decisions -----------------------------------------------------------------------

    def bind(self, placement: Placement) -> None:
        """Bind a placement (checked first); its pod starts after the start-up delay, on one
        of the node's start-up slots."""
        ref, node, gpus = self.state.target(placement)
        cpu_m = self.state.bind(ref, node, gpus)
        now = self.kernel.now_s
        pod = PodRun(ref, self._runs[ref.job.id], node, gpus, cpu_m=cpu_m, now_s=now)
        node.bound[ref.uid] = pod
        self.kernel.schedule(self._startup.start_time(node.index, now), Order.START,
                             self._on_start, pod, pod.version)
        self._idle = 0

    def more_to_place(self) -> bool:
        """Whether the current decision point goes on after a placement."""
        return self.state.could_place_any()

    def advance(self) -> float:
        """Run to the next decision point or to the end of the run.

        Returns the integral of jobs in the system over the time advanced (job-seconds).
        """
        kernel, engine, state, recorder = self.kernel, self.engine, self.state, self.recorder
        if not self._in_flight() and state.pending_count():
            self._idle += 1
        cost, horizon_s, total_jobs = 0.0, self.settings.horizon_s, self.total_jobs
        # bound once: this loop runs once per simulated instant
        pending_count, next_time, run_instant = (state.pending_count, kernel.next_time,
                                                 kernel.run_instant)
        samples = self.record.samples
        while True:
            if self._tick or pending_count() != recorder.last_pending:
                recorder.sample(kernel.now_s, self._tick)
                self._tick = False
            if engine.ended == total_jobs or (
                    not (state.bound_pods or engine.outstanding or state.nodes_down)
                    and self._stalled()):
                self._finish(kernel.now_s)
                return cost
            if len(samples) >= MAX_SAMPLES:
                log.warning("run ended at %.0f s: it took the most samples a run records (%d, "
                            "one every %g s while busy); a longer [sim] sample_interval_s lets "
                            "it run longer", kernel.now_s, MAX_SAMPLES,
                            self.settings.sample_interval_s)
                self._finish(kernel.now_s)
                return cost
            next_s = next_time()
            if next_s > horizon_s:
                end_s = max(horizon_s, kernel.now_s)
                self._finish(end_s)
                return cost + engine.in_system * (end_s - kernel.now_s)
            cost += engine.in_system * (next_s - kernel.now_s)
            run_instant()
            if self._dirty:
                self._dirty = False
                if state.could_place_any():
                    return cost

    def _in_flight(self) -> bool:
        """Whether the run can change without a placement: pods bound, engine work ahead, nodes
        to come back."""
        return bool(self.state.bound_pods or self.engine.outstanding or self.state.nodes_down)

    def _stalled(self) -> bool:
        if self._in_flight():
            return False
        if not self.state.pending_count():
            return True
        if self._idle > IDLE_ROUNDS or not self.state.could_place_any():
            log.warning("run stalled at %.0f s: %d pods pending that the scheduler does not place",
                        self.kernel.now_s, self.state.pending_count())
            return True
        return False

    def _finish(self, end_s: float) -> None:
        self.done = True
        self.end_s = end_s

    def close(self) -> RunRecord:
        """Record the pods and jobs still under way, and the run's totals (once)."""
        if self._closed:
            return self.record
        self._closed = True
        self.recorder.sample(self.kernel.now_s, tick=False)
        self.recorder.close(self.engine.runs, self._bound_pods(), self.kernel.now_s)
        self.record.events = self.kernel.processed
        self.record.end_s = self.end_s if self.done else self.kernel.now_s
        return self.record

    def _bound_pods(self) -> Iterator[PodRun]:
        for node in self.state.nodes:
            yield from node.bound.values()

    # --- pods ----------------------------------------------------------------------------

    def _on_pod_created(self, ref: PodRef) -> None:
        self.state.add_pending(ref)
        self._dirty = True

    def _on_start(self, pod: PodRun, version: int) -> None:
        if pod.phase != Phase.STARTING or version != pod.version:
            return  # lost with its node while starting
        if not pod.node.ready:  # bound to a NotReady node (tolerated): wait for it
            pod.node.waiting.append(pod)
            return
        for victim in self.progress.start(pod):
            self._killed(victim, "oom-killed")

    def _on_complete(self, pod: PodRun, version: int) -> None:
        if version != pod.version or pod.phase != Phase.RUNNING:
            return  # stale: its rate changed, or it was killed
        self.progress.stop(pod)
        pod.phase = Phase.SUCCEEDED
        now = self.kernel.now_s
        del pod.node.bound[pod.ref.uid]
        release_s = self._release_time(pod, now)
        if release_s > now:  # its requests stay allocated until then
            self.kernel.schedule(release_s, Order.COMPLETE, self._on_release, pod)
        else:
            self.state.release(pod)
        self.recorder.pod_ended(pod, "succeeded", now)
        self.engine.succeeded(pod.job_run, pod.ref.task)
        self._dirty = True

    def _release_time(self, pod: PodRun, now_s: float) -> float:
        """When a pod that ended now frees its requests: at once, or at its engine's next poll
        (`release_at_poll`: the engine deletes the pod when it notices the end)."""
        if not self.settings.release_at_poll:
            return now_s
        return next_poll(now_s, pod.job_run.phase_s, self.settings.poll_interval_s)

    def _on_release(self, pod: PodRun, _: int) -> None:
        self.state.release(pod)
        self._dirty = True

    def _killed(self, pod: PodRun, outcome: str) -> None:
        """A pod already taken off the progress model (or never started) is lost."""
        pod.phase = Phase.KILLED
        pod.version += 1
        self._unbind(pod)
        self.recorder.pod_ended(pod, outcome, self.kernel.now_s)
        oom = outcome == "oom-killed"
        if oom:
            self.record.oom_kills += 1
        else:
            self.record.fault_kills += 1
        if self.engine.killed(pod.job_run, pod.ref, oom):
            self.record.restarts += 1
        self._dirty = True

    def _unbind(self, pod: PodRun) -> None:
        del pod.node.bound[pod.ref.uid]
        self.state.release(pod)

    def _on_task_done(self, run: JobRun, task: Task) -> None:
        self.state.task_finished(run.job.id, task.id)

    def _on_job_ended(self, run: JobRun) -> None:
        if not run.failed:
            return
        self.failure_cost += run.job.critical_path_s
        log.info("job %s failed: a pod was OOM-killed more than %d times", run.job.id,
                 self.settings.oom_retry_limit)
        for ref in [r for r in self.state.pending if r.job is run.job]:
            self.state.remove_pending(ref.uid)
            self.recorder.pod_not_bound(ref, "cancelled", self.kernel.now_s)

    # --- background processes ------------------------------------------------------------

    def _on_sample(self, _: object, __: int) -> None:
        now, progress = self.kernel.now_s, self.progress
        self.state.scrape(now, progress.touched_nodes.values(), progress.touched_pools.values())
        progress.touched_nodes.clear()
        progress.touched_pools.clear()
        self._tick = self._dirty = True
        quiet = not (self.state.pending_count() or self.state.bound_pods) \
            and self.engine.only_arrivals_ahead()
        interval = self.settings.sample_interval_s
        self._sample_index = next_tick(self._sample_index, interval,
                                       self.engine.next_arrival_s() if quiet else None)
        self.kernel.schedule(self._sample_index * interval, Order.SAMPLE, self._on_sample)

    def _schedule_outage(self, node: SimNode, after_s: float) -> None:
        outage = next_outage(self._faults_rng, after_s, self.settings.faults)
        if outage is not None and math.isfinite(outage.start_s):
            self.kernel.schedule(outage.start_s, Order.NODE_FAULT, self._on_node_fault,
                                 (node, outage))

    def _on_node_fault(self, event: tuple[SimNode, Outage], _: int) -> None:
        node, outage = event
        log.debug("node %s NotReady (%s) from %.0f s to %.0f s", node.spec.name, outage.cause,
                  outage.start_s, outage.end_s)
        self.state.set_ready(node, False)
        self._startup.clear(node.index)
        self.progress.stop_all(node)
        for pod in list(node.bound.values()):
            self._killed(pod, "node-fault")
        self.kernel.schedule(outage.end_s, Order.NODE_READY, self._on_node_ready, event)

    def _on_node_ready(self, event: tuple[SimNode, Outage], _: int) -> None:
        node, outage = event
        self.state.set_ready(node, True)
        self._dirty = True
        now = self.kernel.now_s
        self._startup.clear(node.index)
        for pod in node.waiting:
            self.kernel.schedule(self._startup.start_time(node.index, now), Order.START,
                                 self._on_start, pod, pod.version)
        node.waiting.clear()
        self._schedule_outage(node, outage.end_s)

    def _schedule_iops_change(self, pool: StoragePool, now_s: float, collapsed: bool) -> None:
        change = next_iops_change(self._storage_rng, now_s, pool.nominal_iops, collapsed,
                                  self.settings.storage)
        if change is not None and math.isfinite(change.time_s):
            self.kernel.schedule(change.time_s, Order.STORAGE, self._on_iops_change,
                                 (pool, change.iops, change.collapsed))

    def _on_iops_change(self, event: tuple[StoragePool, float, bool], _: int) -> None:
        pool, iops, collapsed = event
        self.progress.set_iops(pool, iops, collapsed)
        self._schedule_iops_change(pool, self.kernel.now_s, collapsed)
