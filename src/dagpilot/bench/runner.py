"""One (seed, scheduler) run of a benchmark: simulate, then measure.

`RunTask` carries everything a run needs, so it can be run here or in a worker process (where
the scheduler is built from the registry by name).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dagpilot.bench.bounds import LowerBound
from dagpilot.bench.metrics import Window
from dagpilot.bench.results import RunResult
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.types import Cluster, Job
from dagpilot.native import simulate
from dagpilot.schedulers import SCHEDULERS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunTask:
    """One run: a scheduler on one seed's arrival sequence."""

    index: int  # position in the benchmark's order (seed-major), to sort results back
    seed: int
    scheduler: str
    jobs: Sequence[Job]
    bound: LowerBound


@dataclass(frozen=True)
class RunContext:
    """What every run of a benchmark shares."""

    cluster: Cluster
    settings: SimSettings
    bursts: tuple[Window, ...]


class RunInterrupted(Exception):
    """The simulator stopped early on a Ctrl-C; its partial record is not a result."""


def execute(task: RunTask, context: RunContext, scheduler: Scheduler,
            progress: Callable[[float], None] | None = None) -> RunResult:
    """Simulate one run and measure it; RunInterrupted when a Ctrl-C cut it short."""
    record = simulate(task.jobs, context.cluster, scheduler, context.settings, task.seed,
                      progress=progress)
    if record.interrupted:
        raise RunInterrupted(f"seed {task.seed} {task.scheduler}")
    result = RunResult.measure(task.scheduler, record, task.bound, context.bursts)
    log.info("seed %d %s: avg JCT %.1f s, makespan %.1f s, %d events in %.1f s", task.seed,
             task.scheduler, result.metrics.avg_jct_s, result.metrics.makespan_s, record.events,
             record.wall_seconds)
    return result


def execute_by_name(task: RunTask, context: RunContext) -> tuple[int, RunResult]:
    """`execute` with the scheduler built from the registry (for worker processes)."""
    return task.index, execute(task, context, scheduler_registry()[task.scheduler]())


def scheduler_registry() -> dict[str, Callable[[], Scheduler]]:
    """Every baseline, and `dagpilot`: the current model of the registry in ./models."""
    return {**SCHEDULERS, "dagpilot": _dagpilot}


def _dagpilot() -> Scheduler:
    try:
        # torch is an optional extra and slow to import: only a run of dagpilot pays for it
        from dagpilot.agent import load_scheduler  # noqa: PLC0415
        from dagpilot.policy.process import settle_scheduler_process  # noqa: PLC0415
    except ImportError as error:
        raise SpecError("dagpilot", f"the DRL scheduler needs torch: {error}") from error
    scheduler = load_scheduler()
    settle_scheduler_process()  # a benchmark worker runs it for many decisions
    return scheduler
