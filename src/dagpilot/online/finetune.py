"""The fine-tune: LoRA adapters only, on recalibrated scenarios, within a time budget.

    result = fine_tune(model, normaliser, jobs, cluster, sim, settings, seed=0, deadline=t)

`settings.objective` picks what each iteration does with episodes of the merged policy
(exactly what would serve):
- imitation (online.imitation): every decision of them labelled by `settings.teacher`, the
  labels of all iterations so far fitted by `imitation_epochs` passes of cross-entropy;
- ppo: PPO's targets with the frozen critic and `ppo_epochs` passes of PPO (train.ppo).
Every other weight is frozen (online.lora). The normaliser stays the serving model's: the
frozen encoders were fitted to its statistics. Iterations stop before one would run past
`deadline` (Unix seconds), judged by the slowest so far; at least one runs.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from dagpilot.agent import Agent
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.online.config import AdapterSettings
from dagpilot.online.imitation import Labels, dagger_labels, fit
from dagpilot.online.lora import attach, merged_state, trainable
from dagpilot.online.scenarios import training_tasks
from dagpilot.policy import PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.config import PPOSettings
from dagpilot.train.ppo import PPO, Steps
from dagpilot.train.rollout import Episode, LocalRollouts
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.train.snapshot import PolicySnapshot
from dagpilot.train.targets import ppo_targets

MAX_ITERATIONS = 24  # the budget is what binds (8 took 54 s of 90 on the drift bench)


@dataclass(frozen=True)
class FineTuneResult:
    state: dict[str, Tensor]  # merged: the keys and shapes of the serving model
    iterations: int
    env_steps: int
    wall_s: float
    cpus: tuple[int, ...] = ()  # where it ran, when in its own process (online.worker)


def fine_tune(model: PolicyNet, normaliser: Normaliser, jobs: Sequence[Job], cluster: Cluster,
              *, sim: SimSettings, settings: AdapterSettings, seed: int,
              deadline: float) -> FineTuneResult:
    """Adapters on a copy of `model`, trained until the iterations or the deadline run out."""
    if settings.objective == "imitation":
        return _imitate(model, normaliser, jobs, cluster, sim=sim, settings=settings,
                        seed=seed, deadline=deadline)
    started = time.time()
    net = copy.deepcopy(model)
    attach(net, settings.lora_rank)
    ppo_settings = PPOSettings(learning_rate=settings.learning_rate, epochs=settings.ppo_epochs)
    ppo = PPO(net, ppo_settings)
    rollouts = LocalRollouts(cluster, sim)
    generator = torch.Generator().manual_seed(seed)
    iterations, env_steps, slowest = 0, 0, 0.0
    while _another_round(iterations, slowest, deadline):
        begun = time.time()
        tasks = _round_tasks(jobs, cluster, settings, seed, iterations)
        snapshot = PolicySnapshot(model.config, merged_state(net), normaliser)
        episodes = rollouts.collect(snapshot, tasks)
        ppo.update(_steps(episodes, ppo_settings), generator)
        env_steps += sum(e.summary.env_steps for e in episodes if e.summary is not None)
        iterations += 1
        slowest = max(slowest, time.time() - begun)
    return FineTuneResult(merged_state(net), iterations, env_steps, time.time() - started)


def _imitate(model: PolicyNet, normaliser: Normaliser, jobs: Sequence[Job], cluster: Cluster,
             *, sim: SimSettings, settings: AdapterSettings, seed: int,
             deadline: float) -> FineTuneResult:
    """DAgger rounds: the adapted policy's episodes labelled by the teacher, then a fit of
    every label so far (online.imitation)."""
    started = time.time()
    net = copy.deepcopy(model)
    optimizer = torch.optim.Adam(trainable(attach(net, settings.lora_rank)),
                                 lr=settings.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    labels = Labels()
    iterations, slowest, last = 0, 0.0, 0.0
    while _another_round(iterations, slowest, deadline):
        begun = time.time()
        tasks = _round_tasks(jobs, cluster, settings, seed, iterations)
        student = Agent(PolicyNet.from_state(model.config, merged_state(net)), normaliser,
                        explain=False)
        for task in tasks:
            labels.extend(dagger_labels(student, settings.teacher, cluster, sim, task,
                                        normaliser=normaliser))
        fit(net, optimizer, labels, settings.imitation_epochs, generator)
        iterations += 1
        # the fit grows with the labels kept: the next round is judged by the last's growth
        took = time.time() - begun
        slowest, last = max(slowest, took + max(0.0, took - last) if last else took), took
    return FineTuneResult(merged_state(net), iterations, labels.env_steps,
                          time.time() - started)


def _another_round(iterations: int, slowest: float, deadline: float) -> bool:
    """The first round always runs; another while the cap allows and the slowest round so
    far would still end before the deadline."""
    return iterations < MAX_ITERATIONS and (iterations == 0 or time.time() + slowest < deadline)


def _round_tasks(jobs: Sequence[Job], cluster: Cluster, settings: AdapterSettings, seed: int,
                 iteration: int) -> list[EpisodeTask]:
    """A round's scenarios in the recalibrated world, the same for either objective."""
    return training_tasks(jobs, cluster, seed=seed, iteration=iteration,
                          scenarios=settings.scenarios, replays=settings.replays,
                          horizon_h=settings.horizon_h, load=settings.load)


def _steps(episodes: Sequence[Episode], settings: PPOSettings) -> Steps:
    """The episodes' decisions with their PPO targets, flattened."""
    targets = ppo_targets(episodes, settings)
    return Steps(
        inputs=[item for episode in episodes for item in episode.inputs],
        actions=np.array([a for e in episodes for a in e.actions], dtype=np.int64),
        old_log_probs=np.array([p for e in episodes for p in e.log_probs], dtype=np.float64),
        advantages=np.concatenate([t.advantages for t in targets]),
        returns=np.concatenate([t.returns for t in targets]))
