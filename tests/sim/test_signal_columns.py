"""The simulator's kept signal columns equal a fresh read of every node's signals, decision by
decision over a run with scrapes and placements, and stay the same object while nothing
changed."""

from __future__ import annotations

import dataclasses

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.view import signal_columns
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim.env import SimEnv
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals


def test_kept_columns_equal_the_nodes_signals_at_every_decision() -> None:
    cluster = load_cluster("builtin:default")
    jobs = assign_arrivals(load("builtin:mix:30"), ArrivalSpec("poisson", 0.9),
                           cluster.capacity.cpu, np.random.default_rng(5), 900.0)
    env = SimEnv(jobs, cluster, dataclasses.replace(SimSettings(), horizon_s=900.0))
    scheduler = SCHEDULERS["kube-default"]()
    scheduler.reset(cluster, np.random.default_rng(0))
    view = env.reset(0)
    last, handed, renewed, scrapes = None, None, 0, set()
    for _ in range(300):
        columns = view.signal_arrays()
        assert np.array_equal(columns, signal_columns([node.signals for node in view.nodes]))
        assert not columns.flags.writeable and view.signal_arrays() is columns
        if last is not None:
            renewed += not np.array_equal(columns, last)
            assert np.array_equal(handed, last)  # the one handed out before was not written
        last, handed = columns.copy(), columns
        scrapes.add(view.nodes[0].signals.sampled_s)
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert renewed > 100 and len(scrapes) > 3
