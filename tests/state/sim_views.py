"""Real simulated views for the state tests: the simulator at its first decision point."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.types import Cluster, Job
from dagpilot.core.view import ClusterView
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim import SimEnv
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals


def sim_env(jobs: Sequence[Job] | str = "builtin:spark-etl:2",
            cluster: Cluster | str = "builtin:small",
            settings: SimSettings | None = None) -> tuple[SimEnv, ClusterView]:
    """An environment reset with seed 0, and its view at the first decision point."""
    env = SimEnv(load(jobs) if isinstance(jobs, str) else jobs,
                 load_cluster(cluster) if isinstance(cluster, str) else cluster, settings)
    return env, env.reset(0)


def busy_default(pool: str, seed: int) -> tuple[SimEnv, ClusterView, Scheduler]:
    """`pool` arriving at load 0.9 for 30 minutes on `builtin:default`, with kube-default
    (reset) to drive it: many decisions, scrapes and node changes."""
    cluster = load_cluster("builtin:default")
    jobs = assign_arrivals(load(pool), ArrivalSpec("poisson", 0.9), cluster.capacity.cpu,
                           np.random.default_rng(seed), 1800.0)
    env, view = sim_env(jobs, cluster)
    scheduler = SCHEDULERS["kube-default"]()
    scheduler.reset(cluster, np.random.default_rng(0))
    return env, view, scheduler
