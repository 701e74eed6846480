"""The episodes of an iteration: each arrival sequence replayed with its own seeds; and the
evaluation's loaded episodes: the whole pool arriving until a horizon."""

from __future__ import annotations

import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.errors import SpecError
from dagpilot.train.curriculum import Stage
from dagpilot.train.scenarios import (
    Capacity,
    EpisodeTask,
    cluster_cores,
    episode_tasks,
    loaded_episode_tasks,
)
from dagpilot.workloads import load

POOL = load("builtin:mix:8")
CLUSTER = load_cluster("builtin:small")


def tasks(iteration: int = 0, phase: str = "ppo", seed: int = 0) -> list[EpisodeTask]:
    return episode_tasks(POOL, CLUSTER, Stage(1, 3, 1.0), seed=seed, phase=phase,
                         iteration=iteration, scenarios=2, replays=3, load=0.8)


def test_replays_share_their_arrivals_and_differ_in_seeds() -> None:
    made = tasks()
    assert [(t.scenario, t.replay) for t in made] == [(s, r) for s in range(2) for r in range(3)]
    for scenario in (0, 1):
        group = [t for t in made if t.scenario == scenario]
        assert all(t.jobs == group[0].jobs for t in group)
        assert len({t.sim_seed for t in group}) == 3
        assert len({t.sample_seed for t in group}) == 3
        arrivals = [j.arrival_s for j in group[0].jobs]
        assert len(arrivals) == 3 and arrivals == sorted(arrivals) and arrivals[-1] > 0
    assert made[0].jobs != made[3].jobs


def test_the_same_seed_and_iteration_give_the_same_episodes_and_others_do_not() -> None:
    assert tasks() == tasks()
    assert tasks(iteration=1) != tasks()
    assert tasks(phase="bc") != tasks()
    assert tasks(seed=1) != tasks()


HORIZON_S = 4 * 3600.0  # about 20 arrivals of this pool on builtin:small: the pool is cycled


def loaded(seed: int = 0, episodes: int = 3, horizon_s: float = HORIZON_S,
           capacity: Capacity = cluster_cores) -> list[EpisodeTask]:
    return loaded_episode_tasks(POOL, CLUSTER, seed=seed, episodes=episodes, load=0.8,
                                horizon_s=horizon_s, capacity=capacity)


def test_loaded_episodes_cycle_the_whole_pool_until_the_horizon() -> None:
    made = loaded()
    assert [(t.scenario, t.replay) for t in made] == [(0, 0), (1, 0), (2, 0)]
    for task in made:
        arrivals = [job.arrival_s for job in task.jobs]
        assert arrivals == sorted(arrivals) and 0 < arrivals[-1] < HORIZON_S
        assert len(task.jobs) > len(POOL)
        assert [job.id.split("#")[0] for job in task.jobs] == [
            POOL[i % len(POOL)].id for i in range(len(task.jobs))]
    assert len({t.jobs for t in made}) == 3  # each episode its own arrivals
    assert len({t.sim_seed for t in made}) == 3


def test_loaded_episodes_arrive_at_the_load_of_the_given_capacity() -> None:
    single = loaded(episodes=1)[0].jobs
    doubled = loaded(episodes=1, capacity=lambda jobs, cluster: 2 * cluster.capacity.cpu)[0].jobs
    # the same random stream at twice the rate: every arrival comes twice as early
    assert [j.arrival_s for j in doubled[:len(single)]] == pytest.approx(
        [j.arrival_s / 2 for j in single])
    assert len(doubled) > len(single)


def test_loaded_episodes_are_reproducible_and_never_a_training_episode() -> None:
    assert loaded() == loaded()
    assert loaded(seed=1) != loaded()
    training = [task for phase in ("ppo", "bc", "teacher") for iteration in range(3)
                for task in tasks(iteration, phase)]
    assert not {t.jobs for t in loaded()} & {t.jobs for t in training}
    assert not {t.sim_seed for t in loaded()} & {t.sim_seed for t in training}


def test_a_horizon_without_any_arrival_is_refused() -> None:
    with pytest.raises(SpecError, match="no arrival within the horizon"):
        loaded(horizon_s=1.0)


def test_teacher_trials_under_load_are_not_the_evaluation_episodes() -> None:
    trials = loaded_episode_tasks(POOL, CLUSTER, seed=0, episodes=3, load=0.8,
                                  horizon_s=HORIZON_S, phase="teacher")
    evaluation = loaded()
    assert len(trials) == 3 and all(len(t.jobs) > 0 for t in trials)
    assert not {t.jobs for t in trials} & {t.jobs for t in evaluation}
    assert not {t.sim_seed for t in trials} & {t.sim_seed for t in evaluation}
