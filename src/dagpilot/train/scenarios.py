"""The episodes of one iteration: arrival sequences, each replayed with several seeds; and the
loaded episodes the learning curve is measured on.

An arrival sequence (the jobs of a curriculum stage with Poisson arrival times) is the input the
policy does not control; its replays differ in the simulator's seed (start-up delays, faults,
storage collapses) and in the policy's samples, and the input-driven baseline compares them.
All draws come from generators seeded by (training seed, phase, iteration, scenario), so a
training run is reproducible whatever backend runs the episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dagpilot.core.errors import SpecError
from dagpilot.core.types import Cluster, Job
from dagpilot.train.curriculum import Curriculum, Stage
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals, poisson

Capacity = Callable[[Sequence[Job], Cluster], float]
"""The cores a CPU-based Poisson rate is set on (the harness's `cpu_equivalent_cores` scales
them down when GPUs or memory are the bottleneck)."""

PHASES = {"bc": 1, "ppo": 2, "teacher": 3, "eval": 4}


def cluster_cores(jobs: Sequence[Job], cluster: Cluster) -> float:
    del jobs
    return cluster.capacity.cpu


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to run: which arrival sequence, which replay, and its seeds."""

    scenario: int
    replay: int
    jobs: tuple[Job, ...]
    sim_seed: int
    sample_seed: int


def episode_tasks(pool: Sequence[Job], cluster: Cluster, stage: Stage, *, seed: int,
                  phase: str, iteration: int, scenarios: int, replays: int, load: float,
                  capacity: Capacity = cluster_cores) -> list[EpisodeTask]:
    """`scenarios` arrival sequences of `stage`, each replayed `replays` times."""
    tasks = []
    for scenario in range(scenarios):
        rng = np.random.default_rng((seed, PHASES[phase], iteration, scenario))
        chosen = Curriculum.draw(pool, stage, rng)
        jobs = tuple(poisson(chosen, load, capacity(chosen, cluster), rng))
        for replay in range(replays):
            sim_seed, sample_seed = (int(x) for x in rng.integers(0, 2**31 - 1, size=2))
            tasks.append(EpisodeTask(scenario, replay, jobs, sim_seed, sample_seed))
    return tasks


def loaded_episode_tasks(pool: Sequence[Job], cluster: Cluster, *, seed: int, episodes: int,
                         load: float, horizon_s: float, capacity: Capacity = cluster_cores,
                         phase: str = "eval", iteration: int | None = None,
                         replays: int = 1) -> list[EpisodeTask]:
    """`episodes` arrival sequences of the whole pool (cycled) as a Poisson process at `load`
    until `horizon_s`, each replayed `replays` times: episodes that load the cluster as serving
    does, unlike the curriculum's few jobs. Episode e draws from (seed, phase, e), or with an
    iteration from (seed, phase, iteration, e): its own stream."""
    spec, cores = ArrivalSpec("poisson", load), capacity(pool, cluster)
    tasks = []
    for episode in range(episodes):
        key = (seed, PHASES[phase], episode) if iteration is None else (
            seed, PHASES[phase], iteration, episode)
        rng = np.random.default_rng(key)
        jobs = tuple(assign_arrivals(pool, spec, cores, rng, horizon_s))
        if not jobs:
            raise SpecError(f"{horizon_s / 3600:g} h", f"{phase} episode {episode} has no "
                            f"arrival within the horizon at load {load:g}; lengthen the horizon")
        for replay in range(replays):
            sim_seed, sample_seed = (int(x) for x in rng.integers(0, 2**31 - 1, size=2))
            tasks.append(EpisodeTask(episode, replay, jobs, sim_seed, sample_seed))
    return tasks
