"""The arrival rate is set on the busiest resource."""

from __future__ import annotations

import pytest

from dagpilot.bench.offered_load import cpu_equivalent_cores, offered_load
from dagpilot.core.types import Job, Resources, Task
from tests.bench.builders import GIB, chain_job, cluster

GPU_CLUSTER = cluster(8, 8, memory=64 * GIB, gpus=1, gpu_model="A100")  # 16 cores, 2 GPUs


def test_gpu_heavy_work_makes_the_gpus_the_bottleneck() -> None:
    train = Job("train", (Task("t", "t", 100.0, Resources(1, GIB, 2, "A100")),))
    demand = offered_load([train], GPU_CLUSTER)
    assert demand.cpu_s == pytest.approx(100 / 16)
    assert demand.gpu_s == pytest.approx(200 / 2)
    assert demand.memory_s == pytest.approx(100 * GIB / (128 * GIB))
    assert demand.bottleneck == "gpu"
    # a CPU-based rate given these cores asks for exactly `load` of the GPUs
    cores = cpu_equivalent_cores([train], GPU_CLUSTER)
    rate = 0.8 * cores / train.total_work_core_s
    assert demand.shares(rate)["gpu"] == pytest.approx(0.8)


def test_cpu_work_keeps_the_real_cores() -> None:
    job = chain_job("c", 0.0, (100, 4))
    assert offered_load([job], GPU_CLUSTER).bottleneck == "cpu"
    assert cpu_equivalent_cores([job], GPU_CLUSTER) == pytest.approx(16.0)


def test_start_ups_count_as_held_time_so_tiny_pods_are_not_offered_beyond_the_cluster() -> None:
    # 100 instances of 0.04 s on 1 core each, with a 3 s start-up: the pods hold 100 x 3.04
    # core-seconds, not 100 x 0.04
    tiny = Job("q", (Task("t", "t", 0.04, Resources(1, GIB), instances=100),))
    plain = offered_load([tiny], GPU_CLUSTER)
    held = offered_load([tiny], GPU_CLUSTER, startup_s=3.0)
    assert plain.cpu_s == pytest.approx(100 * 0.04 / 16)
    assert held.cpu_s == pytest.approx(100 * 3.04 / 16)
    # the arrival module sets its rate on runtime core-seconds: the cores it is given shrink
    # so that the held time gets exactly the load
    cores = cpu_equivalent_cores([tiny], GPU_CLUSTER, startup_s=3.0)
    rate = 0.8 * cores / tiny.total_work_core_s
    assert held.shares(rate)["cpu"] == pytest.approx(0.8)
