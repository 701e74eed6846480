"""Node features brought up to date between decisions equal a full pass, decision by decision,
over a simulated run with scrapes, node faults and multi-GPU pods."""

from __future__ import annotations

import dataclasses

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.config import FaultSettings, SimSettings
from dagpilot.core.types import NodeSpec, Resources
from dagpilot.core.view import ClusterView, NodeSignals, signal_columns
from dagpilot.schedulers import SCHEDULERS
from dagpilot.state import signals as sig
from dagpilot.state.calibration import Calibration
from dagpilot.state.node_features import node_features
from dagpilot.state.node_memory import NodeFeatureMemory
from dagpilot.state.node_statics import NodeStatics
from dagpilot.state.streaks import AwaitStreaks
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals
from tests.schedulers.views import cluster_view, with_node
from tests.state.sim_views import sim_env

DECISIONS = 400
# Faults far more often than the default, so that nodes go NotReady and come back in the run.
FAULTY = dataclasses.replace(SimSettings(), horizon_s=1800.0,
                             faults=FaultSettings(rate_per_node_hour=2.0, mean_duration_s=60.0))


def signals_read_one_by_one(view: ClusterView) -> sig.SignalArrays:
    """The signals from each node's `signals`, not the view's kept arrays."""
    return sig.SignalArrays(signal_columns([node.signals for node in view.nodes]))


def test_updated_rows_equal_a_full_pass_at_every_decision() -> None:
    cluster = load_cluster("builtin:default")
    jobs = assign_arrivals(load("builtin:mix:60"), ArrivalSpec("poisson", 0.9),
                           cluster.capacity.cpu, np.random.default_rng(3), 1800.0)
    env, view = sim_env(jobs, cluster, FAULTY)
    scheduler = SCHEDULERS["kube-default"]()
    scheduler.reset(view.cluster, np.random.default_rng(0))
    calibration = Calibration()
    statics = NodeStatics.of(view, calibration)
    memory = NodeFeatureMemory()
    kept, scratch = AwaitStreaks(), AwaitStreaks()  # one per path, fed the same samples
    scrapes, not_ready, gpus_bound, decisions = set(), 0, 0, 0
    while decisions < DECISIONS:
        decisions += 1
        updated = memory.features(view, statics, sig.read(view), kept, calibration)
        full = node_features(view, statics, signals_read_one_by_one(view), scratch,
                             calibration)
        assert np.array_equal(updated, full)
        scrapes.add(view.nodes[0].signals.sampled_s)
        not_ready += int((~view.ready_mask()).sum())
        gpus_bound = max(gpus_bound, int(view.resource_arrays()[1][:, 2].sum()))
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    # Full passes: the first, and after a change log too long to keep (many pods ended)
    assert memory.full_passes + memory.row_updates == decisions
    assert memory.row_updates > 0.9 * decisions
    # what the run went through: scrapes, faults, GPU pods on split root complexes
    assert len(scrapes) > 5 and not_ready > 0 and gpus_bound > 0


def test_a_view_without_a_change_log_gets_full_passes() -> None:
    view = cluster_view([NodeSpec("a", Resources(4, 2**30)), NodeSpec("b", Resources(8, 2**30))])
    calibration = Calibration()
    statics = NodeStatics.of(view, calibration)
    memory, kept, scratch = NodeFeatureMemory(), AwaitStreaks(), AwaitStreaks()
    for step in range(3):
        view = with_node(view, "b", signals=NodeSignals(15.0 * step, io_await_ms=40.0 * step))
        updated = memory.features(view, statics, sig.read(view), kept,
                                  calibration)
        assert np.array_equal(updated, node_features(
            view, statics, signals_read_one_by_one(view), scratch, calibration))
    assert (memory.full_passes, memory.row_updates) == (3, 0)


class Remembered:
    """One NodeFeatureMemory fed the views of one small simulated run."""

    def __init__(self) -> None:
        self.env, self.view = sim_env("builtin:mix:4", "builtin:default")
        self.calibration = Calibration()
        self.statics = NodeStatics.of(self.view, self.calibration)
        self.memory, self.streaks = NodeFeatureMemory(), AwaitStreaks()

    def features(self, view: ClusterView) -> np.ndarray:
        return self.memory.features(view, self.statics, sig.read(view), self.streaks,
                                    self.calibration)


def test_the_same_view_again_changes_nothing_but_hands_out_a_new_array() -> None:
    run = Remembered()
    first, again = run.features(run.view), run.features(run.view)
    assert np.array_equal(first, again) and first is not again
    assert run.memory.row_updates == 1


def test_time_moving_on_between_scrapes_changes_no_row() -> None:
    run = Remembered()
    first = run.features(run.view)
    later, _, _, _ = run.env.step(None)  # no placement: the clock moves to the next event
    assert 0 < later.now_s < run.calibration.scrape_interval_s
    assert np.array_equal(first, run.features(later))  # schema 1's age changed every row
    assert run.memory.row_updates == 1
