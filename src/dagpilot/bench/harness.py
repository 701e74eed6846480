"""`run_benchmark`: every (seed, scheduler) pair on the simulator, then `summary.json` and plots.

Everything is checked before the first run (scheduler names, specs, a task that can never
fit, a job longer than a run can last), so a mistake costs seconds, not a night. The design is
paired: per seed the arrival sequence is drawn once and every scheduler runs on the same jobs
with the same seed.

Poisson arrivals are set on the cluster's busiest resource (see offered_load). With a horizon,
jobs arrive until it and each run goes on until every job has ended, but never past the
horizon plus DRAIN_FACTOR times the longer of the horizon and the longest critical path (a job
still running then is censored, see metrics). A seed whose arrivals bring no job before the
horizon is refused (see feasibility): its runs would report only zeros.

A Ctrl-C during the runs stops them, writes the summary (marked `"interrupted": true`) and
the plots of the runs that finished, then raises `Interrupted`, a KeyboardInterrupt that
carries the summary.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.bench.bounds import lower_bound
from dagpilot.bench.feasibility import check_arrivals, check_fits, check_sample_budget
from dagpilot.bench.metrics import Window
from dagpilot.bench.offered_load import (
    cpu_equivalent_cores,
    jobs_per_hour,
    offered_load,
)
from dagpilot.bench.plots import write_plots
from dagpilot.bench.pool import run_in_pool
from dagpilot.bench.results import RunResult
from dagpilot.bench.runner import (
    RunContext,
    RunInterrupted,
    RunTask,
    execute,
    scheduler_registry,
)
from dagpilot.bench.summary import Header, build_summary, write_json_atomic
from dagpilot.clusters import load_cluster
from dagpilot.core.config import Settings, SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.shared_ids import tagged_where_shared
from dagpilot.core.types import Cluster, Job
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

log = logging.getLogger(__name__)

SUMMARY_FILE = "summary.json"
ARRIVAL_STREAM = 1  # arrivals draw from their own stream, so they do not shift the run's draws
DRAIN_FACTOR = 4.0

Progress = Callable[[float, str], None]
"""Called with the share of the whole benchmark done (0..1) and what runs now."""
Registry = Mapping[str, Callable[[], Scheduler]]


@dataclass(frozen=True)
class BenchConfig:
    """What `dagpilot bench` runs."""

    workloads: tuple[str, ...]
    cluster: str
    schedulers: tuple[str, ...]
    seeds: tuple[int, ...]
    out_dir: Path
    arrival: ArrivalSpec = dataclasses.field(default_factory=ArrivalSpec)
    physics: bool = True
    horizon_s: float | None = None
    plots: bool = True
    workers: int = 1  # processes running runs side by side

    @property
    def bursts(self) -> tuple[Window, ...]:
        return tuple((burst.start_s, burst.end_s) for burst in self.arrival.bursts)


@dataclass(frozen=True)
class Summary:
    """The written summary document, where it is, and the plots beside it."""

    document: dict[str, Any]
    path: Path
    plots: tuple[Path, ...]
    interrupted: bool


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a benchmark, after the summary of the finished runs was written."""

    def __init__(self, summary: Summary) -> None:
        super().__init__(f"{summary.document['runs']} finished runs written to {summary.path}")
        self.summary = summary


@dataclass(frozen=True)
class Prepared:
    """The checked inputs: loaded once, shared by every run."""

    cluster: Cluster
    jobs: list[Job]
    startup_s: float = 0.0  # each pod's start-up, counted in the offered load


def run_benchmark(config: BenchConfig, settings: Settings | None = None,
                  progress: Progress | None = None,
                  registry: Registry | None = None) -> Summary:
    """Run the benchmark and write `summary.json` (and the plots) into `config.out_dir`.

    A custom `registry` (schedulers not in `scheduler_registry()`: the baselines and
    `dagpilot`) runs in this process only.
    """
    settings = settings or Settings()
    prepared = prepare(config, settings, registry or scheduler_registry())
    tasks = plan(config, prepared)
    context = RunContext(prepared.cluster, sim_settings(settings.sim, config, prepared.jobs),
                         config.bursts)
    results: list[RunResult] = []
    try:
        if config.workers > 1 and registry is None and len(tasks) > 1:
            _run_parallel(tasks, context, config.workers, results, progress)
        else:
            _run_here(tasks, context, registry or scheduler_registry(), results, progress)
    except (KeyboardInterrupt, RunInterrupted):
        log.warning("interrupted after %d finished runs", len(results))
        raise Interrupted(finish(config, prepared, results, interrupted=True)) from None
    return finish(config, prepared, results, interrupted=False)


def prepare(config: BenchConfig, settings: Settings, registry: Registry) -> Prepared:
    """Check every input and load the cluster and the workloads; raise before any run."""
    check_config(config, registry)
    cluster = load_cluster(config.cluster, settings.loaders)
    jobs = load_workloads(config.workloads, settings)
    check_fits(jobs, cluster)
    check_sample_budget(jobs, cluster, sim_settings(settings.sim, config, jobs))
    check_writable(config.out_dir)
    return Prepared(cluster, jobs, settings.sim.startup_median_s)


def check_config(config: BenchConfig, registry: Registry) -> None:
    if not config.schedulers:
        raise SpecError("", "no scheduler given")
    unknown = [name for name in config.schedulers if name not in registry]
    if unknown:
        raise SpecError(",".join(unknown), f"unknown scheduler{'s' if len(unknown) > 1 else ''}"
                        f"; known: {', '.join(sorted(registry))}")
    if len(set(config.schedulers)) != len(config.schedulers):
        raise SpecError(",".join(config.schedulers), "a scheduler is named twice")
    if not config.seeds:
        raise SpecError("", "at least one seed is needed")
    if not config.workloads:
        raise SpecError("", "at least one workload is needed")
    if config.horizon_s is not None and not config.horizon_s > 0:
        raise SpecError(str(config.horizon_s), "the horizon must be above 0 seconds")
    late = [str(b) for b in config.arrival.bursts
            if config.horizon_s is not None and b.start_s >= config.horizon_s]
    if late:
        raise SpecError(", ".join(late), f"the burst starts at or after the horizon "
                        f"({config.horizon_s:g} s): no job would arrive in it")


def check_writable(out_dir: Path) -> None:
    """Fail now, not after hours of runs, when the results cannot be written."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):
            pass
    except OSError as error:
        raise SpecError(str(out_dir), f"cannot write results there: {error}") from error


def load_workloads(specs: Sequence[str], settings: Settings) -> list[Job]:
    """The jobs of every spec in order; ids shared by two specs get the spec's number prefixed."""
    loaded = [load(spec, settings.loaders) for spec in specs]
    ids = tagged_where_shared([[job.id for job in jobs] for jobs in loaded],
                              lambda index: f"w{index}")
    merged = [job if job.id == job_id else dataclasses.replace(job, id=job_id)
              for jobs, new_ids in zip(loaded, ids, strict=True)
              for job, job_id in zip(jobs, new_ids, strict=True)]
    if not merged:
        raise SpecError(" ".join(specs), "the workloads hold no jobs")
    return merged


def arrivals_for(seed: int, config: BenchConfig, prepared: Prepared) -> list[Job]:
    """The seed's arrival sequence, identical for every scheduler."""
    rng = np.random.default_rng((seed, ARRIVAL_STREAM))
    cores = cpu_equivalent_cores(prepared.jobs, prepared.cluster, prepared.startup_s)
    return assign_arrivals(prepared.jobs, config.arrival, cores, rng, config.horizon_s)


def plan(config: BenchConfig, prepared: Prepared) -> list[RunTask]:
    """Every run, seed by seed; the schedulers of a seed share its arrivals and bound.

    Raises NoArrivals, before any run, when a seed's Poisson arrivals bring no job.
    """
    rate = jobs_per_hour(prepared.jobs, prepared.cluster, config.arrival.load,
                         prepared.startup_s)
    tasks: list[RunTask] = []
    for seed in config.seeds:
        jobs = arrivals_for(seed, config, prepared)
        check_arrivals(jobs, config.workloads, seed, rate, config.horizon_s)
        bound = lower_bound(jobs, prepared.cluster)
        tasks.extend(RunTask(len(tasks) + offset, seed, name, jobs, bound)
                     for offset, name in enumerate(config.schedulers))
    return tasks


def sim_settings(base: SimSettings, config: BenchConfig, jobs: Sequence[Job]) -> SimSettings:
    """The simulator settings of the benchmark: physics on or off, and the run's time limit."""
    physics = dataclasses.replace(base.physics, enabled=config.physics)
    horizon = base.horizon_s
    if config.horizon_s is not None:
        longest = max((job.critical_path_s for job in jobs), default=0.0)
        horizon = min(horizon, config.horizon_s + DRAIN_FACTOR * max(config.horizon_s, longest))
    return dataclasses.replace(base, physics=physics, horizon_s=horizon)


def _run_here(tasks: Sequence[RunTask], context: RunContext, registry: Registry,
              results: list[RunResult], progress: Progress | None) -> None:
    for task in tasks:
        label = f"seed {task.seed} · {task.scheduler}"
        report = _scaled(progress, len(results), len(tasks), label)
        report(0.0)
        results.append(execute(task, context, registry[task.scheduler](), report))
    if progress is not None:
        progress(1.0, "done")


def _run_parallel(tasks: Sequence[RunTask], context: RunContext, workers: int,
                  results: list[RunResult], progress: Progress | None) -> None:
    if progress is not None:
        progress(0.0, f"{len(tasks)} runs on {min(workers, len(tasks))} processes")

    def collect(task: RunTask, result: RunResult) -> None:
        results.append(result)
        if progress is not None:
            progress(len(results) / len(tasks), f"seed {task.seed} · {task.scheduler} done")

    run_in_pool(tasks, context, workers, collect)


def _scaled(progress: Progress | None, done: int, total: int,
            label: str) -> Callable[[float], None]:
    """The simulator's per-run progress as a share of the whole benchmark."""
    def report(fraction: float) -> None:
        if progress is not None:
            progress((done + min(max(fraction, 0.0), 1.0)) / total, label)
    return report


def header(config: BenchConfig, prepared: Prepared) -> Header:
    demand = offered_load(prepared.jobs, prepared.cluster, prepared.startup_s)
    arrival: dict[str, Any] = {"kind": config.arrival.kind, "load": config.arrival.load,
                               "bursts": [str(burst) for burst in config.arrival.bursts]}
    if config.arrival.kind == "poisson":
        per_hour = jobs_per_hour(prepared.jobs, prepared.cluster, config.arrival.load,
                                 prepared.startup_s)
        arrival |= {"bottleneck": demand.bottleneck, "jobs_per_hour": per_hour,
                    "offered": demand.shares(per_hour / 3600)}
    return Header(workloads=config.workloads, cluster=config.cluster, seeds=config.seeds,
                  physics=config.physics, horizon_s=config.horizon_s, arrival=arrival)


def finish(config: BenchConfig, prepared: Prepared, results: Sequence[RunResult],
           interrupted: bool) -> Summary:
    """Write summary.json and the plots of the finished runs."""
    ordered = sorted(results, key=lambda r: (r.seed, config.schedulers.index(r.scheduler)))
    document = build_summary(header(config, prepared), config.schedulers, ordered, interrupted)
    path = config.out_dir / SUMMARY_FILE
    write_json_atomic(path, document)
    plots = write_plots(ordered, config.schedulers, config.bursts, config.out_dir) \
        if config.plots else []
    return Summary(document, path, tuple(plots), interrupted)
