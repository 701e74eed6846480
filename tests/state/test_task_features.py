"""Task features on a hand-made job in the simulator, checked against hand-worked figures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Job, TaskClass
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.sim import SimEnv
from dagpilot.state.context import EncodeContext
from dagpilot.state.encode import observe
from dagpilot.state.schema import PAIR, TASK
from tests.sim.helpers import job, settings, task
from tests.state.sim_views import sim_env

GIB = 2**30
MB = 1_000_000


def diamond() -> Job:
    """a (2 cores, 100 s) -> b (50 s), c (80 s) in comm group g -> d (10 s, one T4 GPU)."""
    return job(
        "j",
        task("a", 100.0, cpu=2.0, memory=2 * GIB, peak_memory=4 * GIB, read_bytes=100 * MB,
             io_intensity=0.4, membw_intensity=0.5, cpu_intensity=0.8,
             task_class=TaskClass.IO),
        task("b", 50.0, parents=("a",), comm_group="g", comm_share=0.3),
        task("c", 80.0, parents=("a",), comm_group="g", comm_share=0.3),
        task("d", 10.0, parents=("b", "c"), gpus=1, gpu_model="T4"),
        arrival_s=0.0)


def rows(view: ClusterView, pods: list[PodRef],
         context: EncodeContext | None = None) -> list[dict[str, float]]:
    array = observe(view, pods, context).task_features
    return [{name: float(row[TASK.index(name)]) for name in TASK.names} for row in array]


def pending(view: ClusterView, task_id: str) -> PodRef:
    return next(pod for pod in view.pending if pod.task.id == task_id)


def run_until_pending(env: SimEnv, view: ClusterView, task_id: str) -> ClusterView:
    while not any(pod.task.id == task_id for pod in view.pending):
        view, _, _, _ = env.step(None)
    return view


def test_a_source_task() -> None:
    _, view = sim_env([diamond()], settings=settings())
    (a,) = rows(view, [pending(view, "a")])
    assert a["cpu_request_cores"] == 2.0 and a["memory_request_gib"] == 2.0
    assert a["peak_memory_share"] == 2.0
    assert a["runtime_log1p_s"] == pytest.approx(math.log1p(100.0))
    assert (a["depth"], a["parents"], a["children"]) == (0.0, 0.0, 2.0)
    assert a["b_level_log1p_s"] == pytest.approx(math.log1p(100 + 80 + 10))
    assert a["b_level_share"] == 1.0
    total_work = 2 * 100 + 50 + 80 + 10
    assert a["job_remaining_work_log1p_core_s"] == pytest.approx(math.log1p(total_work))
    assert a["job_remaining_work_share"] == 1.0
    assert a["job_tasks_log1p"] == pytest.approx(math.log1p(4))
    assert a["io_rate_log1p_mb_s"] == pytest.approx(math.log1p(1.0))  # 100 MB over 100 s
    assert a["membw_bound_cores"] == pytest.approx(0.5 * 2.0 * 0.8)
    assert (a["io_intensity"], a["membw_intensity"], a["cpu_intensity"]) == pytest.approx(
        (0.4, 0.5, 0.8))
    assert (a["comm_group_member"], a["comm_share"], a["job_running"]) == (0.0, 0.0, 0.0)
    assert (a["class_io"], a["class_cpu"]) == (1.0, 0.0)
    assert sum(a[f"gpu_model_{m}"] for m in ("A100", "T4", "other")) == 0.0
    assert a["attempt"] == 0.0


def test_children_once_the_parent_finished() -> None:
    env, view = sim_env([diamond()], settings=settings())
    view, _, _, _ = env.step(Placement(pending(view, "a"), "node-0000"))
    view = run_until_pending(env, view, "b")
    assert view.now_s == pytest.approx(100.0)
    b, c = rows(view, [pending(view, "b"), pending(view, "c")])
    assert (b["depth"], b["parents"], b["children"]) == (1.0, 1.0, 1.0)
    assert b["b_level_share"] == pytest.approx(60 / 190)
    assert c["b_level_share"] == pytest.approx(90 / 190)
    assert b["job_remaining_work_share"] == pytest.approx(140 / 340)
    assert b["job_age_log1p_s"] == pytest.approx(math.log1p(100.0))
    assert b["comm_group_member"] == 1.0 and b["comm_share"] == pytest.approx(0.3)
    assert b["comm_group_size_log1p"] == pytest.approx(math.log1p(2))
    assert b["comm_group_active_share"] == 1.0  # both members released, none finished
    assert b["job_running"] == 0.0  # a has finished: the job runs nowhere


def test_where_the_job_runs_reaches_its_other_pods_features() -> None:
    env, view = sim_env([diamond()], settings=settings())
    view, _, _, _ = env.step(Placement(pending(view, "a"), "node-0000"))
    view = run_until_pending(env, view, "b")
    view, _, _, _ = env.step(Placement(pending(view, "b"), "node-0000"))
    c_pod = pending(view, "c")
    observation = observe(view, [c_pod])
    c = observation.task_features[0]
    assert c[TASK.index("job_running")] == 1.0
    assert c[TASK.index("job_nodes_log1p")] == pytest.approx(math.log1p(1))
    assert (c[TASK.index("job_racks")], c[TASK.index("job_zones")]) == (1.0, 1.0)
    pairs = observation.pair_features[observation.pair_job[0]]
    nearest = [PAIR.index(f"distance_min_{d}") for d in ("same_node", "same_rack",
                                                          "cross_rack", "cross_zone")]
    # builtin:small: nodes 0-2 are rack-0 of zone-a, 3-5 rack-1 of zone-b
    assert np.argmax(pairs[:, nearest], axis=1).tolist() == [0, 1, 1, 3, 3, 3]


def test_a_gpu_task_not_yet_released() -> None:
    _, view = sim_env([diamond()], settings=settings())
    one_job = view.pending[0].job
    d_pod = PodRef(99, one_job, one_job.task("d"), 0, 0.0, attempt=2)
    (d,) = rows(view, [d_pod])
    assert d["gpu_request"] == 1.0 and d["gpu_model_T4"] == 1.0
    assert sum(d[name] for name in TASK.names if name.startswith("gpu_model_")) == 1.0
    assert (d["depth"], d["parents"], d["children"]) == (2.0, 2.0, 0.0)
    assert d["attempt"] == 2.0
    assert d["class_cpu"] == 1.0


def test_an_unknown_gpu_model_lands_in_the_other_slot() -> None:
    odd = job("odd", task("x", 10.0, gpus=1, gpu_model="MI300X"))
    _, view = sim_env([diamond()], settings=settings())
    (x,) = rows(view, [PodRef(7, odd, odd.task("x"), 0, 0.0)])
    assert x["gpu_model_other"] == 1.0
