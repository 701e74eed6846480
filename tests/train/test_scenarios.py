"""The episodes of an iteration: each arrival sequence replayed with its own seeds."""

from __future__ import annotations

from dagpilot.clusters import load_cluster
from dagpilot.train.curriculum import Stage
from dagpilot.train.scenarios import EpisodeTask, episode_tasks
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
