"""Poisson arrivals that bring no job before the horizon are refused before any run."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from dagpilot.bench.feasibility import NoArrivals, suggest_horizon
from dagpilot.bench.harness import BenchConfig, plan, prepare, run_benchmark
from dagpilot.core.config import Settings
from dagpilot.core.errors import SpecError
from dagpilot.core.units import duration_s
from dagpilot.schedulers import SCHEDULERS
from dagpilot.workloads.arrivals import ArrivalSpec

WORKLOAD = "builtin:mix:4"  # about 23 jobs per hour at load 0.8 on builtin:small


def config(out_dir: Path, horizon_s: float) -> BenchConfig:
    return BenchConfig(workloads=(WORKLOAD,), cluster="builtin:small",
                       schedulers=("kube-default", "fifo"), seeds=(0, 1), out_dir=out_dir,
                       arrival=ArrivalSpec("poisson", 0.8), horizon_s=horizon_s, plots=False)


def test_a_horizon_too_short_for_one_arrival_is_refused_with_rate_and_a_longer_horizon(
        tmp_path: Path) -> None:
    with pytest.raises(NoArrivals) as caught:
        run_benchmark(config(tmp_path / "out", horizon_s=1.0))
    error = caught.value
    assert isinstance(error, SpecError)
    message = str(error)
    assert WORKLOAD in message
    assert "horizon of 1 s" in message
    assert f"{error.jobs_per_hour:.3g} jobs per hour" in message
    assert 20 < error.jobs_per_hour < 30
    assert not (tmp_path / "out" / "summary.json").exists()
    # the suggested horizon brings jobs for every seed
    suggested = re.search(r"--horizon (\S+)", message)
    assert suggested is not None
    longer = config(tmp_path / "out", horizon_s=duration_s(suggested[1]))
    tasks = plan(longer, prepare(longer, Settings(), SCHEDULERS))
    assert {task.seed for task in tasks} == {0, 1}
    assert all(task.jobs for task in tasks)


def test_trace_arrivals_are_not_checked_against_the_horizon(tmp_path: Path) -> None:
    recorded = dataclasses.replace(config(tmp_path, horizon_s=1.0), arrival=ArrivalSpec("trace"))
    assert plan(recorded, prepare(recorded, Settings(), SCHEDULERS))


@pytest.mark.parametrize(("jobs_per_hour", "horizon"), [
    (60.0, "10m"), (23.4, "26m"), (1.0, "10h"), (0.96, "11h"), (0.0, "(none: the rate is 0)")])
def test_the_suggested_horizon_brings_about_ten_jobs(jobs_per_hour: float, horizon: str) -> None:
    assert suggest_horizon(jobs_per_hour) == horizon
