"""What the harness keeps of one finished run: its metrics, its bound and the series to plot.

A RunRecord holds every pod; the summary and the plots need far less, so only compact arrays
are kept and the record can be dropped as soon as the run is measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagpilot.bench.bounds import LowerBound
from dagpilot.bench.metrics import FloatArray, RunMetrics, Window, compute_metrics
from dagpilot.bench.metrics import job_completion_times as jcts_of
from dagpilot.sim.record import RunRecord


@dataclass(frozen=True)
class RunSeries:
    """JCTs of the finished jobs, how many jobs entered the run, and the sampled cluster figures
    over time."""

    jcts_s: FloatArray
    jobs: int
    times_s: FloatArray
    pending: FloatArray
    cpu_allocated: FloatArray
    cpu_used: FloatArray
    gpu_allocated: FloatArray
    end_s: float

    @classmethod
    def of(cls, record: RunRecord) -> RunSeries:
        samples = record.samples

        def column(name: str) -> FloatArray:
            return np.array([getattr(sample, name) for sample in samples], dtype=np.float64)

        finished = [job for job in record.jobs if job.finish_s is not None]
        entered = sum(1 for job in record.jobs if job.arrival_s < record.end_s)
        return cls(jcts_s=jcts_of(finished, record.end_s), jobs=entered, times_s=column("time_s"),
                   pending=column("pending"), cpu_allocated=column("cpu_allocated"),
                   cpu_used=column("cpu_used"), gpu_allocated=column("gpu_allocated"),
                   end_s=record.end_s)


@dataclass(frozen=True)
class RunResult:
    """One (seed, scheduler) run, measured."""

    seed: int
    scheduler: str
    metrics: RunMetrics
    bound: LowerBound
    series: RunSeries

    @classmethod
    def measure(cls, scheduler: str, record: RunRecord, bound: LowerBound,
                bursts: Sequence[Window] = ()) -> RunResult:
        """`scheduler` is the name the benchmark asked for (the record's may be a display name)."""
        return cls(record.seed, scheduler, compute_metrics(record, bursts), bound,
                   RunSeries.of(record))
