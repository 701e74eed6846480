"""The scenarios the adapter replays: the configured pool, recalibrated by the drift, as
arrival sequences of the simulator.

Recalibration multiplies the runtime of every task of the drifting class (its task-name family,
its id's, or its workflow template's: the job id's family) by the drift's median slowdown, so
the simulator's tasks take as long as the feedback says they now do. Fine-tune episodes and the
gate's held-back episodes come from different streams (phase "ppo" with the iteration, phase
"eval"), so the gate never judges on a sequence the fine-tune trained on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from dagpilot.core.types import Cluster, Job, Task
from dagpilot.online.drift import Drift, task_family
from dagpilot.train.scenarios import EpisodeTask, loaded_episode_tasks

LOAD = 0.8  # the training load (TrainConfig.load)


def recalibrated(jobs: Sequence[Job], drift: Drift) -> tuple[Job, ...]:
    """The jobs with the drifting class's runtimes scaled by the drift's slowdown."""
    return tuple(_job(job, drift) for job in jobs)


def _job(job: Job, drift: Drift) -> Job:
    whole = task_family(job.id) == drift.task_class
    tasks = tuple(_task(task, drift.ratio) if whole or _of_class(task, drift.task_class)
                  else task for task in job.tasks)
    return dataclasses.replace(job, tasks=tasks)


def _of_class(task: Task, task_class: str) -> bool:
    return task_class in (task.name, task_family(task.name), task_family(task.id))


def _task(task: Task, ratio: float) -> Task:
    return dataclasses.replace(task, runtime_s=task.runtime_s * ratio,
                               instance_runtimes_s=tuple(r * ratio
                                                         for r in task.instance_runtimes_s))


def training_tasks(jobs: Sequence[Job], cluster: Cluster, *, seed: int, iteration: int,
                   scenarios: int, replays: int, horizon_h: float) -> list[EpisodeTask]:
    return loaded_episode_tasks(jobs, cluster, seed=seed, episodes=scenarios, load=LOAD,
                                horizon_s=horizon_h * 3600.0, phase="ppo",
                                iteration=iteration, replays=replays)


def held_back_tasks(jobs: Sequence[Job], cluster: Cluster, *, seed: int, seeds: int,
                    horizon_h: float) -> list[EpisodeTask]:
    """One episode per validation seed, from the evaluation streams."""
    return loaded_episode_tasks(jobs, cluster, seed=seed, episodes=seeds, load=LOAD,
                                horizon_s=horizon_h * 3600.0, phase="eval")
