"""Lock-step rollouts: one lane is `run_episode` bit for bit; several lanes give each episode
what it gets alone up to the rounding of a padded batch, the same every time, with every
step's bookkeeping as one lane keeps it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dagpilot.clusters import load_cluster
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.rollout import Episode, LocalRollouts, groups, run_episode
from dagpilot.train.scenarios import EpisodeTask, loaded_episode_tasks
from dagpilot.train.snapshot import PolicySnapshot
from dagpilot.workloads import load
from tests.sim.helpers import settings
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too

CLUSTER = load_cluster("builtin:default")
SNAPSHOT = PolicySnapshot.of(PolicyNet.create(PolicyConfig(), 0), Normaliser.fresh())


def _tasks() -> list[EpisodeTask]:
    """Two arrival sequences of the mix for 3 minutes, each replayed twice: four episodes
    of different lengths (lanes end at different rounds)."""
    return loaded_episode_tasks(load("builtin:mix:20"), CLUSTER, seed=3, episodes=2, load=1.0,
                                horizon_s=180.0, phase="ppo", iteration=0, replays=2)


def _collect(lanes: int) -> list[Episode]:
    before = torch.get_num_threads()  # module fixtures come before the autouse one
    torch.set_num_threads(1)
    try:
        return LocalRollouts(CLUSTER, settings()).collect(SNAPSHOT, _tasks(), lanes=lanes)
    finally:
        torch.set_num_threads(before)


def _same(one: Episode, other: Episode) -> bool:
    return (one.actions, one.log_probs, one.values, one.rewards, one.times) == (
        other.actions, other.log_probs, other.values, other.rewards, other.times) and (
        one.statistics.to_json() == other.statistics.to_json())


@pytest.fixture(scope="module")
def one_lane() -> list[Episode]:
    return _collect(1)


@pytest.fixture(scope="module")
def four_lanes() -> list[Episode]:
    return _collect(4)


def test_groups_are_runs_of_consecutive_tasks() -> None:
    tasks = _tasks()
    assert [len(group) for group in groups(tasks, 3)] == [3, 1]
    assert [task for group in groups(tasks, 3) for task in group] == tasks


def test_lanes_give_the_same_episodes_every_time(four_lanes: list[Episode]) -> None:
    again = _collect(4)
    assert all(_same(a, b) for a, b in zip(four_lanes, again, strict=True))


def test_lanes_give_each_episode_what_it_gets_alone_up_to_rounding(
        one_lane: list[Episode], four_lanes: list[Episode]) -> None:
    assert len({len(e) for e in one_lane}) > 1  # lanes end at different rounds
    assert [(e.scenario, e.replay) for e in four_lanes] == [
        (e.scenario, e.replay) for e in one_lane]
    compared = 0
    for alone, together in zip(one_lane, four_lanes, strict=True):
        assert alone.summary is not None and together.summary is not None
        # A padded batch rounds the logits' last bits otherwise: a sample takes another pair
        # only when its draw falls that close to a boundary, and none does here.
        assert together.actions == alone.actions
        assert together.times == alone.times and together.rewards == alone.rewards
        for a, b in zip(alone.log_probs, together.log_probs, strict=True):
            assert math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)
        for a, b in zip(alone.values, together.values, strict=True):
            assert math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)
        for name, stats in alone.statistics.stats.items():  # in chunks: float64 sums round
            other = together.statistics.stats[name]
            assert other.count == stats.count
            assert np.allclose(other.mean, stats.mean, rtol=1e-9, atol=1e-12)
            assert np.allclose(other.m2, stats.m2, rtol=1e-9, atol=1e-9)
        assert together.summary.env_steps == alone.summary.env_steps
        assert together.summary.events == alone.summary.events > 0
        compared += len(alone)
    assert compared > 300


def test_one_lane_is_run_episode_itself(one_lane: list[Episode]) -> None:
    agent = SNAPSHOT.agent()
    for task, episode in zip(_tasks()[:2], one_lane[:2], strict=True):
        assert _same(run_episode(agent, CLUSTER, settings(), task), episode)
