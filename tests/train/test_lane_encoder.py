"""Lanes encoded together: each lane's input is `Agent.ready`'s of the same view, bit for bit."""

from __future__ import annotations

import numpy as np
import torch

from dagpilot.agent import Agent, Ready
from dagpilot.clusters import load_cluster
from dagpilot.policy import PolicyConfig, PolicyNet, collate
from dagpilot.sim import SimEnv
from dagpilot.state import Normaliser
from dagpilot.train.lane_encoder import LaneEncoder, ready_all
from dagpilot.train.scenarios import loaded_episode_tasks
from dagpilot.workloads import load
from tests.sim.helpers import settings
from tests.state.same_observation import assert_same_observation

CLUSTER = load_cluster("builtin:default")


def _trained_like_normaliser(model: PolicyNet, tasks: list) -> Normaliser:
    """Statistics from a few raw observations, so that normalising scales something."""
    agent = Agent(model, Normaliser.fresh(), explain=False)
    env = SimEnv(tasks[0].jobs, CLUSTER, settings(), "dagpilot")
    view, statistics = env.reset(0), Normaliser.fresh()
    for _ in range(20):
        decision = agent.act(view, greedy=True)
        if decision.raw is not None:
            statistics = statistics.update(decision.raw)
        view, _, done, _ = env.step(decision.placement)
        if done:
            break
    assert statistics.stats["node"].count > 0
    return statistics


def _same(ready: Ready, expected: Ready) -> None:
    assert_same_observation(ready.observed.raw, expected.observed.raw)
    assert_same_observation(ready.policy_input.observation, expected.policy_input.observation)
    assert np.array_equal(ready.policy_input.feasible, expected.policy_input.feasible)
    assert ready.observed.candidates.pods == expected.observed.candidates.pods
    bias, want = ready.policy_input.bias, expected.policy_input.bias
    assert (bias is None) == (want is None) and (want is None or np.array_equal(bias, want))


def test_lanes_encoded_together_read_what_each_agent_reads() -> None:
    tasks = loaded_episode_tasks(load("builtin:mix:20"), CLUSTER, seed=5, episodes=2,
                                 load=1.0, horizon_s=300.0, phase="ppo", iteration=0,
                                 replays=2)
    model = PolicyNet.create(PolicyConfig(), 0)
    normaliser = _trained_like_normaliser(model, tasks)
    agents = [Agent(model, normaliser, explain=False) for _ in tasks]
    encoders = [LaneEncoder(model.config) for _ in tasks]
    envs = [SimEnv(task.jobs, CLUSTER, settings(), "dagpilot") for task in tasks]
    views = [env.reset(task.sim_seed) for env, task in zip(envs, tasks, strict=True)]
    live, rounds, compared = set(range(len(tasks))), 0, 0
    while live and rounds < 400:
        shortlisted = []
        for lane in sorted(live):
            shortlist, expected = encoders[lane].shortlist(views[lane]), agents[lane].ready(
                views[lane])
            assert (shortlist is None) == (expected is None)
            if expected is None:  # nothing feasible: the environment advances
                views[lane], _, _, _ = envs[lane].step(None)
            else:
                shortlisted.append((lane, shortlist, expected))
        ready = ready_all([(encoders[lane], views[lane], shortlist)
                           for lane, shortlist, _ in shortlisted], normaliser)
        with torch.inference_mode():
            logits = model.logits(collate([r.policy_input for r in ready])) if ready else None
        for row, ((lane, _, expected), mine) in enumerate(zip(shortlisted, ready, strict=True)):
            _same(mine, expected)
            compared += 1
            with torch.inference_mode():
                decision = agents[lane].choose(views[lane], mine, logits[row], 0.0,
                                               greedy=True)
            views[lane], _, _, _ = envs[lane].step(decision.placement)
        live -= {lane for lane in live if envs[lane].done}
        rounds += 1
    assert compared > 400
