"""`Agent.prepare` (the node side of the next decision computed when new metrics land) changes
nothing an agent observes, decides or explains: two agents with the same weights, one told of
every scrape and of some other moments, the other never, over simulated runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dagpilot.agent import Agent
from dagpilot.clusters import load_cluster
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.state.signals import SAMPLED_S
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals
from tests.state.sim_views import sim_env
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too


def _twins(seed: int) -> tuple[Agent, Agent]:
    """Two agents with one set of weights (each its own copy and memories), the pair
    scorer sharpened so that the policy's choices depend on its inputs."""
    nets = [PolicyNet.create(PolicyConfig(), seed).eval() for _ in range(2)]
    for net in nets:
        assert net.node_memory is not None
        net.node_memory.full_rows = 0  # the memory's own path on a small cluster too
        with torch.no_grad():
            for parameter in net.pairs.parameters():
                parameter.mul_(30.0)
    return Agent(nets[0], Normaliser.fresh()), Agent(nets[1], Normaliser.fresh())


@pytest.mark.parametrize(("cluster", "decisions", "least_scrapes"),
                         [("builtin:default", 300, 6), ("builtin:scale-1000", 400, 2)])
def test_a_prepared_agent_observes_decides_and_explains_what_an_unprepared_one_does(
        cluster: str, decisions: int, least_scrapes: int) -> None:
    where = load_cluster(cluster)
    jobs = assign_arrivals(load("builtin:mix:40"), ArrivalSpec("poisson", 1.2),
                           where.capacity.cpu, np.random.default_rng(2), 1800.0)
    env, view = sim_env(jobs, where)
    prepared, plain = _twins(7)
    draws = [torch.Generator().manual_seed(11) for _ in range(2)]
    sampled = None
    scrapes = placed = 0
    memories = (prepared, plain)
    in_decisions = [0, 0]  # full node passes inside decisions: prepared, plain
    for step in range(decisions):
        now = view.signal_arrays()[SAMPLED_S]
        if sampled is None or not np.array_equal(now, sampled):  # new metrics landed
            prepared.prepare(view)
            scrapes += 1
        elif step % 7 == 0:  # and at other moments (a serving loop may call it at any)
            prepared.prepare(view)
        sampled = now.copy()
        greedy = step % 2 == 0
        passes = [agent.model.node_memory.full_passes for agent in memories]
        one = prepared.act(view, greedy=greedy, generator=draws[0])
        other = plain.act(view, greedy=greedy, generator=draws[1])
        for at, agent in enumerate(memories):  # node embeddings computed for every node
            in_decisions[at] += agent.model.node_memory.full_passes - passes[at]
        assert (one.action, one.log_prob, one.placement) == (
            other.action, other.log_prob, other.placement)
        assert one.value == other.value or (np.isnan(one.value) and np.isnan(other.value))
        if one.raw is not None and other.raw is not None:
            for name, array in one.raw.arrays().items():
                assert np.array_equal(array, other.raw.arrays()[name]), name
            assert one.policy_input is not None and other.policy_input is not None
            assert np.array_equal(one.policy_input.observation.node_features,
                                  other.policy_input.observation.node_features)
        placed += one.placement is not None
        view, _, done, _ = env.step(one.placement)
        if done:
            break
    assert placed > decisions // 2 and scrapes >= least_scrapes
    # the scrapes' node work ran in `prepare`, not in the decisions after them
    assert in_decisions[0] == 0 and in_decisions[1] >= 1
