"""Rollouts: one step per choice, rewards that add up to minus the total job-time, and the same
episode from the same seeds."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.rollout import LocalRollouts, run_episode
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.train.snapshot import PolicySnapshot
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import trace
from tests.sim.helpers import settings

CLUSTER = load_cluster("builtin:small")
JOBS = tuple(trace(load("builtin:mlflow:3")))
SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)
SNAPSHOT = PolicySnapshot.of(PolicyNet.create(SMALL, 0), Normaliser.fresh())


def task(sim_seed: int = 1, sample_seed: int = 2) -> EpisodeTask:
    return EpisodeTask(0, 0, JOBS, sim_seed, sample_seed)


def test_every_choice_is_a_step_and_the_rewards_are_minus_the_job_time() -> None:
    episode = run_episode(SNAPSHOT.agent(), CLUSTER, settings(), task())
    assert episode.summary is not None
    assert len(episode) == sum(j.instances for j in JOBS)  # no physics: one pod per instance
    assert episode.summary.finished == len(JOBS)
    assert np.all(np.diff(episode.times) >= 0)
    assert all(p <= 0 for p in episode.log_probs)
    for item, action in zip(episode.inputs, episode.actions, strict=True):
        assert item.observation.candidates == ()  # only arrays are kept
        assert item.feasible.ravel()[action]
    # every job arrives at 0, the first decision point (no overheads): the rewards add up to
    # minus the sum of the job completion times
    assert episode.times[0] == 0.0
    assert episode.total_reward == pytest.approx(
        -episode.summary.avg_jct_s * episode.summary.finished)


def test_the_same_task_gives_the_same_episode() -> None:
    first = run_episode(SNAPSHOT.agent(), CLUSTER, settings(), task())
    again = run_episode(SNAPSHOT.agent(), CLUSTER, settings(), task())
    other = run_episode(SNAPSHOT.agent(), CLUSTER, settings(), task(sample_seed=3))
    assert (first.actions, first.log_probs, first.rewards) == (
        again.actions, again.log_probs, again.rewards)
    assert first.actions != other.actions


def test_the_statistics_count_every_observed_node_row() -> None:
    episode = run_episode(SNAPSHOT.agent(), CLUSTER, settings(), task())
    assert episode.statistics.stats["node"].count == len(episode) * len(CLUSTER.nodes)
    candidates = sum(len(item.observation.task_features) for item in episode.inputs)
    assert episode.statistics.stats["task"].count == candidates


def test_the_local_backend_runs_tasks_in_order_and_reports_progress() -> None:
    seen: list[tuple[int, int]] = []
    tasks = [task(1, 2), EpisodeTask(1, 0, JOBS[:1], 5, 6)]
    episodes = LocalRollouts(CLUSTER, settings()).collect(
        SNAPSHOT, tasks, lambda done, total: seen.append((done, total)))
    assert [(e.scenario, len(e)) for e in episodes] == [
        (0, sum(j.instances for j in JOBS)), (1, JOBS[0].instances)]
    assert seen == [(1, 2), (2, 2)]

