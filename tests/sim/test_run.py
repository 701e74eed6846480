"""Whole runs worked out by hand: overheads, a physical slowdown, OOM kills, faults, the end."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dagpilot.core.config import FaultSettings, SimSettings, StorageQosSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Disk, DiskKind, Toleration
from dagpilot.core.view import ClusterView
from dagpilot.sim import InvalidPlacement, simulate
from dagpilot.sim.faults import next_outage
from dagpilot.sim.record import RunRecord
from dagpilot.sim.streams import stream
from tests.sim.helpers import GIB, FirstFit, cluster, gpus, job, node, only, settings, task


def finish(record: RunRecord, job_id: str) -> float | None:
    return next(j.finish_s for j in record.jobs if j.job_id == job_id)


def test_a_chain_runs_back_to_back_without_overheads() -> None:
    chain = job("j", task("a", 10), task("b", 5, parents=("a",)))
    record = simulate([chain], cluster(node("n")), FirstFit(), settings(), seed=0)
    assert finish(record, "j") == 15.0
    assert [(p.task_id, p.started_s, p.finished_s, p.outcome) for p in record.pods] == [
        ("a", 0.0, 10.0, "succeeded"), ("b", 10.0, 15.0, "succeeded")]
    assert record.jobs[0].jct_s == 15.0
    assert record.end_s == 15.0
    assert not record.interrupted


def test_submit_latency_and_fixed_startup_add_up() -> None:
    chain = job("j", task("a", 10), task("b", 5, parents=("a",)), arrival_s=1.0)
    overheads = settings(submit_latency_s=0.5, startup_median_s=2.0, startup_sigma=0.0)
    record = simulate([chain], cluster(node("n")), FirstFit(), overheads, seed=0)
    a, b = record.pods
    assert (a.created_s, a.bound_s, a.started_s, a.finished_s) == (1.5, 1.5, 3.5, 13.5)
    assert (b.created_s, b.bound_s, b.started_s, b.finished_s) == (14.0, 14.0, 16.0, 21.0)
    assert record.jobs[0].jct_s == 20.0


def test_polling_grid_delays_pod_creation() -> None:
    one = job("j", task("a", 10))
    record = simulate([one], cluster(node("n")), FirstFit(), settings(poll_interval_s=5.0),
                      seed=3)
    phase = stream(3, "engine").uniform(0.0, 5.0, 1)[0]
    assert record.pods[0].created_s == pytest.approx(phase)
    assert finish(record, "j") == pytest.approx(phase + 10.0)


def test_memory_bandwidth_slows_both_pods_while_they_share_the_channels() -> None:
    # Each pod streams 8 GB/s; two of them fill the node's 16 GB/s: u = 1, 3.2x slower.
    bandwidth_node = node("n", memory_bandwidth_bytes_s=16_000_000_000)
    hungry = {"membw_intensity": 1.0}
    first = job("first", task("a", 10, **hungry))
    second = job("second", task("b", 10, **hungry), arrival_s=5.0)
    on = simulate([first, second], cluster(bandwidth_node), FirstFit(),
                  settings(only(memory_bandwidth=True)), seed=0)
    # At t=5, a has 5 s of work left at 1/3.2: it ends at 21. b did 16/3.2 = 5 s by then.
    assert finish(on, "first") == pytest.approx(21.0)
    assert finish(on, "second") == pytest.approx(26.0)
    off = simulate([first, second], cluster(bandwidth_node), FirstFit(), settings(), seed=0)
    assert (finish(off, "first"), finish(off, "second")) == (10.0, 15.0)


def test_cpu_speed_scales_the_rate() -> None:
    fast = node("n", cpu_speed=2.0)
    record = simulate([job("j", task("a", 10))], cluster(fast), FirstFit(), settings(), seed=0)
    assert finish(record, "j") == 5.0


def test_cross_rack_group_communicates_slower() -> None:
    # Two pods of one all-reduce group, half their time communicating; each node fits one.
    group = {"comm_group": "ring", "comm_share": 0.5, "cpu": 4.0}
    ring = job("j", task("w0", 10, **group), task("w1", 10, **group))
    nodes = cluster(node("a", rack="r1"), node("b", rack="r2"))
    on = simulate([ring], nodes, FirstFit(), settings(only(network=True)), seed=0)
    # Cross rack: 8x RTT, 1.7x slower communication: factor 1 + 0.5 x 0.7 = 1.35.
    assert finish(on, "j") == pytest.approx(13.5)
    same_rack = cluster(node("a", rack="r1"), node("b", rack="r1"))
    assert finish(simulate([ring], same_rack, FirstFit(), settings(only(network=True)),
                           seed=0), "j") == 10.0
    assert finish(simulate([ring], nodes, FirstFit(), settings(), seed=0), "j") == 10.0


def test_gpus_across_root_complexes_slow_the_communication_share() -> None:
    gpu_node = node("g", cpu=8.0, gpus=gpus("A100", (2, 2)))
    trainer = task("train", 10, gpus=2, gpu_model="A100", comm_share=0.5)

    class Spanning(FirstFit):
        def decide(self, view: ClusterView) -> Placement | None:
            return Placement(view.pending[0], "g", gpus=(1, 2)) if view.pending else None

    record = simulate([job("j", trainer)], cluster(gpu_node), Spanning(),
                      settings(only(gpu_pcie=True)), seed=0)
    assert finish(record, "j") == pytest.approx(10 * (0.5 + 5 * 0.5))
    together = simulate([job("j", trainer)], cluster(gpu_node), FirstFit(),
                        settings(only(gpu_pcie=True)), seed=0)
    assert finish(together, "j") == 10.0  # the node picked GPUs 0 and 1, one root complex


def test_oom_kill_and_restart() -> None:
    # x needs 8 GiB against a 4 GiB request; with y on the node, 12 GiB > 10 GiB.
    x = job("x", task("x", 100, memory=4 * GIB, peak_memory=8 * GIB))
    y = job("y", task("y", 5, memory=4 * GIB, peak_memory=4 * GIB))
    small = cluster(node("n", cpu=2, memory=10 * GIB))
    record = simulate([x, y], small, FirstFit(), settings(only(memory=True)), seed=0)
    assert (record.oom_kills, record.restarts, record.fault_kills) == (1, 1, 0)
    outcomes = [(p.task_id, p.attempt, p.outcome, p.started_s, p.finished_s)
                for p in record.pods]
    assert outcomes == [("x", 0, "oom-killed", 0.0, None), ("y", 0, "succeeded", 0.0, 5.0),
                        ("x", 1, "succeeded", 10.0, 110.0)]  # retried after the 10 s back-off
    assert finish(record, "x") == 110.0
    off = simulate([x, y], small, FirstFit(), settings(), seed=0)
    assert off.oom_kills == 0 and finish(off, "x") == 100.0


def test_page_cache_pressure_slows_io_bound_pods_and_kills_none() -> None:
    # Each pod: 4 GiB working set and 0.8 x 4 = 3.2 GiB of page cache. Together 8 GiB of
    # anonymous memory fit the 10 GiB node, their 14.4 GiB with the cache do not: the kernel
    # keeps 2 of the 6.4 GiB of cache, and the reads of the rest go to the disk.
    pods = [job(name, task(name, 100, memory=4 * GIB, io_intensity=1.0)) for name in "xy"]
    roomy = cluster(node("n", cpu=2, memory=10 * GIB))
    record = simulate(pods, roomy, FirstFit(), settings(only(memory=True)), seed=0)
    assert record.oom_kills == 0
    slowdown = 1.0 + 1.0 * (6.4 - 2.0) / 6.4
    assert finish(record, "x") == finish(record, "y") == pytest.approx(100 * slowdown)
    alone = simulate(pods[:1], roomy, FirstFit(), settings(only(memory=True)), seed=0)
    assert finish(alone, "x") == 100.0  # 7.2 GiB fit: nothing reclaimed


def test_a_pod_that_always_overflows_fails_its_job() -> None:
    greedy = job("g", task("g", 10, memory=GIB, peak_memory=20 * GIB))
    bystander = job("b", task("b", 10))
    record = simulate([greedy, bystander], cluster(node("n", memory=10 * GIB)), FirstFit(),
                      settings(only(memory=True), oom_retry_limit=2), seed=0)
    assert record.oom_kills == 3 and record.restarts == 2
    failed = {j.job_id: (j.failed, j.finish_s) for j in record.jobs}
    assert failed == {"g": (True, None), "b": (False, 10.0)}


def test_a_node_fault_kills_and_restarts_its_pods() -> None:
    faults = FaultSettings(rate_per_node_hour=1.0, mean_duration_s=120.0)
    outage = next_outage(stream(7, "faults"), 0.0, faults)
    assert outage is not None
    long_job = job("j", task("a", outage.start_s + 1_000.0))
    evicted = outage.start_s + faults.eviction_delay_s + 10.0  # eviction, then the back-off
    end = max(evicted, outage.end_s) + 1.0
    record = simulate([long_job], cluster(node("n")), FirstFit(),
                      settings(only(faults=True), faults=faults, horizon_s=end), seed=7)
    assert record.fault_kills == 1 and record.restarts == 1
    lost, again = record.pods
    assert (lost.outcome, lost.attempt) == ("node-fault", 0)
    assert lost.started_s == 0.0
    assert again.attempt == 1 and again.outcome == "unfinished"
    # Its engine sees the lost pod running until Kubernetes evicts it: 350 s after the fault.
    assert again.created_s == pytest.approx(evicted)
    assert again.bound_s is not None and again.bound_s >= outage.end_s  # NotReady until then
    assert record.end_s == end


def test_a_pod_that_fits_nowhere_stalls_the_run_instead_of_looping() -> None:
    too_big = job("big", task("huge", 10, cpu=64))
    fine = job("ok", task("small", 10))
    record = simulate([too_big, fine], cluster(node("n")), FirstFit(), settings(), seed=0)
    assert finish(record, "ok") == 10.0
    assert finish(record, "big") is None
    assert [p.outcome for p in record.pods if p.task_id == "huge"] == ["unfinished"]


def test_horizon_ends_the_run() -> None:
    record = simulate([job("j", task("a", 100))], cluster(node("n")), FirstFit(),
                      settings(horizon_s=30.0), seed=0)
    assert record.end_s == 30.0
    assert finish(record, "j") is None
    assert record.pods[0].outcome == "unfinished"


def test_ctrl_c_returns_the_partial_record() -> None:
    class Impatient(FirstFit):
        calls = 0

        def decide(self, view: ClusterView) -> Placement | None:
            self.calls += 1
            if self.calls == 3:
                raise KeyboardInterrupt
            return super().decide(view)

    jobs = [job(f"j{i}", task("a", 10)) for i in range(5)]
    record = simulate(jobs, cluster(node("n", cpu=1)), Impatient(), settings(), seed=0)
    assert record.interrupted
    # The first two decisions ran j0 (0-10 s) and j1 (10-20 s); the third was interrupted.
    assert sum(j.finish_s is not None for j in record.jobs) == 2
    assert len(record.jobs) == 5
    assert record.wall_seconds > 0


def test_progress_is_reported_up_to_one() -> None:
    seen: list[float] = []
    jobs = [job(f"j{i}", task("a", 10)) for i in range(4)]
    simulate(jobs, cluster(node("n", cpu=2)), FirstFit(), settings(), seed=0,
             progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and 0.5 in seen


class Scripted(FirstFit):
    """Places the oldest pending pod where a script says, whatever fits."""

    def __init__(self, node_name: str, gpus: tuple[int, ...] = (), stale: bool = False) -> None:
        self.node_name, self.gpus, self.stale = node_name, gpus, stale
        self.first: Placement | None = None

    def decide(self, view: ClusterView) -> Placement | None:
        if not view.pending:
            return None
        placement = Placement(view.pending[0], self.node_name, self.gpus)
        if self.stale and self.first is not None:
            return self.first  # the same pod again, already bound
        self.first = placement
        return placement


@pytest.mark.parametrize(("scheduler", "why"), [
    (Scripted("nowhere"), "no such node"),
    (Scripted("n"), "CPU requests of 2 cores exceed the 1 free"),
    (Scripted("g", gpus=(0, 0)), "not 2 distinct free GPUs"),
    (Scripted("g", gpus=(0, 7)), "not 2 distinct free GPUs"),
    (Scripted("n", stale=True), "the pod is not pending"),
])
def test_invalid_placements_raise_a_clear_error(scheduler: Scripted, why: str) -> None:
    nodes = cluster(node("n", cpu=3), node("g", cpu=8, gpus=gpus("A100", (2, 2))))
    jobs = [job("j", task("a", 10, cpu=2, gpus=2 if scheduler.node_name == "g" else 0),
                task("b", 10, cpu=2))]
    with pytest.raises(InvalidPlacement, match=why):
        simulate(jobs, nodes, scheduler, settings(), seed=0)


def test_decisions_and_their_time_are_counted() -> None:
    jobs = [job(f"j{i}", task("a", 10)) for i in range(3)]
    record = simulate(jobs, cluster(node("n", cpu=1)), FirstFit(), settings(), seed=0)
    assert record.decisions >= 3
    assert record.decision_seconds > 0
    assert record.events > 0


def test_samples_follow_the_backlog() -> None:
    jobs = [job(f"j{i}", task("a", 10)) for i in range(3)]
    record = simulate(jobs, cluster(node("n", cpu=1)), FirstFit(),
                      settings(sample_interval_s=1_000.0), seed=0)
    pending = [(s.time_s, s.pending, s.running) for s in record.samples]
    times = [t for t, _, _ in pending]
    assert times == sorted(set(times))  # at most one sample per instant
    assert (0.0, 2, 0) in pending or (0.0, 2, 1) in pending
    assert pending[-1][1] == 0


def test_physics_off_settings() -> None:
    ideal = SimSettings().without_physics()
    assert ideal.physics.effective() == dataclasses.replace(
        ideal.physics, memory_bandwidth=False, storage_io=False, network=False, gpu_pcie=False,
        memory=False, faults=False)
    record = simulate([job("j", task("a", 10, peak_memory=99 * GIB))], cluster(node("n")),
                      FirstFit(), dataclasses.replace(ideal, poll_interval_s=0.0,
                                                      submit_latency_s=0.0,
                                                      startup_median_s=0.0), seed=0)
    assert record.physics is False and record.oom_kills == 0 and finish(record, "j") == 10.0


def test_fractional_cores_are_allocated_exactly() -> None:
    # Ten 0.1-core pods fill one core exactly (sums in millicores, not floats).
    jobs = [job(f"j{i}", task("a", 10, cpu=0.1, memory=GIB // 10)) for i in range(10)]
    seen: list[np.ndarray] = []

    class Watch(FirstFit):
        def decide(self, view: ClusterView) -> Placement | None:
            seen.append(view.resource_arrays()[1].copy())
            return super().decide(view)

    record = simulate(jobs, cluster(node("n", cpu=1.0, memory=GIB)), Watch(), settings(),
                      seed=0)
    assert all(j.finish_s == 10.0 for j in record.jobs)
    assert max(a[0, 0] for a in seen) <= 1.0


def test_a_pod_tolerating_not_ready_may_be_bound_to_a_failed_node_and_waits() -> None:
    faults = FaultSettings(rate_per_node_hour=1.0, mean_duration_s=120.0)
    outage = next_outage(stream(7, "faults"), 0.0, faults)
    assert outage is not None
    during = outage.start_s + 1.0
    patient = job("p", task("a", 10, tolerations=(Toleration(operator="Exists"),)),
                  arrival_s=during)

    class Anywhere(FirstFit):
        def decide(self, view: ClusterView) -> Placement | None:
            return Placement(view.pending[0], "n") if view.pending else None

    record = simulate([patient], cluster(node("n")), Anywhere(),
                      settings(only(faults=True), faults=faults), seed=7)
    pod = record.pods[0]
    assert pod.bound_s == during
    assert pod.started_s == pytest.approx(outage.end_s)
    assert record.fault_kills == 0 and finish(record, "p") == pytest.approx(outage.end_s + 10)


def test_job_ids_must_be_unique() -> None:
    with pytest.raises(InvalidInput, match="j appear more than once"):
        simulate([job("j", task("a", 1)), job("j", task("b", 1))], cluster(node("n")),
                 FirstFit(), settings(), seed=0)


def test_pods_sharing_a_storage_pool_slow_each_other() -> None:
    # Each pod issues 500 IOPS (half I/O-bound, no recorded bytes); the pool has 1,000.
    # Alone: rho 0.5, await 4 ms, level 0. Together: rho 1, await 202 ms, level 3 (6x slower
    # I/O): factor 1 + 0.5 x 5 = 3.5.
    pool = Disk(DiskKind.NETWORK, iops=1_000, shared_pool="p")
    nodes = cluster(node("n1", cpu=1, disk=pool), node("n2", cpu=1, disk=pool))
    first = job("first", task("a", 10, io_intensity=0.5))
    second = job("second", task("b", 10, io_intensity=0.5), arrival_s=5.0)
    steady = StorageQosSettings(collapse_rate_per_hour=0.0, drift_interval_s=0.0)
    on = simulate([first, second], nodes, FirstFit(),
                  settings(only(storage_io=True), storage=steady), seed=0)
    assert finish(on, "first") == pytest.approx(5 + 5 * 3.5)
    assert finish(on, "second") == pytest.approx(22.5 + 5)
    off = simulate([first, second], nodes, FirstFit(), settings(storage=steady), seed=0)
    assert (finish(off, "first"), finish(off, "second")) == (10.0, 15.0)


def test_engine_queue_size_caps_pods_in_flight() -> None:
    wide = job("j", task("a", 10, instances=3))
    capped = simulate([wide], cluster(node("n", cpu=8)), FirstFit(),
                      settings(engine_queue_size=1), seed=0)
    assert [p.created_s for p in capped.pods] == [0.0, 10.0, 20.0]
    free = simulate([wide], cluster(node("n", cpu=8)), FirstFit(), settings(), seed=0)
    assert [p.created_s for p in free.pods] == [0.0, 0.0, 0.0]
    assert [p.pod for p in free.pods] == ["j/a-0", "j/a-1", "j/a-2"]
