"""The gate with replays: each held-back arrival sequence on several simulator seeds, its JCT
their mean, still one paired ratio per validation seed."""

from __future__ import annotations

import statistics
from pathlib import Path

from dagpilot.agent import Agent, DagpilotScheduler
from dagpilot.core.config import SimSettings
from dagpilot.native import simulate
from dagpilot.online.gate import validate
from dagpilot.online.scenarios import held_back_tasks
from dagpilot.online.world import serving_model, world
from dagpilot.train.evaluation import censored_avg_jct


def test_each_seed_is_the_mean_of_its_replays(registry: Path) -> None:
    scene = world("builtin:mlflow:4", "builtin:small", None)
    tasks = held_back_tasks(scene.jobs, scene.cluster, seed=7, seeds=2, horizon_h=0.2,
                            replays=2)
    assert [(t.scenario, t.replay) for t in tasks] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert tasks[0].jobs == tasks[1].jobs and tasks[0].sim_seed != tasks[1].sim_seed
    agent = Agent(*serving_model(registry, "base"), explain=False)
    gate = validate(agent, agent, tasks, scene.cluster, scene.sim)
    runs = [censored_avg_jct(simulate(t.jobs, scene.cluster, DagpilotScheduler(agent),
                                      SimSettings(), t.sim_seed)) for t in tasks]
    expected = (statistics.fmean(runs[:2]), statistics.fmean(runs[2:]))
    assert gate.candidate_jct_s == gate.serving_jct_s == expected
    assert (gate.interval.mean, gate.interval.high) == (1.0, 1.0)


def test_one_replay_keeps_the_gates_seeds() -> None:
    scene = world("builtin:mlflow:4", "builtin:small", None)
    one = held_back_tasks(scene.jobs, scene.cluster, seed=7, seeds=3, horizon_h=0.2)
    three = held_back_tasks(scene.jobs, scene.cluster, seed=7, seeds=3, horizon_h=0.2,
                            replays=3)
    assert [t.sim_seed for t in one] == [t.sim_seed for t in three if t.replay == 0]
