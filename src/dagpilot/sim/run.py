"""`simulate`: one run of a workload on a cluster under a Scheduler, as a RunRecord.

It is the RL environment's loop with the scheduler as the agent, so a benchmark and a training
rollout see exactly the same simulator.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.types import Cluster, Job
from dagpilot.core.view import ClusterView
from dagpilot.sim.env import SimEnv
from dagpilot.sim.record import RunRecord
from dagpilot.sim.streams import stream


def simulate(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler, settings: SimSettings,
             seed: int, *, progress: Callable[[float], None] | None = None) -> RunRecord:
    """Run `jobs` on `cluster` with `scheduler`; one seed gives one result, bit for bit.

    `progress`, when given, is called with the share of jobs ended (0..1) whenever it grows.
    Ctrl-C ends the run early: the partial record comes back with `interrupted=True`.
    """
    started = time.perf_counter()
    env = SimEnv(jobs, cluster, settings, scheduler.name)
    interrupted = False
    try:
        scheduler.reset(cluster, stream(seed, "scheduler"))
        view = env.reset(seed)
        _drive(env, scheduler, view, progress, len(jobs))
    except KeyboardInterrupt:
        interrupted = True
    try:
        record = env.close()
    except RuntimeError:  # interrupted before the environment was set up
        record = RunRecord(scheduler.name, seed, settings.physics.enabled)
    record.interrupted = interrupted
    record.wall_seconds = time.perf_counter() - started
    return record


def _drive(env: SimEnv, scheduler: Scheduler, view: ClusterView,
           progress: Callable[[float], None] | None, total: int) -> None:
    record = env.record
    decide, step, clock = scheduler.decide, env.step, time.perf_counter
    done, reported = env.done, -1
    while not done:
        before = clock()
        placement = decide(view)
        record.decision_seconds += clock() - before
        view, _, done, info = step(placement)
        if progress is not None and info.jobs_ended != reported:
            reported = info.jobs_ended
            progress(reported / total if total else 1.0)
