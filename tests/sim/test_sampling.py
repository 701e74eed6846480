"""The scrape grid and the bound on a run's samples (sim/sampling.py): a quiet stretch costs
two ticks however long it is, and a run that stays busy ends at MAX_SAMPLES samples, so no
input the loaders accept can make a run sample without end (issue 14, defect 4)."""

from __future__ import annotations

import logging

import pytest

from dagpilot.core.config import FaultSettings, StorageQosSettings
from dagpilot.sim import simulate
from dagpilot.sim.sampling import last_tick_before, next_tick
from tests.sim.helpers import FirstFit, cluster, job, node, settings, task

# No background processes: only the jobs and the scrapes make events.
STILL = settings(storage=StorageQosSettings(collapse_rate_per_hour=0.0, drift_interval_s=0.0),
                 faults=FaultSettings(rate_per_node_hour=0.0), sample_interval_s=15.0)


@pytest.mark.parametrize(("time_s", "interval_s", "tick"), [
    (31.0, 15.0, 2), (30.0, 15.0, 1), (10.0, 15.0, 0), (0.0, 15.0, 0), (1e9, 15.0, 66666666),
    (0.3, 0.1, 2),  # 3 x 0.1 is 0.30000000000000004, not below 0.3
    (0.30000000000000004, 0.1, 2), (0.31, 0.1, 3),
])
def test_the_last_tick_before_a_time(time_s: float, interval_s: float, tick: int) -> None:
    assert last_tick_before(time_s, interval_s) == tick
    assert tick * interval_s < time_s or tick == 0
    assert (tick + 1) * interval_s >= time_s


def test_the_next_tick_jumps_only_through_a_quiet_stretch() -> None:
    assert next_tick(4, 15.0, None) == 5
    assert next_tick(4, 15.0, float("inf")) == 5
    assert next_tick(4, 15.0, 80.0) == 5  # the next tick is already the last before it
    assert next_tick(4, 15.0, 3000.0) == 199


def test_a_job_arriving_after_a_billion_seconds_costs_two_ticks_not_sixty_million() -> None:
    jobs = [job("early", task("a", 20.0)), job("late", task("b", 20.0), arrival_s=1e9)]
    record = simulate(jobs, cluster(node("n")), FirstFit(), STILL, seed=0)
    assert [j.finish_s for j in record.jobs] == [20.0, 1e9 + 20.0]
    assert len(record.samples) < 20 and record.events < 50
    times = [sample.time_s for sample in record.samples]
    # the tick after "early" ended and the last before "late" arrives; nothing between
    assert 30.0 in times and 999_999_990.0 in times
    gap = [s for s in record.samples if 30.0 <= s.time_s <= 999_999_990.0]
    assert [s.time_s for s in gap] == [30.0, 999_999_990.0]
    assert gap[0].pending == gap[1].pending == gap[0].running == gap[1].running == 0


def test_a_short_quiet_stretch_is_sampled_tick_by_tick() -> None:
    jobs = [job("early", task("a", 20.0)), job("late", task("b", 20.0), arrival_s=50.0)]
    record = simulate(jobs, cluster(node("n")), FirstFit(), STILL, seed=0)
    times = [sample.time_s for sample in record.samples]
    assert [time for time in times if time % 15.0 == 0.0] == [0.0, 15.0, 30.0, 45.0, 60.0]


def test_a_run_that_stays_busy_ends_at_its_last_sample(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr("dagpilot.sim.simulation.MAX_SAMPLES", 200)
    long = [job("long", task("a", 365 * 86_400.0))]
    with caplog.at_level(logging.WARNING, logger="dagpilot.sim.simulation"):
        record = simulate(long, cluster(node("n")), FirstFit(), STILL, seed=0)
    assert len(record.samples) == 200
    assert record.end_s == 199 * 15.0  # the 200th tick
    assert record.jobs[0].finish_s is None
    assert [pod.outcome for pod in record.pods] == ["unfinished"]
    assert "took the most samples a run records (200" in caplog.text
