"""Every baseline runs a small workload to the end in the simulator, which refuses any
placement that does not fit; every pod ends on a node that could hold it."""

from __future__ import annotations

import dataclasses

import pytest

from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Gpu, Job, NodeSpec, Resources, Taint, Toleration
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim.run import simulate
from tests.schedulers.views import GIB, diamond, job, node, task

GPU_TAINT = Taint("nvidia.com/gpu", "present")
GPU_NODE = NodeSpec("gpu", Resources(16, 64 * GIB, 2, "A100"), taints=(GPU_TAINT,),
                    gpus=(Gpu(0, "A100", 0), Gpu(1, "A100", 0)))
CLUSTER = Cluster("tiny", (node("a", 4), node("b", 2, cpu_speed=2.0), node("c", 8, 32), GPU_NODE))


def workload() -> list[Job]:
    train = dataclasses.replace(
        task("train", 4, 30, memory_gib=8), requests=Resources(4, 8 * GIB, 2, "A100"),
        tolerations=(Toleration("nvidia.com/gpu", "Exists"),))
    jobs = [dataclasses.replace(diamond(), id=f"d{i}", arrival_s=5.0 * i) for i in range(4)]
    jobs.append(job("ml", [task("prep", 2, 20), dataclasses.replace(train, parents=("prep",))],
                    arrival_s=2.0))
    jobs.append(job("wide", [task("split", 1, 5)] + [task(f"w{i}", 1, 15, ["split"])
                                                     for i in range(10)], arrival_s=1.0))
    return jobs


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_baseline_completes_a_small_workload(name: str) -> None:
    jobs = workload()
    record = simulate(jobs, CLUSTER, SCHEDULERS[name](), SimSettings().without_physics(), seed=3)
    assert not record.interrupted
    assert all(j.finish_s is not None for j in record.jobs), name
    tasks = {(j.id, t.id): t for j in jobs for t in j.tasks}
    assert len({(p.job_id, p.task_id) for p in record.pods}) == len(tasks)
    for pod in record.pods:
        assert pod.outcome == "succeeded"
        assert pod.node is not None
        spec = CLUSTER.node(pod.node)
        assert tasks[(pod.job_id, pod.task_id)].requests.fits_in(spec.allocatable)
    train = next(p for p in record.pods if p.task_id == "train")
    assert train.node == "gpu"  # the only node with A100s, tolerated


def test_one_seed_gives_one_run() -> None:
    runs = [simulate(workload(), CLUSTER, SCHEDULERS["kube-default"](),
                     SimSettings().without_physics(), seed=5) for _ in range(2)]
    assert [(p.pod, p.node, p.bound_s) for p in runs[0].pods] == [
        (p.pod, p.node, p.bound_s) for p in runs[1].pods]
