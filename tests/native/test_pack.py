"""What the native core is given: the tables of pack.py, and when a run cannot go native."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Gpu, NodeSpec, Resources
from dagpilot.native import pack, simulate
from dagpilot.native.kube_statics import kube_statics
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim import physics
from dagpilot.sim.run import simulate as simulate_python
from dagpilot.workloads import load


def big_gpu_node(gpus: int) -> NodeSpec:
    return NodeSpec("box", Resources(64.0, 2**40, gpus, "A100"),
                    gpus=tuple(Gpu(i, "A100", i // 8) for i in range(gpus)))


def test_nodes_with_more_gpus_than_a_word_run_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pack.supported(Cluster("ok", (big_gpu_node(64),)))
    cluster = Cluster("huge", (big_gpu_node(65),))
    assert not pack.supported(cluster)
    jobs = load("builtin:mix:3")
    monkeypatch.setattr("dagpilot.native.simulate_native", pytest.fail)  # must not be taken
    record = simulate(jobs, cluster, SCHEDULERS["kube-default"](), SimSettings(), 0)
    python = simulate_python(jobs, cluster, SCHEDULERS["kube-default"](), SimSettings(), 0)
    assert record.pods == python.pods


def test_tables_carry_what_the_simulator_derives_from_each_task() -> None:
    jobs = load("builtin:mix:12")
    cluster = load_cluster("builtin:default")
    settings = SimSettings()
    classes, _ = kube_statics(jobs, cluster)
    tables = pack.tables(jobs, cluster, settings, classes, np.zeros(len(jobs)))
    tasks = [(j, task) for j, job in enumerate(jobs) for task in job.tasks]
    columns = tables["tasks"]
    assert len(columns["job"]) == len(tasks) == int(tables["counts"]["tasks"])
    for row, (job_index, task) in enumerate(tasks):
        working, cache = physics.memory_footprint(task, settings.effects, True)
        assert columns["job"][row] == job_index
        assert columns["working"][row] == working and columns["cache"][row] == cache
        assert columns["iops"][row] == physics.pod_iops(task, task.runtime_s, settings.effects)
        assert columns["parents"][row] == len(task.parents)
        start, count = columns["children"][row], columns["child_count"][row]
        children = tables["arrays"]["children"][start:start + count].tolist()
        first = int(tables["jobs"]["first_task"][job_index])
        assert [tasks[c][1].id for c in children] == list(task.children)
        assert all(first <= c < first + len(jobs[job_index].tasks) for c in children)
    assert columns["runtime_s"].dtype == np.float64


def test_params_switch_every_effect_off_with_the_master_switch() -> None:
    off = pack.params(SimSettings().without_physics())
    assert all(off[name] == 0.0 for name in off if name.startswith("on_"))
    on = pack.params(dataclasses.replace(SimSettings(), horizon_s=60.0))
    assert all(on[name] == 1.0 for name in on if name.startswith("on_"))
    assert on["horizon_s"] == 60.0
