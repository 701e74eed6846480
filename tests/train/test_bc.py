"""Behaviour cloning: labels are exactly the teacher's placements, and imitation learns them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dagpilot.agent import Agent
from dagpilot.clusters import load_cluster
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.schedulers import build
from dagpilot.sim import simulate
from dagpilot.state import Normaliser
from dagpilot.train.bc import BehaviourCloning, choose_teacher, demonstrate
from dagpilot.train.config import BCSettings
from dagpilot.train.evaluation import censored_avg_jct
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import trace
from tests.policy.builders import policy_input
from tests.sim.helpers import settings

SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)
CLUSTER = load_cluster("builtin:small")
JOBS = tuple(trace(load("builtin:mlflow:3")))


class Recording:
    """A scheduler that remembers what the scheduler inside it placed."""

    def __init__(self, name: str) -> None:
        self.inner = build(name)
        self.name = self.inner.name
        self.placed: list[tuple[int, str]] = []

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        self.inner.reset(cluster, rng)

    def decide(self, view: ClusterView) -> Placement | None:
        placement = self.inner.decide(view)
        if placement is not None:
            self.placed.append((placement.pod.uid, placement.node))
        return placement


def test_the_labels_are_the_teachers_placements() -> None:
    agent = Agent(PolicyNet.create(SMALL, 0), Normaliser.fresh(), explain=False)
    demos = demonstrate(build("sjf-cp"), agent, CLUSTER, settings(), EpisodeTask(0, 0, JOBS, 4, 0))
    recording = Recording("sjf-cp")
    simulate(JOBS, CLUSTER, recording, settings(), seed=4)
    labelled = []
    for item, action in zip(demos.inputs, demos.actions, strict=True):
        candidate, node = divmod(action, item.shape[1])
        assert candidate == 0 and item.feasible[0, node]
        labelled.append((item.observation.candidates[0].uid, CLUSTER.nodes[node].name))
    assert labelled == recording.placed
    assert not demos.inputs[0].observation.normalised  # raw: normalised once the stats are in
    assert demos.statistics.stats["node"].count == len(labelled) * len(CLUSTER.nodes)
    assert demos.summary is not None and demos.summary.finished == len(JOBS)
    returns = demos.returns(1.0)
    assert returns[0] == pytest.approx(sum(demos.rewards)) and returns[-1] == demos.rewards[-1]


def test_the_best_teacher_has_the_lowest_mean_jct_over_the_trials() -> None:
    trials = [EpisodeTask(0, 0, tuple(JOBS), seed, seed) for seed in (0, 1)]
    choice = choose_teacher(BCSettings(teachers=("random", "fifo", "sjf-cp")), trials, CLUSTER,
                            settings())
    assert set(choice.avg_jct_s) == {"random", "fifo", "sjf-cp"}
    assert choice.avg_jct_s[choice.name] == min(choice.avg_jct_s.values())
    alone = [censored_avg_jct(simulate(JOBS, CLUSTER, build("random"), settings(), t.sim_seed))
             for t in trials]
    assert choice.avg_jct_s["random"] == pytest.approx(float(np.mean(alone)))
    named = choose_teacher(BCSettings(teacher="fifo"), trials, CLUSTER, settings())
    assert (named.name, list(named.avg_jct_s)) == ("fifo", ["fifo"])


def test_imitation_loss_falls_on_a_small_fixed_dataset() -> None:
    inputs = [policy_input(3, 4, jobs=2, seed=seed) for seed in range(8)]
    actions = [int(np.flatnonzero(item.feasible.ravel())[seed % 2]) for seed, item in
               enumerate(inputs)]
    returns = [-1.0, -2.0] * 4
    net = PolicyNet.create(SMALL, 0)
    cloning = BehaviourCloning(net, BCSettings(learning_rate=2e-2, epochs=15, minibatch=4),
                               value_coef=0.5)
    stats = cloning.fit(inputs, actions, returns, torch.Generator().manual_seed(0))
    assert stats.last_loss < 0.5 * stats.first_loss
    assert stats.accuracy == 1.0
    with torch.no_grad():
        values = net.evaluate(inputs, actions).values
    assert float((values - torch.tensor(returns)).pow(2).mean()) < 0.1
