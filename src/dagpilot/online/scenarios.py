"""The scenarios the adapter replays: the configured pool, recalibrated by the drift, as
arrival sequences of the simulator.

Recalibration multiplies the runtime of every task of a drifting class (its task-name family,
its id's, or its workflow template's: the job id's family) by that class's factor (the drift's
median slowdown, or online.recalibration's per-class factors), so the simulator's tasks take as
long as the feedback says they now do. Fine-tune episodes and the
gate's held-back episodes come from different streams (phase "ppo" with the iteration, phase
"eval"), so the gate never judges on a sequence the fine-tune trained on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from dagpilot.core.types import Cluster, Job, Task
from dagpilot.online.drift import Drift, task_family
from dagpilot.train.scenarios import EpisodeTask, loaded_episode_tasks

LOAD = 0.8  # the training load (TrainConfig.load): AdapterSettings.load's default


def recalibrated(jobs: Sequence[Job], drift: Drift) -> tuple[Job, ...]:
    """The jobs with the drifting class's runtimes scaled by the drift's slowdown."""
    return scaled(jobs, {drift.task_class: drift.ratio})


def scaled(jobs: Sequence[Job], factors: Mapping[str, float]) -> tuple[Job, ...]:
    """The jobs with each listed class's runtimes scaled by its factor."""
    return tuple(_job(job, factors) for job in jobs) if factors else tuple(jobs)


def _job(job: Job, factors: Mapping[str, float]) -> Job:
    whole = factors.get(task_family(job.id))
    tasks = tuple(_task(task, factor) if (factor := whole or _factor(task, factors)) else task
                  for task in job.tasks)
    return dataclasses.replace(job, tasks=tasks)


def _factor(task: Task, factors: Mapping[str, float]) -> float | None:
    for name in (task.name, task_family(task.name), task_family(task.id)):
        if name in factors:
            return factors[name]
    return None


def _task(task: Task, ratio: float) -> Task:
    return dataclasses.replace(task, runtime_s=task.runtime_s * ratio,
                               instance_runtimes_s=tuple(r * ratio
                                                         for r in task.instance_runtimes_s))


def training_tasks(jobs: Sequence[Job], cluster: Cluster, *, seed: int, iteration: int,
                   scenarios: int, replays: int, horizon_h: float,
                   load: float = LOAD) -> list[EpisodeTask]:
    return loaded_episode_tasks(jobs, cluster, seed=seed, episodes=scenarios, load=load,
                                horizon_s=horizon_h * 3600.0, phase="ppo",
                                iteration=iteration, replays=replays)


def held_back_tasks(jobs: Sequence[Job], cluster: Cluster, *, seed: int, seeds: int,
                    horizon_h: float, replays: int = 1,
                    load: float = LOAD) -> list[EpisodeTask]:
    """One arrival sequence per validation seed, from the evaluation streams, each replayed
    on `replays` simulator seeds."""
    return loaded_episode_tasks(jobs, cluster, seed=seed, episodes=seeds, load=load,
                                horizon_s=horizon_h * 3600.0, phase="eval", replays=replays)
