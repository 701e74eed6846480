from __future__ import annotations

import numpy as np
import pytest

from dagpilot.core.errors import SpecError
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.types import Job, Resources, Task
from dagpilot.workloads.arrivals import (
    ArrivalSpec,
    Burst,
    arrival_times,
    assign_arrivals,
    poisson,
    poisson_rate,
    trace,
)


def job(job_id: str, runtime_s: float = 100.0, cpu: float = 2.0, arrival_s: float = 0.0) -> Job:
    draft = JobDraft("test", job_id, arrival_s=arrival_s)
    draft.add(Task("t", "t", runtime_s, Resources(cpu, 2**30)), "t")
    return build(draft)


POOL = [job("a", 50.0), job("b", 100.0), job("c", 150.0)]  # 100, 200, 300 core-s; mean 200


def test_the_rate_asks_for_the_load_of_the_cluster() -> None:
    assert poisson_rate(POOL, 0.8, 100.0) == pytest.approx(0.4)  # 0.8 x 100 cores / 200 core-s


def test_the_empirical_rate_matches_load_times_capacity_over_mean_work() -> None:
    arrivals = poisson(POOL, 0.8, 100.0, np.random.default_rng(1), horizon_s=50_000.0)
    assert len(arrivals) / 50_000.0 == pytest.approx(0.4, rel=0.03)
    offered = sum(j.total_work_core_s for j in arrivals) / 50_000.0
    assert offered / 100.0 == pytest.approx(0.8, rel=0.05)
    gaps = np.diff([j.arrival_s for j in arrivals])
    assert np.all(gaps >= 0)
    assert np.std(gaps) / np.mean(gaps) == pytest.approx(1.0, abs=0.05)  # exponential gaps


def test_a_burst_window_has_17_times_the_arrivals_per_second() -> None:
    burst = Burst.parse("17x@3600s+1800s")
    times = np.array(arrival_times(0.1, [burst], np.random.default_rng(2), horizon_s=10_000.0))
    inside = np.count_nonzero((times >= 3600) & (times < 5400)) / 1800
    outside = np.count_nonzero((times < 3600) | (times >= 5400)) / (10_000 - 1800)
    assert outside == pytest.approx(0.1, rel=0.12)
    assert inside / outside == pytest.approx(17, rel=0.15)


def test_bursts_at_zero_and_back_to_back_are_honoured() -> None:
    bursts = [Burst.parse("10x@0s+1000s"), Burst.parse("0x@1000s+1000s")]
    times = np.array(arrival_times(0.1, bursts, np.random.default_rng(3), horizon_s=3000.0))
    assert np.count_nonzero(times < 1000) == pytest.approx(1000, rel=0.15)
    assert np.count_nonzero((times >= 1000) & (times < 2000)) == 0
    assert 50 <= np.count_nonzero(times >= 2000) <= 160


def test_same_seed_same_arrivals() -> None:
    spec = ArrivalSpec.from_options("poisson", 0.5, ["4x@600s+300s"])
    first = assign_arrivals(POOL, spec, 64.0, np.random.default_rng(7), horizon_s=5000.0)
    again = assign_arrivals(POOL, spec, 64.0, np.random.default_rng(7), horizon_s=5000.0)
    other = assign_arrivals(POOL, spec, 64.0, np.random.default_rng(8), horizon_s=5000.0)
    assert [(j.id, j.arrival_s) for j in first] == [(j.id, j.arrival_s) for j in again]
    assert [j.arrival_s for j in first] != [j.arrival_s for j in other]


def test_the_pool_is_cycled_with_unique_ids_until_the_horizon() -> None:
    arrivals = poisson(POOL, 0.9, 100.0, np.random.default_rng(4), horizon_s=100.0)
    assert len(arrivals) > 7
    ids = [j.id for j in arrivals]
    assert ids[:7] == ["a", "b", "c", "a#2", "b#2", "c#2", "a#3"]
    assert len(set(ids)) == len(ids)
    assert all(j.arrival_s < 100.0 for j in arrivals)
    assert arrivals[3].tasks == POOL[0].tasks


def test_without_a_horizon_each_job_arrives_once_in_pool_order() -> None:
    arrivals = poisson(POOL, 0.9, 100.0, np.random.default_rng(4))
    assert [j.id for j in arrivals] == ["a", "b", "c"]
    assert 0 < arrivals[0].arrival_s < arrivals[1].arrival_s < arrivals[2].arrival_s


def test_trace_arrivals_are_shifted_to_start_at_zero_in_order() -> None:
    recorded = [job("x", arrival_s=500.0), job("y", arrival_s=200.0), job("z", arrival_s=200.0)]
    shifted = trace(recorded)
    assert [(j.id, j.arrival_s) for j in shifted] == [("y", 0.0), ("z", 0.0), ("x", 300.0)]
    spec = ArrivalSpec()
    assert assign_arrivals(recorded, spec, 10.0, np.random.default_rng(0)) == shifted
    assert trace([]) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("17x@3600s+1800s", (17.0, 3600.0, 1800.0)),
        ("2.5x@1h+30m", (2.5, 3600.0, 1800.0)),
        ("3x@90+10", (3.0, 90.0, 10.0)),
        ("0x@1h30m+15m", (0.0, 5400.0, 900.0)),
    ],
)
def test_burst_texts(text: str, expected: tuple[float, float, float]) -> None:
    burst = Burst.parse(text)
    assert (burst.factor, burst.start_s, burst.duration_s) == expected
    assert Burst.parse(str(burst)) == burst


@pytest.mark.parametrize("text", ["", "17@3600s+1800s", "x@1s+1s", "17x@3600s", "17x@-5s+10s",
                                  "17x@3600s+0s", "17x@3600q+1s", "17x@abc+1s", "-2x@1s+1s",
                                  "17x3600s+1800s",
                                  # not finite, or not ASCII digits (issue 14)
                                  "9" * 400 + "x@1s+1s", "2x@inf+1s", "2x@1s+nan",
                                  "2x@1e999+1s", "\u0663x@1s+1s"])
def test_bad_burst_text_is_a_spec_error(text: str) -> None:
    with pytest.raises(SpecError):
        Burst.parse(text)


@pytest.mark.parametrize(
    ("arrival", "load", "bursts"),
    [
        ("uniform", 0.8, []),
        ("poisson", 0.0, []),
        ("poisson", float("nan"), []),
        ("trace", 0.8, ["17x@3600s+1800s"]),
        ("poisson", 0.8, ["2x@0s+100s", "3x@50s+100s"]),
    ],
)
def test_bad_arrival_options_are_spec_errors(arrival: str, load: float,
                                             bursts: list[str]) -> None:
    with pytest.raises(SpecError):
        ArrivalSpec.from_options(arrival, load, bursts)


def test_jobs_without_work_cannot_set_a_rate() -> None:
    with pytest.raises(SpecError, match="mean job work"):
        poisson([job("idle", cpu=0.0)], 0.8, 10.0, np.random.default_rng(0))
