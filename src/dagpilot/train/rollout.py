"""Rollouts: episodes of the simulator with the agent sampling. No gradients here.

Each decision where a pair was feasible becomes a step: the policy input it read (arrays only),
the action, its log-probability and value, the reward, and the simulated time. Steps where
nothing was feasible (the environment advances) are not choices; their reward is added to the
previous step's, so the rewards of an episode still add up to minus the total job-time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt
import torch

from dagpilot.agent import NAME, Agent, Decision
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster
from dagpilot.policy import PolicyInput
from dagpilot.sim import RunRecord, SimEnv
from dagpilot.state import Normaliser
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.train.snapshot import PolicySnapshot

Floats = npt.NDArray[np.float64]
Progress = Callable[[int, int], None]
"""Called with (episodes done, episodes in all)."""


@dataclass(frozen=True)
class EpisodeSummary:
    jobs: int
    finished: int
    avg_jct_s: float  # over finished jobs
    oom_kills: int
    env_steps: int  # every environment step, forced waits included
    wall_s: float
    events: int = 0  # the simulator's events

    @classmethod
    def of(cls, record: RunRecord, env_steps: int, wall_s: float) -> EpisodeSummary:
        jcts = [job.finish_s - job.arrival_s for job in record.jobs if job.finish_s is not None]
        return cls(len(record.jobs), len(jcts), float(np.mean(jcts)) if jcts else float("nan"),
                   record.oom_kills, env_steps, wall_s, record.events)


@dataclass
class Episode:
    """The steps of one episode, in order. `statistics`: the raw observations' normaliser
    statistics (a fresh Normaliser updated with them), merged by the learner."""

    scenario: int
    replay: int
    inputs: list[PolicyInput] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    log_probs: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    statistics: Normaliser = field(default_factory=Normaliser.fresh)
    summary: EpisodeSummary | None = None

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def total_reward(self) -> float:
        return float(np.sum(self.rewards))


def run_episode(agent: Agent, cluster: Cluster, settings: SimSettings, task: EpisodeTask,
                *, statistics: bool = True) -> Episode:
    """One episode of `task` with `agent` sampling from its policy."""
    started = time.perf_counter()
    env = SimEnv(task.jobs, cluster, settings, NAME)
    generator = torch.Generator().manual_seed(task.sample_seed)
    agent.reset()
    episode = Episode(task.scenario, task.replay)
    view = env.reset(task.sim_seed)
    done, steps = env.done, 0
    while not done:
        decision = agent.act(view, greedy=False, generator=generator)
        now = view.now_s
        view, reward, done, _ = env.step(decision.placement)
        steps += 1
        record_step(episode, decision, now, reward, statistics=statistics)
    episode.summary = EpisodeSummary.of(env.close(), steps, time.perf_counter() - started)
    return episode


def record_step(episode: Episode, decision: Decision, now: float, reward: float, *,
                statistics: bool) -> None:
    """One environment step into the episode: a step of its own when a pair was feasible,
    else its reward added to the previous step's."""
    if decision.policy_input is None:
        if episode.rewards:
            episode.rewards[-1] += reward
        return
    if statistics and decision.raw is not None:
        episode.statistics = episode.statistics.update(decision.raw)
    episode.inputs.append(decision.policy_input.stripped())
    episode.actions.append(decision.action)
    episode.log_probs.append(decision.log_prob)
    episode.values.append(decision.value)
    episode.rewards.append(reward)
    episode.times.append(now)


def groups(tasks: Sequence[EpisodeTask], lanes: int) -> list[Sequence[EpisodeTask]]:
    """The lock-step groups of `tasks`: runs of `lanes` consecutive tasks, the last shorter."""
    return [tasks[start:start + lanes] for start in range(0, len(tasks), lanes)]


class RolloutBackend(Protocol):
    """Runs episodes with a snapshot of the policy; results in task order. With `lanes`
    above 1, each run of `lanes` consecutive tasks is one lock-step group (`train.lockstep`):
    the same groups whichever backend, so the same episodes."""

    def collect(self, snapshot: PolicySnapshot, tasks: Sequence[EpisodeTask],
                progress: Progress | None = None, lanes: int = 1) -> list[Episode]: ...

    def close(self) -> None: ...


class LocalRollouts:
    """Episodes one after another in this process."""

    def __init__(self, cluster: Cluster, settings: SimSettings) -> None:
        self.cluster = cluster
        self.settings = settings

    def collect(self, snapshot: PolicySnapshot, tasks: Sequence[EpisodeTask],
                progress: Progress | None = None, lanes: int = 1) -> list[Episode]:
        from dagpilot.train.lockstep import run_group  # noqa: PLC0415  (it imports this module)

        if lanes < 1:
            raise ValueError("rollouts need at least one lane")
        model, agents = snapshot.agents(min(lanes, len(tasks)) or 1)
        episodes: list[Episode] = []
        for group in groups(tasks, lanes):
            episodes += run_group(model, agents[:len(group)], self.cluster, self.settings,
                                  group)
            if progress is not None:
                for done in range(len(episodes) - len(group) + 1, len(episodes) + 1):
                    progress(done, len(tasks))
        return episodes

    def close(self) -> None:
        """Nothing to release."""
