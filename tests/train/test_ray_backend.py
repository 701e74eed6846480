"""Rollouts as Ray actors give the local backend's episodes, bit for bit.

Ray is the optional `ray` extra; without it only the clear refusal is tested."""

from __future__ import annotations

import importlib.util

import pytest

from dagpilot.clusters import load_cluster
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.curriculum import Stage
from dagpilot.train.ray_backend import RayRollouts, RayUnavailable
from dagpilot.train.rollout import LocalRollouts
from dagpilot.train.scenarios import episode_tasks
from dagpilot.train.snapshot import PolicySnapshot
from dagpilot.workloads import load
from tests.sim.helpers import settings

HAVE_RAY = importlib.util.find_spec("ray") is not None


@pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (the optional `ray` extra: "
                    "pip install 'dagpilot[ray]')")
@pytest.mark.parametrize("lanes", [1, 2])
def test_ray_actors_return_the_local_episodes_in_task_order(lanes: int) -> None:
    import ray

    cluster = load_cluster("builtin:small")
    tasks = episode_tasks(load("builtin:mlflow:4"), cluster, Stage(0, 2, 1.0), seed=0,
                          phase="ppo", iteration=0, scenarios=2, replays=2, load=0.8)
    snapshot = PolicySnapshot.of(
        PolicyNet.create(PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32,
                                      pair_rank=8), 0), Normaliser.fresh())
    local = LocalRollouts(cluster, settings()).collect(snapshot, tasks, lanes=lanes)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        backend = RayRollouts(cluster, settings(), workers=2)
        seen: list[int] = []
        remote = backend.collect(snapshot, tasks, lambda done, _: seen.append(done), lanes)
        backend.close()
    finally:
        ray.shutdown()
    assert seen == [1, 2, 3, 4]
    assert [(e.scenario, e.replay) for e in remote] == [(e.scenario, e.replay) for e in local]
    for mine, theirs in zip(local, remote, strict=True):
        assert (mine.actions, mine.log_probs, mine.rewards, mine.times) == (
            theirs.actions, theirs.log_probs, theirs.rewards, theirs.times)
        assert mine.statistics.to_json() == theirs.statistics.to_json()


@pytest.mark.skipif(HAVE_RAY, reason="ray is installed: the refusal cannot happen")
def test_without_ray_the_backend_says_how_to_get_it() -> None:
    with pytest.raises(RayUnavailable, match="ray extra"):
        RayRollouts(load_cluster("builtin:small"), settings(), workers=2)
