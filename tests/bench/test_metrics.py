"""Metrics hand-computed on a tiny run."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.bench.metrics import compute_metrics, drain_time, time_weighted_mean
from dagpilot.sim.record import JobRecord, Sample
from tests.bench.builders import record

JOBS = [
    JobRecord("a", 0.0, 100.0, critical_path_s=50.0, work_core_s=10.0),  # JCT 100, slowdown 2
    JobRecord("b", 10.0, 70.0, critical_path_s=60.0, work_core_s=10.0),  # JCT 60, slowdown 1
    JobRecord("c", 20.0, None, critical_path_s=40.0, work_core_s=10.0),  # censored: 180, 4.5
    JobRecord("d", 250.0, None, critical_path_s=40.0, work_core_s=10.0),  # arrives after the end
]
FAILED = JobRecord("e", 20.0, None, critical_path_s=40.0, work_core_s=10.0, failed=True)
# (time, pending); the burst is [30, 60)
BACKLOG = [(0, 0), (10, 2), (20, 4), (30, 10), (40, 20), (60, 15), (80, 3), (90, 1), (120, 0)]
BURST = (30.0, 60.0)


def test_jct_figures_censor_unfinished_jobs_and_skip_jobs_that_never_arrived() -> None:
    metrics = compute_metrics(record(jobs=JOBS, backlog=BACKLOG, end_s=200.0), [BURST])
    assert metrics.jobs == 4
    assert metrics.unfinished_jobs == 2
    assert metrics.avg_jct_s == pytest.approx((100 + 60 + 180) / 3)
    assert metrics.p50_jct_s == pytest.approx(100.0)
    assert metrics.p95_jct_s == pytest.approx(100 + 0.9 * 80)  # rank 1.9 of [60, 100, 180]
    assert metrics.p99_jct_s == pytest.approx(100 + 0.98 * 80)
    assert metrics.makespan_s == pytest.approx(200.0)  # c is unfinished at the end (200)
    assert metrics.avg_slowdown == pytest.approx((2 + 1 + 4.5) / 3)


def test_a_failed_job_counts_until_the_end_plus_its_rerun() -> None:
    metrics = compute_metrics(record(jobs=[*JOBS, FAILED], backlog=BACKLOG, end_s=200.0))
    assert metrics.failed_jobs == 1
    assert metrics.unfinished_jobs == 3
    # e: censored at 200 - 20 = 180, plus its critical path 40 (the least a rerun takes)
    assert metrics.avg_jct_s == pytest.approx((100 + 60 + 180 + 180 + 40) / 4)


def test_peak_backlog_and_drain_after_the_burst() -> None:
    metrics = compute_metrics(record(jobs=JOBS, backlog=BACKLOG, end_s=200.0), [BURST])
    assert metrics.peak_backlog == 20
    # pre-burst level: mean over [0, 30) = (0*10 + 2*10 + 4*10) / 30 = 2; from the burst end
    # (60, backlog 15) the first sample at or below 2 is at 90
    assert metrics.drain_s == pytest.approx(30.0)
    assert metrics.drained


def test_drain_without_burst_runs_from_the_peak_to_the_run_mean() -> None:
    metrics = compute_metrics(record(jobs=JOBS, backlog=BACKLOG, end_s=200.0))
    # whole-run mean = 920 / 200 = 4.6; peak at 40; first sample <= 4.6 is at 80
    assert metrics.drain_s == pytest.approx(40.0)


def test_a_backlog_that_never_drains_is_censored_at_the_end() -> None:
    short = [(t, p) for t, p in BACKLOG if t <= 80]
    metrics = compute_metrics(record(jobs=JOBS, backlog=short, end_s=100.0), [BURST])
    assert metrics.drain_s == pytest.approx(40.0)  # 100 - 60
    assert not metrics.drained


def test_a_burst_at_time_zero_drains_to_an_empty_backlog() -> None:
    times = np.array([0.0, 10.0, 20.0])
    pending = np.array([5.0, 1.0, 0.0])
    assert drain_time(times, pending, 50.0, [(0.0, 5.0)]).seconds == pytest.approx(15.0)


def test_utilisation_is_time_weighted_and_decisions_per_second() -> None:
    run = record(end_s=200.0)
    run.samples.extend([Sample(0.0, 0, 0, 0.5, 0.25, 0.0), Sample(120.0, 0, 0, 1.0, 0.5, 1.0)])
    run.decisions, run.decision_seconds = 50, 0.5
    metrics = compute_metrics(run)
    assert metrics.cpu_allocated == pytest.approx((0.5 * 120 + 1.0 * 80) / 200)
    assert metrics.cpu_used == pytest.approx((0.25 * 120 + 0.5 * 80) / 200)
    assert metrics.gpu_allocated == pytest.approx(80 / 200)
    assert metrics.decisions_per_s == pytest.approx(100.0)


def test_counters_pass_through() -> None:
    run = record()
    run.oom_kills, run.fault_kills, run.restarts = 3, 1, 4
    metrics = compute_metrics(run)
    assert (metrics.oom_kills, metrics.fault_kills, metrics.restarts) == (3, 1, 4)
    assert metrics.decisions_per_s == 0.0
    assert metrics.avg_jct_s == 0.0


def test_time_weighted_mean_counts_zero_before_the_first_sample() -> None:
    times, values = np.array([10.0, 20.0]), np.array([4.0, 2.0])
    assert time_weighted_mean(times, values, 0.0, 30.0) == pytest.approx((40 + 20) / 30)


def test_a_backlog_that_builds_after_the_burst_ends_still_counts() -> None:
    # the burst's jobs create their pods only later: backlog 0 at the burst end (60), then 8
    times = np.array([0.0, 100.0, 150.0, 400.0])
    pending = np.array([0.0, 8.0, 3.0, 0.0])
    drain = drain_time(times, pending, 500.0, [(30.0, 60.0)])
    assert drain.seconds == pytest.approx(400.0 - 60.0)
    assert drain.drained


def test_a_burst_that_raises_no_backlog_drains_at_once() -> None:
    times = np.array([0.0, 10.0, 50.0])
    pending = np.array([2.0, 2.0, 1.0])
    assert drain_time(times, pending, 100.0, [(20.0, 30.0)]).seconds == 0.0
