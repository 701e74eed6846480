"""Real simulated views for the state tests: the simulator at its first decision point."""

from __future__ import annotations

from collections.abc import Sequence

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.core.view import ClusterView
from dagpilot.sim import SimEnv
from dagpilot.workloads import load


def sim_env(jobs: Sequence[Job] | str = "builtin:spark-etl:2",
            cluster: Cluster | str = "builtin:small",
            settings: SimSettings | None = None) -> tuple[SimEnv, ClusterView]:
    """An environment reset with seed 0, and its view at the first decision point."""
    env = SimEnv(load(jobs) if isinstance(jobs, str) else jobs,
                 load_cluster(cluster) if isinstance(cluster, str) else cluster, settings)
    return env, env.reset(0)
