"""Lock-step rollouts: several episodes advanced together, one network call for all of them.

A rollout step costs mostly the network (about 40 % at 48 nodes), and most of that is the
fixed cost of a hundred small torch calls, whatever the batch: one call for 8 decisions costs
about 2.5 times one call for 1. So the episodes of a group of tasks (`lanes` of them) each
run their own simulator, encoder memory (`LaneEncoder`) and sampling generator, and at every
round each lane that has a decision to make contributes its input to one batch: the inputs
`Agent.ready` gives, bit for bit, with the node features, the candidates' task rows and the
normalisation computed for all lanes at once (`lane_encoder.ready_all`: numpy's per-call cost
is the encoder's, not its arithmetic); the network runs once, and each lane chooses from its
own row (`Agent.choose`, for all lanes at once: `lane_choice.choose_all`) and steps its
simulator.
A lane whose view has nothing feasible steps on without a decision, as `run_episode` does; a
lane whose episode ends stays empty until the group is done.

Every lane samples with its own task's generator, so a group gives each episode what it would
give alone up to rounding: a batch pads the candidates, graph slots and job rows of its
inputs to the largest, and the matrix products over a padded batch may round differently
from one input's (last bits of the logits; a sample falls on the other side of a boundary
only when a draw lands within that of it). A lane also adds its raw observations to the
normaliser's statistics STATISTICS_CHUNK at a time (the same statistics up to the rounding
of float64 sums). A group's result depends only on its tasks, in
order, and the snapshot: the same tasks in the same groups give the same episodes bit for
bit, whichever backend or process runs the group. One lane is `run_episode` itself.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from dagpilot.agent import NAME, Agent
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView
from dagpilot.policy import PolicyNet, collate
from dagpilot.sim import SimEnv
from dagpilot.state import Normaliser
from dagpilot.state.observation import Observation
from dagpilot.train.lane_choice import choose_all
from dagpilot.train.lane_encoder import LaneEncoder, Shortlist, ready_all
from dagpilot.train.rollout import Episode, EpisodeSummary, record_step, run_episode
from dagpilot.train.scenarios import EpisodeTask

STATISTICS_CHUNK = 64
"""Raw observations a lane adds to its statistics in one pass (`Normaliser.update_all`: one
pass per group instead of one per step, a tenth of a lock-step round's cost otherwise)."""


@dataclass
class _Lane:
    """One episode of a group: its simulator, agent, encoder, generator and the episode so
    far."""

    agent: Agent
    encoder: LaneEncoder
    env: SimEnv
    generator: torch.Generator
    episode: Episode
    view: ClusterView
    steps: int = 0
    done: bool = False
    raw: list[Observation] = field(default_factory=list)  # not yet in the statistics

    def count(self, flush_at: int) -> None:
        """Add the raw observations kept to the episode's statistics, once `flush_at` wait."""
        if len(self.raw) >= flush_at:
            self.episode.statistics = self.episode.statistics.update_all(self.raw)
            self.raw.clear()

    def next_shortlist(self) -> Shortlist | None:
        """Step on through views with nothing feasible; the candidates of the next decision,
        or None when the episode ended."""
        while not self.done:
            shortlist = self.encoder.shortlist(self.view)
            if shortlist is not None:
                return shortlist
            self.view, reward, self.done, _ = self.env.step(None)
            self.steps += 1
            if self.episode.rewards:
                self.episode.rewards[-1] += reward
        return None


def run_group(model: PolicyNet, agents: Sequence[Agent], cluster: Cluster,
              settings: SimSettings, tasks: Sequence[EpisodeTask], *,
              statistics: bool = True) -> list[Episode]:
    """The episodes of `tasks`, in lock-step, one lane each; `agents` (one per task) share
    `model`. One task: `run_episode`."""
    if len(agents) != len(tasks):
        raise ValueError("a lock-step group needs one agent per task")
    if len(tasks) == 1:
        return [run_episode(agents[0], cluster, settings, tasks[0], statistics=statistics)]
    started = time.perf_counter()
    normaliser = _one_normaliser(agents)
    lanes = [_start(agent, cluster, settings, task) for agent, task in zip(agents, tasks,
                                                                         strict=True)]
    while True:
        shortlisted = [(lane, shortlist) for lane in lanes
                       if (shortlist := lane.next_shortlist())]
        if not shortlisted:
            break
        waiting = list(zip((lane for lane, _ in shortlisted), ready_all(
            [(lane.encoder, lane.view, shortlist) for lane, shortlist in shortlisted],
            normaliser), strict=True))
        if len({ready.policy_input.shape[1] for _, ready in waiting}) != 1:
            # `Agent.choose` reads a lane's grid as the first C x N entries of its row
            raise ValueError("a lock-step group's episodes must share one cluster's nodes")
        with torch.inference_mode():
            output = model(collate([ready.policy_input for _, ready in waiting]))
            decisions = choose_all([(lane.agent, lane.view, ready, lane.generator)
                                    for lane, ready in waiting], output.logits,
                                   output.values.tolist())
        for (lane, _), decision in zip(waiting, decisions, strict=True):
            now = lane.view.now_s
            lane.view, reward, lane.done, _ = lane.env.step(decision.placement)
            lane.steps += 1
            record_step(lane.episode, decision, now, reward, statistics=False)
            if statistics and decision.raw is not None:
                lane.raw.append(decision.raw)
                lane.count(STATISTICS_CHUNK)
    wall_s = time.perf_counter() - started
    for lane in lanes:
        lane.count(1)
        lane.episode.summary = EpisodeSummary.of(lane.env.close(), lane.steps, wall_s)
    return [lane.episode for lane in lanes]


def _one_normaliser(agents: Sequence[Agent]) -> Normaliser:
    """The lanes' normaliser: one for all (a snapshot's), or the group cannot be batched."""
    normaliser = agents[0].normaliser
    if any(agent.normaliser is not normaliser for agent in agents):
        raise ValueError("a lock-step group's agents must share one normaliser")
    return normaliser


def _start(agent: Agent, cluster: Cluster, settings: SimSettings, task: EpisodeTask) -> _Lane:
    env = SimEnv(task.jobs, cluster, settings, NAME)
    agent.reset()
    view = env.reset(task.sim_seed)
    return _Lane(agent, LaneEncoder(agent.config), env,
                 torch.Generator().manual_seed(task.sample_seed),
                 Episode(task.scenario, task.replay), view, done=env.done)
