"""The input-driven baseline: replays of one arrival sequence, aligned by simulated time."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.train.baseline import input_driven_baseline, value_at


def test_a_replay_is_a_step_function_of_time() -> None:
    assert value_at([0, 10, 20], [3, 2, 1], [-5, 0, 5, 10, 25]).tolist() == [3, 3, 3, 2, 1]


def test_each_replay_gets_the_mean_of_the_others_at_its_own_times() -> None:
    """replay 0 decides at 0, 10 (values 6, 2); replay 1 at 0, 5, 15 (9, 3, 0); replay 2 at 0 (3).
    b_0 at 0, 10: replay 1 -> 9, 3 (its last decision by t=10 is at 5); replay 2 -> 3, 3
          = 6, 3
    b_1 at 0, 5, 15: replay 0 -> 6, 6, 2; replay 2 -> 3, 3, 3 = 4.5, 4.5, 2.5
    b_2 at 0: replay 0 -> 6, replay 1 -> 9 = 7.5
    """
    baselines = input_driven_baseline([[0, 10], [0, 5, 15], [0]], [[6, 2], [9, 3, 0], [3]])
    assert [b.tolist() for b in baselines] == [[6, 3], [4.5, 4.5, 2.5], [7.5]]


def test_one_replay_has_nothing_to_compare_with() -> None:
    assert input_driven_baseline([[0, 1]], [[5, 6]])[0].tolist() == [0, 0]


def test_a_replay_without_decisions_is_left_out_of_the_others_baselines() -> None:
    baselines = input_driven_baseline([[0, 1], [], [0]], [[5, 6], [], [1]])
    assert baselines[0].tolist() == [1, 1]
    assert len(baselines[1]) == 0


def test_replays_that_see_the_same_input_cancel_it() -> None:
    """Two replays whose values share a time-dependent part (what the arrivals do to every
    replay) differ only by what each did: the baseline removes the shared part."""
    times = [np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 2.0])]
    shared = np.array([-100.0, -50.0, -10.0])
    advantages = input_driven_baseline(times, [shared + 1.0, shared - 1.0])
    assert (shared + 1.0 - advantages[0]).tolist() == pytest.approx([2.0, 2.0, 2.0])
    assert (shared - 1.0 - advantages[1]).tolist() == pytest.approx([-2.0, -2.0, -2.0])
