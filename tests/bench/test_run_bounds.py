"""A benchmark's runs end, whatever the workload the loaders accept (issue 14, defect 4): a job
that cannot finish before a run's sample budget runs out is refused before any run, naming the
sampling interval that would do; a job arriving after a billion seconds of nothing is run
without sampling the wait."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dagpilot.bench.feasibility import BeyondSampleBudget
from dagpilot.bench.harness import BenchConfig, prepare, run_benchmark
from dagpilot.core.config import FaultSettings, Settings, StorageQosSettings
from dagpilot.core.types import Job
from dagpilot.schedulers import SCHEDULERS
from dagpilot.workloads.arrivals import ArrivalSpec
from tests.bench.builders import chain_job

YEAR_S = 365 * 86_400.0  # the loaders' longest task


def config(out_dir: Path) -> BenchConfig:
    return BenchConfig(workloads=("test:jobs",), cluster="builtin:small",
                       schedulers=("kube-default", "fifo"), seeds=(0,), out_dir=out_dir,
                       arrival=ArrivalSpec("trace"), plots=False)


def workload(monkeypatch: pytest.MonkeyPatch, *jobs: Job) -> None:
    monkeypatch.setattr("dagpilot.bench.harness.load_workloads", lambda specs, settings: list(jobs))


def with_sim(**changes: object) -> Settings:
    return dataclasses.replace(Settings(), sim=dataclasses.replace(Settings().sim, **changes))


def test_a_job_longer_than_a_run_can_stay_busy_is_refused_up_front(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workload(monkeypatch, chain_job("short", 0.0, (60.0, 1.0)),
             chain_job("year", 0.0, (YEAR_S, 1.0)))
    with pytest.raises(BeyondSampleBudget) as caught:
        prepare(config(tmp_path), Settings(), SCHEDULERS)
    message = str(caught.value)
    assert caught.value.job_id == "year"
    assert "(365.0 days) at ideal speed" in message
    assert "1,000,000 samples, one every 15 s (173.6 days)" in message
    assert "sample_interval_s = 64 or more" in message
    # the interval it names lets the job through, as does a horizon that ends the runs first
    assert prepare(config(tmp_path), with_sim(sample_interval_s=64.0), SCHEDULERS)
    assert prepare(config(tmp_path), with_sim(horizon_s=1e7), SCHEDULERS)


def test_a_job_after_a_billion_idle_seconds_is_benchmarked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workload(monkeypatch, chain_job("now", 0.0, (60.0, 1.0)),
             chain_job("later", 1e9, (60.0, 1.0), (30.0, 2.0)))
    still = with_sim(storage=StorageQosSettings(collapse_rate_per_hour=0.0, drift_interval_s=0.0),
                     faults=FaultSettings(rate_per_node_hour=0.0))
    summary = run_benchmark(config(tmp_path), still)
    document = json.loads(summary.path.read_text())
    for row in document["per_seed"]:
        assert row["unfinished_jobs"] == 0
        assert row["events"] < 200  # the wait is not sampled every 15 s
    assert document["schedulers"]["kube-default"]["makespan_s"] > 1e9
