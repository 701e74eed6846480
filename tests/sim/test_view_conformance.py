"""The simulator's view (`sim.cluster_state.ClusterState`) keeps the ClusterView contract:
changed by the methods the simulation itself calls, and at every decision point of a run."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.sim.cluster_state import ClusterState
from dagpilot.sim.kernel import Kernel, Order
from dagpilot.sim.pod import PodRun
from tests.core.view_conformance import (
    Bind,
    Change,
    Release,
    Scrape,
    SetReady,
    Unsupported,
    ViewConformance,
    ViewFactory,
    assert_consistent,
)
from tests.state.sim_views import busy_default


class SimulatorFactory:
    """A ClusterState on its own kernel, changed as the simulation changes it."""

    def __init__(self) -> None:
        self.kernel = Kernel()
        self.runs: dict[int, PodRun] = {}

    def build(self, cluster: Cluster, pending: Sequence[PodRef]) -> ClusterView:
        state = ClusterState(cluster, self.kernel, PhysicsParameters())
        for pod in pending:
            state.add_pending(pod)
        return state

    def apply(self, view: ClusterView, change: Change) -> ClusterView:
        assert isinstance(view, ClusterState)
        match change:
            case Bind(pod, node, gpus):
                ref, target, taken = view.target(Placement(pod, node, gpus))
                cpu_m = view.bind(ref, target, taken)
                self.runs[pod.uid] = PodRun(ref, None, target, taken,  # type: ignore[arg-type]
                                            cpu_m=cpu_m, now_s=self.kernel.now_s)
            case Release(pod):
                view.release(self.runs.pop(pod.uid))
            case SetReady(node, ready):
                target = view.node(node)
                assert target is not None
                view.set_ready(target, ready)
            case Scrape(now_s):
                self.kernel.schedule(now_s, Order.SAMPLE, lambda _arg, _aux: view.scrape(
                    now_s, view.nodes, view.pools.values()))
                self.kernel.run_until(now_s)
            case _:
                raise Unsupported("a simulated run's node inventory is fixed")
        return view


class TestSimulatorView(ViewConformance):
    @pytest.fixture
    def factory(self) -> ViewFactory:
        return SimulatorFactory()


def test_every_decision_point_of_a_busy_run_keeps_the_contract() -> None:
    env, view, scheduler = busy_default("builtin:mix:20", seed=3)
    cluster, token = view.cluster, view.changed_nodes(-1)[0]
    logged = 0
    for _ in range(120):
        assert_consistent(view)
        assert view.cluster is cluster
        before = view.resource_arrays()[1].copy(), view.ready_mask().copy()
        placement = scheduler.decide(view)
        view, _, done, _ = env.step(placement)
        if done:
            break
        token, rows = view.changed_nodes(token)
        allocated, ready = view.resource_arrays()[1], view.ready_mask()
        moved = {int(i) for i in (allocated != before[0]).any(axis=1).nonzero()[0]}
        moved |= {int(i) for i in (ready != before[1]).nonzero()[0]}
        assert rows is None or moved <= set(rows), "the log lists every node that changed"
        logged += rows is not None
    assert logged > 100
