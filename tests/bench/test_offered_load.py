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
