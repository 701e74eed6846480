from __future__ import annotations

import numpy as np
import pytest

from dagpilot.state.streaks import MAX_STREAK, AwaitStreaks


def observe(streaks: AwaitStreaks, sampled_s: list[float], congested: list[bool]) -> list[int]:
    return streaks.observe(np.array(sampled_s), np.array(congested)).tolist()


def test_counts_congested_samples_running_and_resets_on_a_healthy_one() -> None:
    streaks = AwaitStreaks()
    assert observe(streaks, [0, 0], [True, False]) == [1, 0]
    assert observe(streaks, [15, 15], [True, True]) == [2, 1]
    assert observe(streaks, [30, 30], [True, True]) == [3, 2]
    assert observe(streaks, [45, 45], [False, True]) == [0, 3]


def test_the_same_sample_seen_twice_counts_once() -> None:
    streaks = AwaitStreaks()
    assert observe(streaks, [0.0], [True]) == [1]
    assert observe(streaks, [0.0], [True]) == [1]
    assert observe(streaks, [15.0], [True]) == [2]
    assert observe(streaks, [15.0], [False]) == [2]  # not a new sample: nothing changes


def test_nodes_sampled_at_different_times_move_independently() -> None:
    streaks = AwaitStreaks()
    assert observe(streaks, [0, 3], [True, True]) == [1, 1]
    assert observe(streaks, [15, 3], [True, True]) == [2, 1]


def test_streaks_are_capped_and_restart_for_another_cluster() -> None:
    streaks = AwaitStreaks()
    for sample in range(MAX_STREAK + 5):
        counts = observe(streaks, [float(sample)], [True])
    assert counts == [MAX_STREAK]
    assert observe(streaks, [100.0, 100.0], [True, False]) == [1, 0]


def test_the_returned_array_is_a_copy() -> None:
    streaks = AwaitStreaks()
    first = streaks.observe(np.array([0.0]), np.array([True]))
    first[0] = 99
    assert observe(streaks, [15.0], [True]) == [2]


def test_time_going_back_means_a_new_episode() -> None:
    streaks = AwaitStreaks()
    for sample in (0.0, 15.0, 30.0):
        observe(streaks, [sample], [True])
    assert observe(streaks, [0.0], [True]) == [1]


def test_counting_some_rows_equals_counting_every_node() -> None:
    """NodeFeatureMemory counts only the nodes whose signals changed; the others have no new
    sample, so counting them too would change nothing."""
    every, some = AwaitStreaks(), AwaitStreaks()
    start = [0.0, 0.0, 0.0, 0.0]
    assert observe(every, start, [True] * 4) == observe(some, start, [True] * 4)
    steps = [([15.0, 0.0, 15.0, 0.0], [True, True, False, True]),  # nodes 0 and 2 sampled
             ([15.0, 30.0, 15.0, 0.0], [True, True, True, True]),  # node 1
             ([5.0, 30.0, 45.0, 0.0], [True, True, True, True])]  # an older sample: restart
    for sampled_s, congested in steps:
        full = observe(every, sampled_s, congested)
        rows = np.array([n for n in range(4) if sampled_s[n] != start[n]])
        counted = some.observe(np.array(sampled_s)[rows], np.array(congested)[rows], rows)
        assert counted.tolist() == [full[n] for n in rows.tolist()]
        start = sampled_s
    assert observe(some, start, [True] * 4) == observe(every, start, [True] * 4)


def test_some_rows_only_after_every_node() -> None:
    with pytest.raises(ValueError, match="every node"):
        AwaitStreaks().observe(np.array([0.0]), np.array([True]), np.array([0]))
