"""PPO targets: GAE per episode, then the input-driven baseline across replays."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.train.config import PPOSettings
from dagpilot.train.rollout import Episode
from dagpilot.train.targets import ppo_targets


def episode(scenario: int, rewards: list[float], times: list[float],
            values: list[float] | None = None) -> Episode:
    made = Episode(scenario, 0)
    made.rewards, made.times = list(rewards), list(times)
    made.values = values if values is not None else [0.0] * len(rewards)
    made.actions = [0] * len(rewards)
    return made


def test_without_a_critic_and_with_lambda_one_it_is_decimas_baseline() -> None:
    """Returns-to-go: replay A (-3, -2, -1 at 0, 5, 10) -> -6, -3, -1; replay B (-4, -4 at 0, 8)
    -> -8, -4. A minus B at A's times (B's value at 0, 0->5 still -8, 10 -> -4): 2, 5, 3;
    B minus A at B's times (A at 0 -> -6, at 8 -> -3): -2, -1."""
    settings = PPOSettings(gamma=1.0, lam=1.0, reward_scale=1.0)
    a = episode(0, [-3, -2, -1], [0, 5, 10])
    b = episode(0, [-4, -4], [0, 8])
    targets = ppo_targets([a, b], settings)
    assert targets[0].advantages.tolist() == pytest.approx([2.0, 5.0, 3.0])
    assert targets[1].advantages.tolist() == pytest.approx([-2.0, -1.0])
    assert targets[0].returns.tolist() == pytest.approx([-6.0, -3.0, -1.0])


def test_replays_of_other_arrival_sequences_do_not_mix() -> None:
    settings = PPOSettings(gamma=1.0, lam=1.0, reward_scale=1.0)
    alone = episode(1, [-1, -1], [0, 1])
    paired = [episode(0, [-3], [0]), episode(0, [-5], [0])]
    targets = ppo_targets([paired[0], alone, paired[1]], settings)
    assert targets[1].advantages.tolist() == [-2.0, -1.0]  # nothing to compare with
    assert targets[0].advantages.tolist() == [2.0]
    assert targets[2].advantages.tolist() == [-2.0]


def test_rewards_are_scaled_and_the_critic_enters_through_gae() -> None:
    settings = PPOSettings(gamma=1.0, lam=0.5, reward_scale=10.0)
    one = episode(0, [-10.0, -20.0], [0, 1], values=[-2.0, -1.0])
    target = ppo_targets([one], settings)[0]
    # rewards -1, -2: delta_1 = -2 - (-1) = -1; delta_0 = -1 + (-1) - (-2) = 0; A_0 = 0 + 0.5 x -1
    assert target.advantages.tolist() == pytest.approx([-0.5, -1.0])
    assert target.returns.tolist() == pytest.approx([-2.5, -2.0])
    assert np.isfinite(target.advantages).all()
