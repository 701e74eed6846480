"""The simulated ClusterView: what a scheduler can see, and when."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import FaultSettings, SimSettings
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Resources
from dagpilot.core.view import ClusterView
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim import SimEnv
from dagpilot.sim.cluster_state import ClusterState
from dagpilot.sim.kernel import Kernel
from dagpilot.sim.run import simulate
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals
from tests.sim.helpers import GIB, cluster, gpus, job, node, only, settings, task


def place(view: ClusterView, task_id: str, node_name: str,
          chosen: tuple[int, ...] = ()) -> Placement:
    pod = next(p for p in view.pending if p.task.id == task_id)
    return Placement(pod, node_name, chosen)


NODES = cluster(node("a", cpu=4, zone="z1", rack="r1"),
                node("b", cpu=8, zone="z1", rack="r2", gpus=gpus("A100", (2, 2))),
                node("c", cpu=4, zone="z2", rack="r1"))


def test_pending_in_creation_order_and_allocation_arrays() -> None:
    jobs = [job("j", task("x", 10, cpu=1.5, memory=2 * GIB), task("y", 10, cpu=2, gpus=2),
                task("z", 10))]  # z stays pending: the decision point goes on
    env = SimEnv(jobs, NODES, settings(), "t")
    view = env.reset(seed=0)
    assert [p.task.id for p in view.pending] == ["x", "y", "z"]
    assert [p.uid for p in view.pending] == [1, 2, 3]
    allocatable, allocated = view.resource_arrays()
    assert allocatable.shape == (3, 3) and allocatable[1].tolist() == [8.0, 16 * GIB, 4.0]
    assert not allocated.any()
    view, *_ = env.step(place(view, "x", "a"))
    view, *_ = env.step(place(view, "y", "b", (1, 2)))
    allocated = view.resource_arrays()[1]
    assert allocated[0].tolist() == [1.5, 2 * GIB, 0.0]
    assert allocated[1].tolist() == [2.0, GIB, 2.0]
    a, b, _ = view.nodes
    assert a.allocated == Resources(1.5, 2 * GIB, 0) and a.pods == 1
    assert b.free_gpus == (0, 3)
    assert view.job_nodes("j") == ("a", "b")
    assert view.job_nodes("other") == ()


def test_finished_tasks_and_job_nodes_follow_the_run() -> None:
    jobs = [job("j", task("x", 10), task("y", 5, parents=("x",)))]
    env = SimEnv(jobs, NODES, settings(), "t")
    view = env.reset(seed=0)
    assert view.finished_tasks("j") == frozenset()
    view, *_ = env.step(place(view, "x", "c"))
    assert view.now_s == 10.0
    assert view.finished_tasks("j") == {"x"}
    assert view.job_nodes("j") == ()
    assert [p.task.id for p in view.pending] == ["y"]


def test_rtt_follows_topology() -> None:
    env = SimEnv([job("j", task("x", 1))], NODES, settings(), "t")
    view = env.reset(seed=0)
    assert view.rtt_ms("a", "a") == 0.05
    assert view.rtt_ms("a", "b") == 0.8
    assert view.rtt_ms("a", "c") == 2.0


def test_signals_are_stale_until_the_next_scrape() -> None:
    busy = task("x", 100, cpu=2, cpu_intensity=0.5, memory=2 * GIB, io_intensity=0.5,
                membw_intensity=1.0)
    env = SimEnv([job("j", busy, task("held", 10))], NODES,
                 settings(only(memory=True), sample_interval_s=15.0), "t")
    view = env.reset(seed=0)
    view, *_ = env.step(place(view, "x", "a"))
    signals = view.nodes[0].signals
    # Bound at t=0 after the t=0 scrape: the metrics show nothing, placed_since shows it.
    assert signals.sampled_s == 0.0 and signals.cpu_used == 0.0
    assert signals.placed_since_sample == Resources(2, 2 * GIB)
    view, *_ = env.step(None)  # hold the other pod back
    assert view.now_s == 15.0  # the next decision point: fresh metrics
    signals = view.nodes[0].signals
    assert signals.sampled_s == 15.0
    assert signals.cpu_used == pytest.approx(1.0)
    assert signals.memory_used == 2 * GIB
    assert signals.memory_current == pytest.approx(2 * GIB * 1.4, rel=1e-9)
    assert signals.membw_utilisation == pytest.approx(8e9 / 100e9)
    assert signals.placed_since_sample == Resources()
    assert view.nodes[1].signals.cpu_used == 0.0


def test_placed_since_sample_counts_bindings_after_the_scrape() -> None:
    jobs = [job("j", task("x", 100, cpu=1), task("y", 100, cpu=2), task("z", 100))]
    env = SimEnv(jobs, NODES, settings(sample_interval_s=15.0), "t")
    view = env.reset(seed=0)
    view, *_ = env.step(place(view, "x", "a"))
    assert view.nodes[0].signals.placed_since_sample == Resources(1, GIB)
    view, *_ = env.step(place(view, "y", "a"))
    assert view.nodes[0].signals.placed_since_sample == Resources(3, 2 * GIB)


def test_smallest_request_decides_whether_a_decision_point_is_worth_it() -> None:
    # Node a is full with x; y needs 3 cores and only a exists: no decision point until x ends.
    jobs = [job("j", task("x", 10, cpu=4), task("y", 10, cpu=3))]
    env = SimEnv(jobs, cluster(node("a", cpu=4)), settings(sample_interval_s=1.0), "t")
    view = env.reset(seed=0)
    view, reward, *_ = env.step(place(view, "x", "a"))
    assert view.now_s == 10.0  # ticks every second changed nothing a scheduler could use
    assert reward == -10.0
    assert np.array_equal(view.resource_arrays()[1], np.zeros((1, 3)))


def test_room_check_shortcuts_give_the_full_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """could_place_any remembers when no node had room and then looks only at nodes freed since:
    on a busy run (a GPU backlog, faults) every answer equals the witness check plus a full
    scan of every node."""
    real = ClusterState.could_place_any
    answers: list[bool] = []

    def checked(state: ClusterState) -> bool:
        expected = full_check(state)
        answer = real(state)
        assert answer == expected
        answers.append(answer)
        return answer

    monkeypatch.setattr(ClusterState, "could_place_any", checked)
    freed_scans: list[bool] = []
    real_freed = ClusterState._freed_room

    def counted(state: ClusterState, *request: Any) -> bool:
        freed_scans.append(real_freed(state, *request))
        return freed_scans[-1]

    monkeypatch.setattr(ClusterState, "_freed_room", counted)
    nodes = load_cluster("builtin:scale-12")
    jobs = assign_arrivals(load("builtin:mix:40"), ArrivalSpec("poisson", 30.0),
                           nodes.capacity.cpu, np.random.default_rng(7), 300.0)
    busy = dataclasses.replace(SimSettings(faults=FaultSettings(rate_per_node_hour=0.3)),
                               horizon_s=3600.0)
    simulate(jobs, nodes, SCHEDULERS["fifo"](), busy, seed=5)
    assert True in answers and False in answers
    assert True in freed_scans and False in freed_scans  # the shortcut was taken both ways


def full_check(state: ClusterState) -> bool:
    """could_place_any without its memory: the witness, then every node."""
    pending = list(state.pending)
    if not pending:
        return False
    cpu_m = min(state.millicores(p.requests.cpu) for p in pending)
    memory = min(p.requests.memory for p in pending)
    gpus = min(p.requests.gpus for p in pending)
    anywhere = state._pending_tolerating_not_ready > 0
    witness = state._witness
    if (witness is not None and (witness.ready or anywhere)
            and witness.cpu_cap_m - witness.cpu_m >= cpu_m
            and witness.spec.allocatable.memory - witness.memory >= memory
            and len(witness.gpu_free) - witness.gpus_used >= gpus):
        return True
    free = state._allocatable - state._allocated
    room = (free[:, 0] >= cpu_m / 1000.0 - 1e-9) & (free[:, 1] >= memory) & (free[:, 2] >= gpus)
    if state.nodes_down and not anywhere:
        room &= state._ready
    return bool(room.any())


def test_each_zone_of_the_builtin_cluster_has_its_own_storage_pool() -> None:
    """A pool's collapse reaches only its own nodes: the zones' network disks are two pools."""
    state = ClusterState(load_cluster("builtin:default"), Kernel(), SimSettings().effects)
    shared = {name: pool for name, pool in state.pools.items() if pool.shared}
    assert set(shared) == {"netpool-zone-a", "netpool-zone-b"}
    for name, pool in shared.items():
        assert pool.nodes and {node.spec.zone for node in pool.nodes} == {
            name.removeprefix("netpool-")}
