"""What the simulator itself predicts a class's slowdown to be: the baseline a feedback
slowdown is read against.

    medians = reference_slowdowns(agent, jobs, cluster, sim, seed=s, horizon_h=h)

Feedback compares a pod's runtime with its nominal runtime, but the simulator already slows
pods by interference (a shuffle stage's network, a shared disk's queue): on an undrifted
cluster some classes run well past their nominal runtime. A class has drifted only by how much
more the feedback shows than the simulator, replaying the serving model on the configured
pool and cluster, produces by itself. One episode of `horizon_h` from its own stream.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from dagpilot.agent import Agent, DagpilotScheduler
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job, Task
from dagpilot.native import simulate
from dagpilot.online.drift import task_family
from dagpilot.online.scenarios import LOAD
from dagpilot.sim.record import PodRecord
from dagpilot.train.scenarios import loaded_episode_tasks


def reference_slowdowns(agent: Agent, jobs: Sequence[Job], cluster: Cluster, sim: SimSettings,
                        *, seed: int, horizon_h: float,
                        load: float = LOAD) -> dict[str, float]:
    """Each task family's median runtime over nominal runtime in one undrifted episode."""
    task = loaded_episode_tasks(jobs, cluster, seed=seed, episodes=1, load=load,
                                horizon_s=horizon_h * 3600.0, phase="eval", iteration=0)[0]
    record = simulate(task.jobs, cluster, DagpilotScheduler(agent), sim, task.sim_seed)
    by_id = {job.id: job for job in task.jobs}
    ratios: dict[str, list[float]] = {}
    for pod in record.pods:
        if pod.outcome == "succeeded" and pod.started_s is not None and pod.finished_s:
            ran = by_id[pod.job_id].index[pod.task_id]
            ratios.setdefault(task_family(ran.name), []).append(
                (pod.finished_s - pod.started_s) / nominal_runtime_s(ran, pod))
    return {name: statistics.median(values) for name, values in ratios.items()}


def nominal_runtime_s(task: Task, pod: PodRecord) -> float:
    """The pod's own instance runtime when recorded (`job/task-N`), else the task's."""
    if task.instances > 1 and task.instance_runtimes_s:
        return task.instance_runtimes_s[int(pod.pod.rsplit("-", 1)[1])]
    return task.runtime_s
