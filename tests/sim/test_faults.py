from __future__ import annotations

import numpy as np
import pytest

from dagpilot.core.config import FaultSettings, StorageQosSettings
from dagpilot.sim.faults import FAULT_CAUSES, next_iops_change, next_outage


def test_outages_are_seeded_and_after_the_given_time() -> None:
    settings = FaultSettings(rate_per_node_hour=2.0, mean_duration_s=60.0)
    first = [next_outage(np.random.default_rng(3), 100.0, settings) for _ in range(2)]
    assert first[0] == first[1]
    rng = np.random.default_rng(4)
    outages = [next_outage(rng, 100.0, settings) for _ in range(2_000)]
    assert all(o is not None and 100.0 < o.start_s <= o.end_s for o in outages)
    starts = np.array([o.start_s - 100.0 for o in outages if o is not None])
    assert starts.mean() == pytest.approx(1_800.0, rel=0.1)  # 2 per node-hour
    assert {o.cause for o in outages if o is not None} == set(FAULT_CAUSES)


def test_no_outages_at_rate_zero() -> None:
    assert next_outage(np.random.default_rng(0), 0.0, FaultSettings(rate_per_node_hour=0)) is None


def test_pool_collapses_below_2000_iops_and_recovers_near_nominal() -> None:
    settings = StorageQosSettings(collapse_rate_per_hour=3600.0)  # collapse about every second
    rng = np.random.default_rng(1)
    change = next_iops_change(rng, 10.0, 30_000.0, False, settings)
    assert change is not None and change.collapsed
    assert 1_000.0 <= change.iops <= 2_000.0
    assert 10.0 < change.time_s < 10.0 + settings.drift_interval_s
    recovery = next_iops_change(rng, change.time_s, 30_000.0, True, settings)
    assert recovery is not None and not recovery.collapsed
    assert recovery.time_s > change.time_s
    assert 30_000.0 * 0.5 < recovery.iops < 30_000.0 * 2


def test_healthy_pool_drifts_on_its_interval() -> None:
    settings = StorageQosSettings(collapse_rate_per_hour=0.0, drift_interval_s=300.0)
    change = next_iops_change(np.random.default_rng(2), 0.0, 30_000.0, False, settings)
    assert change is not None and not change.collapsed
    assert change.time_s == 300.0
    assert change.iops != 30_000.0


def test_a_pool_with_neither_drift_nor_collapses_never_changes() -> None:
    settings = StorageQosSettings(collapse_rate_per_hour=0.0, drift_interval_s=0.0)
    assert next_iops_change(np.random.default_rng(0), 0.0, 30_000.0, False, settings) is None


class ZeroDraws:
    """A generator whose exponential draws are all 0 (numpy's can be, once in about 2**45)."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def exponential(self, scale: float) -> float:
        del scale
        return 0.0

    def __getattr__(self, name: str) -> object:
        return getattr(self._rng, name)


def test_an_outage_of_zero_draws_still_ends_after_the_time_it_was_drawn_from() -> None:
    outage = next_outage(ZeroDraws(), 500.0, FaultSettings(rate_per_node_hour=1.0))  # type: ignore[arg-type]
    assert outage is not None and outage.start_s == 500.0 and outage.end_s > 500.0


@pytest.mark.parametrize("collapsed", [False, True])
def test_an_iops_change_of_zero_draws_still_comes_after_now(collapsed: bool) -> None:
    settings = StorageQosSettings(collapse_rate_per_hour=3600.0)
    change = next_iops_change(ZeroDraws(), 1e9, 30_000.0, collapsed, settings)  # type: ignore[arg-type]
    assert change is not None and change.time_s > 1e9
