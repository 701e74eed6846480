"""Lanes choose together: each lane's decision is `Agent.choose`'s from its own row of the
padded batch, bit for bit, and its generator draws as many numbers as it would alone."""

from __future__ import annotations

import torch

from dagpilot.agent import Agent, Decision
from dagpilot.clusters import load_cluster
from dagpilot.policy import PolicyConfig, PolicyNet, collate
from dagpilot.sim import SimEnv
from dagpilot.state import Normaliser
from dagpilot.train.lane_choice import _race, choose_all
from dagpilot.train.scenarios import loaded_episode_tasks
from dagpilot.workloads import load
from tests.sim.helpers import settings

CLUSTER = load_cluster("builtin:default")


def _same(mine: Decision, expected: Decision) -> None:
    assert mine.placement == expected.placement  # explained: every node's conditional read
    assert (mine.action, mine.log_prob, mine.value) == (
        expected.action, expected.log_prob, expected.value)
    assert mine.policy_input is expected.policy_input and mine.raw is expected.raw


def _generators(seeds: list[int]) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed) for seed in seeds]


def test_lanes_choose_as_each_agent_chooses_alone() -> None:
    tasks = loaded_episode_tasks(load("builtin:mix:20"), CLUSTER, seed=7, episodes=2,
                                 load=1.0, horizon_s=300.0, phase="ppo", iteration=0,
                                 replays=2)
    model = PolicyNet.create(PolicyConfig(), 0)
    agents = [Agent(model, Normaliser.fresh(), explain=True) for _ in tasks]
    envs = [SimEnv(task.jobs, CLUSTER, settings(), "dagpilot") for task in tasks]
    views = [env.reset(task.sim_seed) for env, task in zip(envs, tasks, strict=True)]
    seeds = [task.sample_seed for task in tasks]
    mine, alone = _generators(seeds), _generators(seeds)
    live, compared, widths = set(range(len(tasks))), 0, set()
    for _ in range(300):
        waiting = []
        for lane in sorted(live):
            ready = agents[lane].ready(views[lane])
            if ready is None:
                views[lane], _, _, _ = envs[lane].step(None)
            else:
                waiting.append((lane, ready))
        if not waiting:
            break
        with torch.inference_mode():
            output = model(collate([ready.policy_input for _, ready in waiting]))
            values = output.values.tolist()
            decisions = choose_all([(agents[lane], views[lane], ready, mine[lane])
                                    for lane, ready in waiting], output.logits, values)
            for row, ((lane, ready), decision) in enumerate(zip(waiting, decisions,
                                                                strict=True)):
                _same(decision, agents[lane].choose(views[lane], ready, output.logits[row],
                                                    values[row], greedy=False,
                                                    generator=alone[lane]))
                widths.add(ready.policy_input.shape[0])
                compared += 1
                views[lane], _, _, _ = envs[lane].step(decision.placement)
        live -= {lane for lane in live if envs[lane].done}
    assert compared > 100 and len(widths) > 2  # padded rows of several widths compared
    assert all(torch.equal(a.get_state(), b.get_state())
               for a, b in zip(mine, alone, strict=True))


def test_the_race_draws_what_multinomial_draws_from_each_unpadded_row() -> None:
    """Rows of several widths padded with p = 0, some sharply peaked: the same picks and
    the generators in the same state, draw after draw."""
    widths = [768, 192, 48, 768, 5, 1]
    logits = torch.randn(len(widths), 768, generator=torch.Generator().manual_seed(0)) * 8
    for lane, width in enumerate(widths):
        logits[lane, width:] = float("-inf")
    probs = torch.softmax(logits, -1)
    mine, alone = _generators(list(range(6))), _generators(list(range(6)))
    for _ in range(50):
        expected = [int(torch.multinomial(probs[lane, :width].unsqueeze(0), 1,
                                          generator=alone[lane])[0, 0])
                    for lane, width in enumerate(widths)]
        assert _race(probs, list(zip(widths, mine, strict=True))) == expected
    assert all(torch.equal(a.get_state(), b.get_state())
               for a, b in zip(mine, alone, strict=True))
