"""The metrics of one simulated run (DESIGN.md section 6), computed from its RunRecord.

Definitions, so that two runs are compared on the same terms:

- JCT (job completion time) = finish - arrival. A job still unfinished when the run ended is
  *censored*: its JCT counts as end of run - arrival, a lower bound on its true JCT, and
  `unfinished_jobs` says how many were cut short. A job arriving at or after the end of the run
  never entered it: it is counted as unfinished and left out of the JCT figures. A job that
  failed (a pod OOM-killed past the retry limit) never completed either: it is unfinished,
  `failed_jobs` counts it too, and its JCT is end of run - arrival + its critical path (the
  least its resubmission costs), so failing jobs never looks cheap, even when it lets the run
  end sooner (`JobRecord.effective_jct_s`).
- Percentiles: linear interpolation between order statistics (numpy's default).
- Makespan = the last finish (the end of the run when a job is unfinished) - the first arrival.
- Slowdown = JCT / critical path at ideal speeds, averaged over jobs with a positive critical path.
- Backlog = pods pending (created, waiting for a node). Samples form a step function: a value
  holds until the next sample, and the backlog is 0 before the first one.
- Drain time of a burst [start, end): the pre-burst level L is the time-weighted mean backlog
  over the burst's length just before it starts (never before 0 or the previous burst's end;
  L = 0 when there is no time before it). The burst's peak is the highest backlog from its start
  until the next burst (or the end of the run): pods of burst jobs may only be created hours
  later, when their DAGs reach them. The drain time runs from the burst's *end* (when the extra
  arrivals stop) until the backlog, past that peak, is first back at or below L; 0 when the peak
  never rises above L. If it never gets back before the run ends, it is censored at end of run -
  burst end and `drained` is false. Several bursts: the longest drain. No burst: from the (first)
  peak of the backlog until it is back at or below its time-weighted mean over the whole run.
- Utilisation: time-weighted means of the sampled shares, from the first sample to the end.
- Decisions per second = decisions / wall seconds spent inside `Scheduler.decide`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dagpilot.sim.record import JobRecord, RunRecord

FloatArray = npt.NDArray[np.float64]
Window = tuple[float, float]
"""A burst as (start_s, end_s)."""


@dataclass(frozen=True, slots=True)
class RunMetrics:
    jobs: int
    unfinished_jobs: int
    failed_jobs: int
    avg_jct_s: float
    p50_jct_s: float
    p95_jct_s: float
    p99_jct_s: float
    makespan_s: float
    avg_slowdown: float
    oom_kills: int
    fault_kills: int
    restarts: int
    peak_backlog: int
    drain_s: float
    drained: bool
    cpu_allocated: float
    cpu_used: float
    gpu_allocated: float
    decisions: int
    decisions_per_s: float
    events: int
    wall_s: float  # wall-clock seconds of the run (simulation and decisions)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class Drain:
    seconds: float
    drained: bool


def compute_metrics(record: RunRecord, bursts: Sequence[Window] = ()) -> RunMetrics:
    """Every metric of one run; `bursts` are the burst windows of its arrivals."""
    entered = [job for job in record.jobs if job.arrival_s < record.end_s]
    jcts = job_completion_times(entered, record.end_s)
    times, pending = backlog_series(record)
    drain = drain_time(times, pending, record.end_s, bursts)
    return RunMetrics(
        jobs=len(record.jobs),
        unfinished_jobs=sum(1 for job in record.jobs if job.finish_s is None),
        failed_jobs=sum(1 for job in record.jobs if job.failed),
        avg_jct_s=float(jcts.mean()) if jcts.size else 0.0,
        p50_jct_s=_percentile(jcts, 50),
        p95_jct_s=_percentile(jcts, 95),
        p99_jct_s=_percentile(jcts, 99),
        makespan_s=makespan(entered, record.end_s),
        avg_slowdown=average_slowdown(entered, jcts),
        oom_kills=record.oom_kills,
        fault_kills=record.fault_kills,
        restarts=record.restarts,
        peak_backlog=int(pending.max()) if pending.size else 0,
        drain_s=drain.seconds,
        drained=drain.drained,
        cpu_allocated=_utilisation(record, "cpu_allocated"),
        cpu_used=_utilisation(record, "cpu_used"),
        gpu_allocated=_utilisation(record, "gpu_allocated"),
        decisions=record.decisions,
        decisions_per_s=decisions_per_second(record),
        events=record.events,
        wall_s=record.wall_seconds,
    )


def job_completion_times(jobs: Sequence[JobRecord], end_s: float) -> FloatArray:
    """JCT per job: an unfinished job censored at `end_s`, a failed one charged its rerun."""
    return np.array([job.effective_jct_s(end_s) for job in jobs], dtype=np.float64)


def makespan(jobs: Sequence[JobRecord], end_s: float) -> float:
    if not jobs:
        return 0.0
    last = max(job.finish_s if job.finish_s is not None else end_s for job in jobs)
    return last - min(job.arrival_s for job in jobs)


def average_slowdown(jobs: Sequence[JobRecord], jcts: FloatArray) -> float:
    paths = np.array([job.critical_path_s for job in jobs], dtype=np.float64)
    positive = paths > 0
    return float((jcts[positive] / paths[positive]).mean()) if positive.any() else 0.0


def decisions_per_second(record: RunRecord) -> float:
    if record.decisions == 0:
        return 0.0
    return record.decisions / max(record.decision_seconds, 1e-9)


def backlog_series(record: RunRecord) -> tuple[FloatArray, FloatArray]:
    """(sample times, pending pods) as arrays."""
    times = np.array([sample.time_s for sample in record.samples], dtype=np.float64)
    pending = np.array([sample.pending for sample in record.samples], dtype=np.float64)
    return times, pending


def drain_time(times: FloatArray, values: FloatArray, end_s: float,
               bursts: Sequence[Window] = ()) -> Drain:
    """How long the backlog takes to come back after each burst (see the module docstring)."""
    if not values.size:
        return Drain(0.0, True)
    if not bursts:
        top = int(np.argmax(values))
        level = time_weighted_mean(times, values, float(times[0]), end_s)
        return _back_to_level(times, values, peak=top, level=level, since=float(times[top]),
                              end_s=end_s)
    drains = []
    ordered = sorted(bursts)
    for number, (start, stop) in enumerate(ordered):
        before = max(ordered[number - 1][1] if number else 0.0, start - (stop - start))
        level = time_weighted_mean(times, values, before, start) if start > before else 0.0
        until = ordered[number + 1][0] if number + 1 < len(ordered) else end_s
        peak = _peak_index(times, values, start, until)
        if peak is None or values[peak] <= level + 1e-9:
            drains.append(Drain(0.0, True))
        else:
            drains.append(_back_to_level(times, values, peak=peak, level=level,
                                         since=min(stop, end_s), end_s=end_s))
    return max(drains, key=lambda drain: drain.seconds)


def _peak_index(times: FloatArray, values: FloatArray, start: float, until: float) -> int | None:
    """Index of the first highest sample in [start, until), counting the value held at start."""
    inside = np.flatnonzero((times >= start) & (times < until))
    held = int(np.searchsorted(times, start, side="right")) - 1
    candidates = ([held] if held >= 0 else []) + inside.tolist()
    if not candidates:
        return None
    return max(candidates, key=lambda index: (values[index], -index))


def _back_to_level(times: FloatArray, values: FloatArray, *, peak: int, level: float,
                   since: float, end_s: float) -> Drain:
    """Time from `since` until the first sample after `peak` at or below `level`."""
    back = np.flatnonzero(values[peak:] <= level + 1e-9)
    if not back.size:
        return Drain(max(end_s - since, 0.0), False)
    return Drain(max(float(times[peak + int(back[0])]) - since, 0.0), True)


def value_at(times: FloatArray, values: FloatArray, at: float) -> float:
    """The step function at `at`: the last sample at or before it, 0 before the first."""
    index = int(np.searchsorted(times, at, side="right")) - 1
    return float(values[index]) if index >= 0 else 0.0


def time_weighted_mean(times: FloatArray, values: FloatArray, start: float, end: float) -> float:
    """Mean of the step function over [start, end); 0 where no sample has been taken yet."""
    if end <= start:
        return value_at(times, values, start)
    segment_ends = np.append(times[1:], np.inf)
    lengths = np.clip(np.minimum(segment_ends, end) - np.maximum(times, start), 0.0, None)
    return float((lengths * values).sum() / (end - start))


def _utilisation(record: RunRecord, field: str) -> float:
    if not record.samples:
        return 0.0
    times = np.array([sample.time_s for sample in record.samples], dtype=np.float64)
    values = np.array([getattr(sample, field) for sample in record.samples], dtype=np.float64)
    return time_weighted_mean(times, values, float(times[0]), max(record.end_s, float(times[-1])))


def _percentile(values: FloatArray, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else 0.0
