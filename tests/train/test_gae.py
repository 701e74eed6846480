"""GAE on a 4-step episode, worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.train.gae import gae

REWARDS = [1.0, 0.0, -1.0, 2.0]
VALUES = [0.5, 0.2, -0.3, 1.0]


def test_four_steps_by_hand() -> None:
    """gamma 0.9, lambda 0.8, the last step terminal (gamma x lambda = 0.72):
    delta_3 = 2 - 1.0                    = 1.0      A_3 = 1.0
    delta_2 = -1 + 0.9 x 1.0 - (-0.3)    = 0.2      A_2 = 0.2 + 0.72 x 1.0     = 0.92
    delta_1 = 0 + 0.9 x (-0.3) - 0.2     = -0.47    A_1 = -0.47 + 0.72 x 0.92  = 0.1924
    delta_0 = 1 + 0.9 x 0.2 - 0.5        = 0.68     A_0 = 0.68 + 0.72 x 0.1924 = 0.818528
    returns = A + V = 1.318528, 0.3924, 0.62, 2.0
    """
    targets = gae(REWARDS, VALUES, [0, 0, 0, 1], gamma=0.9, lam=0.8)
    assert targets.advantages == pytest.approx([0.818528, 0.1924, 0.92, 1.0])
    assert targets.returns == pytest.approx([1.318528, 0.3924, 0.62, 2.0])


def test_lambda_one_without_a_critic_is_the_monte_carlo_return() -> None:
    """gamma 1: the returns-to-go 1+0-1+2 = 2, 0-1+2 = 1, -1+2 = 1, 2."""
    targets = gae(REWARDS, [0.0] * 4, [0, 0, 0, 1], gamma=1.0, lam=1.0)
    assert targets.advantages == pytest.approx([2.0, 1.0, 1.0, 2.0])


def test_lambda_zero_is_the_one_step_td_error() -> None:
    targets = gae(REWARDS, VALUES, [0, 0, 0, 1], gamma=0.9, lam=0.0)
    assert targets.advantages == pytest.approx([0.68, -0.47, 0.2, 1.0])


def test_an_unfinished_trajectory_bootstraps_from_the_last_value() -> None:
    """Not terminal, V after the last step 0.5: delta_3 = 2 + 0.9 x 0.5 - 1.0 = 1.45."""
    targets = gae(REWARDS, VALUES, [0, 0, 0, 0], gamma=0.9, lam=0.8, last_value=0.5)
    assert targets.advantages[3] == pytest.approx(1.45)
    assert targets.advantages[2] == pytest.approx(0.2 + 0.72 * 1.45)


def test_an_episode_end_inside_the_batch_stops_the_sum() -> None:
    """Two 2-step episodes back to back: the first ends at step 1 and gets nothing of the
    second: A_1 = 0 - 0.2 = -0.2, A_0 = (1 + 0.9 x 0.2 - 0.5) + 0.72 x (-0.2) = 0.536."""
    targets = gae(REWARDS, VALUES, [0, 1, 0, 1], gamma=0.9, lam=0.8)
    assert targets.advantages[:2] == pytest.approx([0.536, -0.2])
    assert targets.advantages[2:] == pytest.approx(gae(REWARDS[2:], VALUES[2:], [0, 1],
                                                       gamma=0.9, lam=0.8).advantages)


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="one length"):
        gae([1.0, 2.0], [0.0], [0, 1], gamma=1.0, lam=1.0)
    assert len(gae(np.zeros(0), np.zeros(0), np.zeros(0), gamma=1.0, lam=1.0).returns) == 0
