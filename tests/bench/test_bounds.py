"""Lower bounds on a two-job example."""

from __future__ import annotations

import dataclasses

import pytest

from dagpilot.bench.bounds import Capacity, job_bound_s, lower_bound, ratio
from dagpilot.core.types import Job, Resources, Task
from tests.bench.builders import GIB, chain_job, cluster

TWO_NODES = cluster(4, 4)  # 8 cores


def wide_job(arrival_s: float) -> Job:
    """Ten 4-core instances of 10 s: critical path 10 s, work 400 core-s."""
    return Job("wide", (Task("w", "w", 10.0, Resources(4, GIB), instances=10),),
               arrival_s=arrival_s)


def test_each_job_is_bounded_by_its_critical_path_or_its_spread_work() -> None:
    capacity = Capacity.of(TWO_NODES)
    assert job_bound_s(chain_job("chain", 0.0, (10, 2), (20, 2)), capacity) == 30.0  # 60/8
    assert job_bound_s(wide_job(0.0), capacity) == 50.0  # 400 / 8 > 10


def test_late_arrival_sets_the_makespan_bound() -> None:
    jobs = [chain_job("chain", 0.0, (10, 2), (20, 2)), wide_job(100.0)]
    bound = lower_bound(jobs, TWO_NODES)
    assert bound.avg_jct_s == pytest.approx((30 + 50) / 2)
    assert bound.makespan_s == pytest.approx(110.0)  # 100 + 10 > 460 / 8


def test_total_work_sets_the_makespan_bound_when_jobs_arrive_together() -> None:
    jobs = [chain_job("chain", 0.0, (10, 2), (20, 2)), wide_job(0.0)]
    assert lower_bound(jobs, TWO_NODES).makespan_s == pytest.approx(460 / 8)


def test_gpu_work_and_faster_nodes_lower_the_bound_safely() -> None:
    gpu_cluster = cluster(64, gpus=2, gpu_model="A100")
    job = Job("train", (Task("t", "t", 100.0, Resources(1, GIB, 2, "A100"), instances=3),))
    assert lower_bound([job], gpu_cluster).avg_jct_s == pytest.approx(300.0)  # 600 GPU-s / 2
    fast = dataclasses.replace(TWO_NODES, nodes=tuple(
        dataclasses.replace(node, cpu_speed=2.0) for node in TWO_NODES.nodes))
    chain = chain_job("chain", 0.0, (10, 2), (20, 2))
    assert lower_bound([chain], fast).avg_jct_s == pytest.approx(15.0)


def test_ratio_to_an_empty_bound_is_zero() -> None:
    assert ratio(5.0, 0.0) == 0.0
    assert ratio(6.0, 3.0) == 2.0
    assert lower_bound([], TWO_NODES).makespan_s == 0.0
