"""A task that can never fit is refused before the run, naming the task and the largest node."""

from __future__ import annotations

import pytest

from dagpilot.bench.feasibility import EmptyCluster, NeverFits, check_fits
from dagpilot.core.errors import DagpilotError
from dagpilot.core.types import Cluster, Job, Resources, Task
from tests.bench.builders import GIB, chain_job, cluster


def test_a_task_wider_than_every_node_is_named_with_the_largest_node() -> None:
    jobs = [chain_job("ok", 0.0, (10, 4)), chain_job("huge", 0.0, (10, 2), (10, 128))]
    with pytest.raises(NeverFits) as caught:
        check_fits(jobs, cluster(16, 64, 32))
    message = str(caught.value)
    assert "'t1'" in message and "'huge'" in message
    assert "128 CPU" in message
    assert "node-1 (64 CPU" in message
    assert isinstance(caught.value, DagpilotError)


def test_memory_beyond_every_node_is_refused() -> None:
    job = Job("big", (Task("t", "t", 1.0, Resources(1, 64 * GIB)),))
    with pytest.raises(NeverFits, match="64 GiB memory"):
        check_fits([job], cluster(8, 8, memory=32 * GIB))


def test_a_gpu_model_no_node_has_is_refused() -> None:
    job = Job("train", (Task("t", "t", 1.0, Resources(1, GIB, 1, "H100")),))
    with pytest.raises(NeverFits, match="no node has H100 GPUs"):
        check_fits([job], cluster(8, 8, gpus=4, gpu_model="A100"))


def test_fitting_workloads_pass() -> None:
    a100 = Job("train", (Task("t", "t", 1.0, Resources(8, GIB, 4, "A100")),))
    check_fits([a100, chain_job("c", 0.0, (1, 8))], cluster(8, gpus=4, gpu_model="A100"))


def test_an_empty_cluster_is_refused() -> None:
    with pytest.raises(EmptyCluster):
        check_fits([chain_job("c", 0.0, (1, 1))], Cluster("none", ()))
