"""Invariants of whole runs on small random DAGs and clusters, with every effect and faults on."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagpilot.core.config import FaultSettings, SimSettings, StorageQosSettings
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, Job, NodeSpec
from dagpilot.core.view import ClusterView
from dagpilot.sim import simulate
from dagpilot.sim.record import RunRecord
from tests.sim.helpers import GIB, FirstFit, gpus, job, node, task

EPS = 1e-6


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    count = draw(st.integers(1, 3))
    nodes: list[NodeSpec] = []
    for index in range(count):
        extra = {"gpus": gpus("A100", (2, 2))} if index == 0 and draw(st.booleans()) else {}
        nodes.append(node(f"n{index}", cpu=draw(st.sampled_from([2.0, 4.0, 8.0])),
                          memory=draw(st.sampled_from([8, 16])) * GIB,
                          zone=draw(st.sampled_from(["z1", "z2"])),
                          rack=draw(st.sampled_from(["r1", "r2"])),
                          memory_bandwidth_bytes_s=draw(st.sampled_from([10**10, 10**11])),
                          **extra))
    return Cluster("random", tuple(nodes))


@st.composite
def jobs(draw: st.DrawFn, has_gpus: bool) -> list[Job]:
    result = []
    for number in range(draw(st.integers(1, 3))):
        tasks = []
        for index in range(draw(st.integers(1, 5))):
            parents = tuple(sorted(draw(st.sets(st.sampled_from(range(index)), max_size=2))
                                   if index else ()))
            memory = draw(st.sampled_from([1, 2, 4])) * GIB
            tasks.append(task(
                f"t{index}", draw(st.floats(0.0, 40.0)), cpu=draw(st.sampled_from([0.5, 1.0, 2.0])),
                memory=memory, parents=tuple(f"t{p}" for p in parents),
                instances=draw(st.integers(1, 3)),
                peak_memory=draw(st.sampled_from([None, memory // 2, memory * 2, memory * 5])),
                membw_intensity=draw(st.floats(0.0, 1.0)), io_intensity=draw(st.floats(0.0, 1.0)),
                comm_group=draw(st.sampled_from([None, "g"])), comm_share=0.3,
                gpus=2 if has_gpus and draw(st.integers(0, 4)) == 0 else 0))
        result.append(job(f"j{number}", *tasks, arrival_s=draw(st.floats(0.0, 60.0))))
    return result


HARSH = SimSettings(
    faults=FaultSettings(rate_per_node_hour=30.0, mean_duration_s=20.0),
    storage=StorageQosSettings(collapse_rate_per_hour=60.0, collapse_mean_s=30.0,
                               drift_interval_s=20.0),
    poll_interval_s=2.0, startup_median_s=1.0, sample_interval_s=5.0, retry_backoff_s=1.0,
    retry_backoff_max_s=4.0, horizon_s=5_000.0)


class CheckingFirstFit(FirstFit):
    """First fit that checks, at every decision point, that no node is overcommitted."""

    def __init__(self) -> None:
        self.decisions = 0

    def decide(self, view: ClusterView) -> Placement | None:
        self.decisions += 1
        allocatable, allocated = view.resource_arrays()
        assert (allocated <= allocatable + EPS).all()
        for index, state in enumerate(view.nodes):
            assert allocated[index, 2] == state.spec.allocatable.gpus - len(state.free_gpus)
        return super().decide(view)


def comparable(record: RunRecord) -> RunRecord:
    return dataclasses.replace(record, decision_seconds=0.0, wall_seconds=0.0)


def check_capacity(record: RunRecord, cluster: Cluster, jobs_: list[Job]) -> None:
    """Requests on a node never exceed allocatable, replaying every bound attempt's interval."""
    index = {j.id: j for j in jobs_}
    changes: dict[str, list[tuple[float, int, float, int]]] = defaultdict(list)
    for pod in record.pods:
        if pod.node is None or pod.bound_s is None:
            continue
        requests = index[pod.job_id].task(pod.task_id).requests
        changes[pod.node].append((pod.bound_s, 1, requests.cpu, requests.memory))
        if pod.ended_s is not None:
            changes[pod.node].append((pod.ended_s, 0, -requests.cpu, -requests.memory))
    for spec in cluster.nodes:
        cpu = memory = 0.0
        for _, _, d_cpu, d_memory in sorted(changes[spec.name]):  # releases first at a tie
            cpu += d_cpu
            memory += d_memory
            assert cpu <= spec.allocatable.cpu + EPS
            assert memory <= spec.allocatable.memory


def check_dag_order(record: RunRecord, jobs_: list[Job]) -> None:
    """No pod starts before every instance of its task's parents has finished."""
    finished: dict[tuple[str, str], float] = {}
    for pod in record.pods:
        if pod.outcome == "succeeded":
            assert pod.finished_s is not None
            key = (pod.job_id, pod.task_id)
            finished[key] = max(finished.get(key, 0.0), pod.finished_s)
    index = {j.id: j for j in jobs_}
    for pod in record.pods:
        if pod.started_s is None:
            continue
        for parent in index[pod.job_id].task(pod.task_id).parents:
            done = finished.get((pod.job_id, parent))
            assert done is not None and pod.started_s >= done
            assert pod.created_s >= done


def check_exactly_once(record: RunRecord, jobs_: list[Job]) -> None:
    """Each instance succeeds once at most (exactly once in a finished job); every other attempt
    is a kill that was counted, attempts numbered 0, 1, 2 ... in order."""
    attempts: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for pod in record.pods:
        attempts[(pod.job_id, pod.pod)].append((pod.attempt, pod.outcome))
    killed = retried = 0
    for tries in attempts.values():
        numbers = [a for a, _ in tries]
        assert sorted(numbers) == list(range(len(tries)))
        outcomes = [o for _, o in sorted(tries)]
        assert outcomes.count("succeeded") <= 1
        assert all(o in ("oom-killed", "node-fault") for o in outcomes[:-1])
        killed += sum(o in ("oom-killed", "node-fault") for o in outcomes)
        retried += len(outcomes) - 1  # every attempt but the last was killed and retried
    assert killed == record.oom_kills + record.fault_kills
    # A retry may still wait out its back-off at the end, or be dropped when its job failed.
    assert retried <= record.restarts <= killed
    finished_jobs = {j.job_id for j in record.jobs if j.finish_s is not None}
    for one in jobs_:
        if one.id not in finished_jobs:
            continue
        for t in one.tasks:
            for instance in range(t.instances):
                name = f"{one.id}/{t.id}" + (f"-{instance}" if t.instances > 1 else "")
                assert [o for _, o in attempts[(one.id, name)]].count("succeeded") == 1


@given(data=st.data(), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_invariants_hold_on_random_runs(data: st.DataObject, seed: int) -> None:
    cluster = data.draw(clusters())
    workload = data.draw(jobs(has_gpus=bool(cluster.nodes[0].gpus)))
    record = simulate(workload, cluster, CheckingFirstFit(), HARSH, seed)
    check_capacity(record, cluster, workload)
    check_dag_order(record, workload)
    check_exactly_once(record, workload)
    assert len(record.jobs) == len(workload)
    again = simulate(workload, cluster, CheckingFirstFit(), HARSH, seed)
    assert comparable(again) == comparable(record)


@given(data=st.data(), seed=st.integers(0, 2**16))
@settings(max_examples=15, deadline=None)
def test_without_physics_every_job_finishes_and_nothing_is_killed(data: st.DataObject,
                                                                 seed: int) -> None:
    cluster = data.draw(clusters())
    workload = data.draw(jobs(has_gpus=bool(cluster.nodes[0].gpus)))
    record = simulate(workload, cluster, FirstFit(), HARSH.without_physics(), seed)
    assert all(j.finish_s is not None for j in record.jobs)
    assert record.oom_kills == record.fault_kills == record.restarts == 0
    for one in record.jobs:  # never faster than the ideal critical path
        assert one.jct_s is not None and one.jct_s >= one.critical_path_s - EPS
    assert np.isfinite(record.end_s)
