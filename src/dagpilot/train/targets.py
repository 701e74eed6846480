"""PPO's targets for a batch of episodes: GAE per episode with the critic, then the
input-driven baseline across the replays of each arrival sequence.

Rewards are divided by `reward_scale` first. The critic's targets are the GAE returns
(advantage + value). The policy's advantages are the GAE advantages minus the leave-one-out
mean of the other replays' advantages at the same simulated time: what the critic cannot see
coming (the arrivals ahead) is common to the replays and cancels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from dagpilot.train.baseline import input_driven_baseline
from dagpilot.train.config import PPOSettings
from dagpilot.train.gae import Targets, gae
from dagpilot.train.rollout import Episode


def ppo_targets(episodes: Sequence[Episode], settings: PPOSettings) -> list[Targets]:
    """Targets per episode, in the episodes' order."""
    raw = [_gae(episode, settings) for episode in episodes]
    scenarios: dict[int, list[int]] = defaultdict(list)
    for index, episode in enumerate(episodes):
        scenarios[episode.scenario].append(index)
    out = list(raw)
    for members in scenarios.values():
        baselines = input_driven_baseline([episodes[i].times for i in members],
                                          [raw[i].advantages for i in members])
        for i, baseline in zip(members, baselines, strict=True):
            out[i] = Targets(raw[i].advantages - baseline, raw[i].returns)
    return out


def _gae(episode: Episode, settings: PPOSettings) -> Targets:
    steps = len(episode)
    dones = np.zeros(steps)
    if steps:
        dones[-1] = 1.0  # episodes run until every job has ended (or the horizon)
    return gae(np.asarray(episode.rewards) / settings.reward_scale, episode.values, dones,
               gamma=settings.gamma, lam=settings.lam)
